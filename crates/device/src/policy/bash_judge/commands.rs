//! What one simple command is: never allowed (the hardline), read-only, a change, or something the
//! judge cannot see through; and the commands it runs in turn (`env`, `xargs`, `bash -c`, `eval`…).

use std::path::{Path, PathBuf};

use super::builtins;
use super::paths::{catastrophic, resolve};
use super::readers;
use super::walk::{Arg, UNKNOWN};
use crate::policy::protected::protected;

#[derive(Debug, Clone, PartialEq)]
pub enum Class {
    ReadOnly,
    Changes,
    /// Not even the person's rules can allow it; the sentence says why.
    Hardline(String),
    /// What runs is only known at run time; the sentence says what is hidden.
    Opaque(String),
}

/// A command run by another one, judged as a command of its own.
pub enum Inner {
    Words(Vec<Arg>),
    Script(String),
}

pub struct Assessment {
    pub class: Class,
    pub inner: Vec<Inner>,
}

impl Assessment {
    fn of(class: Class) -> Assessment {
        Assessment {
            class,
            inner: Vec::new(),
        }
    }
    fn running(inner: Inner) -> Assessment {
        Assessment {
            class: Class::ReadOnly,
            inner: vec![inner],
        }
    }
}

pub struct Scope<'a> {
    pub folder: &'a Path,
    pub home: &'a Path,
    pub roots: &'a [PathBuf],
    pub functions: &'a [String],
}

const NEVER: [&str; 8] = [
    "sudo", "su", "doas", "pkexec", "shutdown", "reboot", "halt", "poweroff",
];
const SHELLS: [&str; 6] = ["bash", "sh", "zsh", "dash", "ksh", "fish"];
/// Run the rest of their words as a command, after their own options (which take no value unless
/// listed in `wrapper_options`).
const WRAPPERS: [&str; 13] = [
    "busybox", "nice", "nohup", "timeout", "command", "exec", "builtin", "stdbuf", "time", "setsid",
    "ionice", "chrt", "unbuffer",
];
/// Environment variables that change what a command runs or loads, or where a path the judge
/// reads lexically lands (`HOME` for `~`, `CDPATH` for `cd`); `PS4` is expanded, substitutions
/// and all, by `set -x`.
const STEERING: [&str; 21] = [
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "HOME",
    "CDPATH",
    "LESSOPEN",
    "LESSCLOSE",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "PERL5OPT",
    "RUBYOPT",
    "RIPGREP_CONFIG_PATH",
];

pub fn steering(name: &str) -> bool {
    name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_")
        || name.starts_with("BASH_FUNC")
        || STEERING.contains(&name)
        || name.contains("PAGER")
        || name.contains("EDITOR")
}

/// The command's name as bash finds it: `/usr/bin/sudo` is `sudo`; and in lower case, because a
/// case-insensitive file system (macOS, Windows) finds `SUDO` as `sudo`.
pub fn name_of(word: &Arg) -> String {
    word.text.rsplit('/').next().unwrap_or(&word.text).to_lowercase()
}

pub fn assess(words: &[Arg], assigns: &[String], scope: &Scope) -> Assessment {
    let Some((first, args)) = words.split_first() else {
        // `PATH=/tmp/x; ls`: an assignment alone steers every command after it.
        if assigns.iter().any(|a| steering(a)) {
            return Assessment::of(Class::Changes);
        }
        return Assessment::of(Class::ReadOnly);
    };
    if first.dynamic {
        return Assessment::of(Class::Opaque(
            "the command's name is only known when it runs".into(),
        ));
    }
    let mut assessment = assess_named(&name_of(first), args, scope);
    // `PAGER=… git log`, `LD_PRELOAD=… ls`: the variable decides what really runs.
    if assessment.class == Class::ReadOnly && assigns.iter().any(|a| steering(a)) {
        assessment.class = Class::Changes;
    }
    assessment
}

fn assess_named(name: &str, args: &[Arg], scope: &Scope) -> Assessment {
    if NEVER.contains(&name) {
        return Assessment::of(Class::Hardline(format!(
            "`{name}` is never allowed on this computer."
        )));
    }
    if name.starts_with("mkfs") {
        return Assessment::of(Class::Hardline(format!(
            "`{name}` formats a disk and is never allowed."
        )));
    }
    match name {
        "init" | "telinit" if args.iter().any(|a| a.text == "0" || a.text == "6") => {
            Assessment::of(Class::Hardline(format!("`{name}` would stop this computer.")))
        }
        "systemctl"
            if args
                .iter()
                .any(|a| ["poweroff", "reboot", "halt", "kexec"].contains(&a.text.as_str())) =>
        {
            Assessment::of(Class::Hardline("`systemctl` would stop this computer.".into()))
        }
        "dd" => dd(args, scope),
        "rm" | "rmdir" | "unlink" | "shred" => remove(name, args, scope),
        "chmod" | "chown" | "chgrp" => ownership(name, args, scope),
        "cp" | "mv" | "install" | "ln" | "touch" | "mkdir" | "truncate" | "tee" | "sed" | "perl"
        | "rsync" => Assessment::of(writes_protected(name, args, scope).unwrap_or(Class::Changes)),
        "eval" => match script_of(args) {
            Some(script) => Assessment::running(Inner::Script(script)),
            None => Assessment::of(Class::Opaque("`eval` of text only known when it runs".into())),
        },
        "env" => env(args),
        "xargs" => xargs(args),
        // `watch 'cmd'` runs its words as a script, again and again.
        "watch" => {
            let with_value = ["-n", "--interval", "-d", "--differences"];
            let mut i = 0;
            while args.get(i).is_some_and(|a| a.text.starts_with('-')) {
                i += if with_value.contains(&args[i].text.as_str()) {
                    2
                } else {
                    1
                };
            }
            match script_of(&args[i.min(args.len())..]) {
                Some(script) => Assessment::running(Inner::Script(script)),
                None => Assessment::of(Class::Opaque("`watch` of text only known when it runs".into())),
            }
        }
        "source" | "." => Assessment::of(Class::Changes),
        _ if builtins::BUILTINS.contains(&name) => Assessment::of(builtins::assess(name, args, scope)),
        _ if SHELLS.contains(&name) => shell(name, args),
        _ if WRAPPERS.contains(&name) => wrapper(name, args),
        // A function of the line: its body is judged where it is defined. Only here, after the
        // commands above, so `rm() {…}; command rm -rf /` cannot hide behind a function's name.
        _ if scope.functions.iter().any(|f| f == name) => Assessment::of(Class::ReadOnly),
        _ if readers::SHOW_FILES.contains(&name) => match reads_protected(name, args, scope) {
            Some(refused) => Assessment::of(refused),
            None => readers::assess(name, args),
        },
        _ => readers::assess(name, args),
    }
}

/// `cat .env`, `grep -r key ~/.ssh`: a file the file tools never read is not shown through bash
/// either. Lexical, as the rest of the judge: a path only known at run time is not caught here.
fn reads_protected(name: &str, args: &[Arg], scope: &Scope) -> Option<Class> {
    let hit = protected_arg(args, scope)?;
    Some(Class::Hardline(format!(
        "`{name}` would show {}, a protected path: it is never read for a remote session.",
        hit.display()
    )))
}

/// The literal words of `args` joined as one script, or `None` when any is only known at run time.
fn script_of(args: &[Arg]) -> Option<String> {
    if args.iter().any(|a| a.dynamic) {
        return None;
    }
    Some(args.iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" "))
}

fn non_options(args: &[Arg]) -> impl Iterator<Item = &Arg> {
    let end = args.iter().position(|a| a.text == "--");
    let (before, after) = match end {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &args[args.len()..]),
    };
    before
        .iter()
        .filter(|a| !a.text.starts_with('-') || a.text == "-")
        .chain(after)
}

/// The first of a command's path words that names a protected path.
fn protected_arg(args: &[Arg], scope: &Scope) -> Option<PathBuf> {
    non_options(args)
        .filter_map(|a| resolve(a, scope.folder))
        .find(|p| protected(p, scope.home))
}

fn writes_protected(name: &str, args: &[Arg], scope: &Scope) -> Option<Class> {
    let hit = protected_arg(args, scope)?;
    Some(Class::Hardline(format!(
        "`{name}` would change {}, a protected path.",
        hit.display()
    )))
}

fn dd(args: &[Arg], scope: &Scope) -> Assessment {
    for arg in args {
        let Some(target) = arg.text.strip_prefix("of=") else {
            continue;
        };
        if target.starts_with("/dev/") && target != "/dev/null" {
            return Assessment::of(Class::Hardline(format!(
                "`dd` onto the device {target} is never allowed."
            )));
        }
        let path = resolve(
            &Arg {
                text: target.to_string(),
                dynamic: arg.dynamic,
            },
            scope.folder,
        );
        if let Some(path) = path.filter(|p| protected(p, scope.home)) {
            return Assessment::of(Class::Hardline(format!(
                "`dd` would change {}, a protected path.",
                path.display()
            )));
        }
    }
    Assessment::of(Class::Changes)
}

/// Short options may be bundled (`-rf`, `-fR`); long ones spelled out.
fn has_flag(args: &[Arg], short: &[char], long: &str) -> bool {
    args.iter().take_while(|a| a.text != "--").any(|a| {
        a.text == long
            || (a.text.starts_with('-')
                && !a.text.starts_with("--")
                && a.text.chars().skip(1).any(|c| short.contains(&c)))
    })
}

fn remove(name: &str, args: &[Arg], scope: &Scope) -> Assessment {
    let recursive = name == "rm" && has_flag(args, &['r', 'R'], "--recursive");
    let targets: Vec<&Arg> = non_options(args).collect();
    if recursive {
        // Recursive removal of these is never allowed, with or without -f: -f only silences prompts.
        for target in &targets {
            if let Some(path) =
                resolve(target, scope.folder).filter(|p| catastrophic(p, scope.home, scope.roots))
            {
                return Assessment::of(Class::Hardline(format!(
                    "`rm -r` of {} is never allowed on this computer.",
                    path.display()
                )));
            }
        }
        if targets.iter().any(|t| t.dynamic) {
            return Assessment::of(Class::Opaque("`rm -r` of a path only known when it runs".into()));
        }
    }
    Assessment::of(writes_protected(name, args, scope).unwrap_or(Class::Changes))
}

fn ownership(name: &str, args: &[Arg], scope: &Scope) -> Assessment {
    if has_flag(args, &['R'], "--recursive") {
        let everything = non_options(args)
            .filter_map(|a| resolve(a, scope.folder))
            .find(|p| p == Path::new("/") || p == scope.home);
        if let Some(path) = everything {
            return Assessment::of(Class::Hardline(format!(
                "`{name} -R` of {} is never allowed.",
                path.display()
            )));
        }
    }
    Assessment::of(writes_protected(name, args, scope).unwrap_or(Class::Changes))
}

/// `env [-i] [-u NAME] [NAME=value…] [command…]`; `env -S 'cmd args'` splits a script.
fn env(args: &[Arg]) -> Assessment {
    let mut i = 0;
    let mut steered = false;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if text == "-S" || text == "--split-string" {
            return match args.get(i + 1) {
                Some(script) if !script.dynamic => Assessment::running(Inner::Script(script.text.clone())),
                _ => Assessment::of(Class::Opaque("`env -S` of text only known when it runs".into())),
            };
        } else if ["-u", "--unset", "-C", "--chdir"].contains(&text) {
            i += 2;
        } else if text.starts_with('-') {
            i += 1;
        } else if let Some((name, _)) = text.split_once('=') {
            steered |= steering(name) || arg.dynamic;
            i += 1;
        } else {
            break;
        }
    }
    let rest = &args[i.min(args.len())..];
    let class = if steered { Class::Changes } else { Class::ReadOnly };
    let inner = if rest.is_empty() {
        Vec::new()
    } else {
        vec![Inner::Words(rest.to_vec())]
    };
    Assessment { class, inner }
}

/// The command xargs runs gets words from standard input: they are only known when it runs.
fn xargs(args: &[Arg]) -> Assessment {
    let with_value = [
        "-I",
        "-n",
        "-P",
        "-L",
        "-d",
        "-E",
        "-s",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-lines",
        "--replace",
    ];
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if with_value.contains(&arg.text.as_str()) {
            i += 2;
        } else if arg.text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let mut words = args[i.min(args.len())..].to_vec();
    if words.is_empty() {
        words.push(Arg::literal("echo"));
    }
    words.push(Arg {
        text: UNKNOWN.to_string(),
        dynamic: true,
    });
    Assessment::running(Inner::Words(words))
}

fn shell(name: &str, args: &[Arg]) -> Assessment {
    // `-c` may be bundled (`-lc`, `-ec`); the script is the first word after the options.
    let command_flag = args
        .iter()
        .take_while(|a| a.text.starts_with('-'))
        .any(|a| !a.text.starts_with("--") && a.text.contains('c') || a.text == "--command");
    if !command_flag {
        // `curl … | sh`: with no script file the shell runs whatever arrives on its input.
        let reads_input = args.iter().all(|a| a.text.starts_with('-')) || args.iter().any(|a| a.text == "-s");
        let class = if reads_input {
            Class::Opaque(format!("`{name}` running commands from its input"))
        } else {
            Class::Changes
        };
        return Assessment::of(class);
    }
    match args.iter().find(|a| !a.text.starts_with('-')) {
        Some(script) if !script.dynamic => Assessment::running(Inner::Script(script.text.clone())),
        Some(_) => Assessment::of(Class::Opaque(format!(
            "`{name} -c` of text only known when it runs"
        ))),
        None => Assessment::of(Class::ReadOnly),
    }
}

fn wrapper(name: &str, args: &[Arg]) -> Assessment {
    let with_value: &[&str] = match name {
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "exec" => &["-a"],
        "stdbuf" => &["-i", "-o", "-e"],
        "ionice" => &["-c", "-n", "-p", "-t"],
        _ => &[],
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if with_value.contains(&arg.text.as_str()) {
            i += 2;
        } else if arg.text.starts_with('-') {
            // `command -v x` only looks a name up.
            if name == "command" && (arg.text == "-v" || arg.text == "-V") {
                return Assessment::of(Class::ReadOnly);
            }
            i += 1;
        } else {
            break;
        }
    }
    // timeout's duration and chrt's priority come before the command.
    if matches!(name, "timeout" | "chrt") {
        i += 1;
    }
    let rest = &args[i.min(args.len())..];
    if rest.is_empty() {
        return Assessment::of(Class::ReadOnly);
    }
    Assessment::running(Inner::Words(rest.to_vec()))
}
