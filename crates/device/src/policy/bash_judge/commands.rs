//! What one simple command is: never allowed (the hardline), read-only, a change, or something the
//! judge cannot see through; and the commands it runs in turn (`env`, `xargs`, `bash -c`, `eval`…).

use std::path::{Path, PathBuf};

use super::assessment::{Assessment, Class, Inner, Scope, steering};
use super::builtins;
use super::file_args;
use super::paths::catastrophic;
use super::places::{self, Reach};
use super::readers;
use super::vars::UNKNOWN;
use super::walk::{Arg, name_of};

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
    let name = name_of(first);
    let mut assessment = assess_named(&name, args, scope);
    // `PAGER=… git log`, `LD_PRELOAD=… ls`: the variable decides what really runs. `IFS= read`
    // only splits read's own input.
    let steered = assigns
        .iter()
        .any(|a| steering(a) && !(a == "IFS" && name == "read"));
    if assessment.class == Class::ReadOnly && steered {
        assessment.class = Class::Changes;
    }
    // A wrapper's or a shell's `-c` words are a command judged on its own, files and all.
    let wrapped = WRAPPERS.contains(&name.as_str())
        || (SHELLS.contains(&name.as_str()) && !assessment.inner.is_empty());
    let reads = file_args::reads(&name, args, wrapped, scope.home);
    let reach = reads
        .iter()
        .map(|r| places::reach(&r.arg, r.recursive, scope))
        .max()
        .unwrap_or(Reach::Free);
    assessment.class = with_reach(assessment.class, reach, &name);
    assessment
}

/// A command's class once the files it reads are known: a protected one is never read; one
/// under the home folder outside the roots, or one the judge cannot place, is not read unasked.
/// A path relative to a folder only known when the line runs only makes a reading command ask:
/// every other command asks in manual and edit mode anyway.
fn with_reach(class: Class, reach: Reach, name: &str) -> Class {
    match (class, reach) {
        (class @ Class::Hardline(_), _) => class,
        (_, Reach::Protected(what)) => Class::Hardline(format!(
            "`{name}` would read {what}: a protected path is never read for a remote session."
        )),
        (class @ Class::Opaque(_), _) => class,
        (Class::ReadOnly, Reach::Unplaced(why)) | (_, Reach::OutsideRoots(why) | Reach::Unknown(why)) => {
            Class::Opaque(why)
        }
        (class, _) => class,
    }
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
        _ => readers::assess(name, args, scope),
    }
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
        .flat_map(|a| scope.resolve_all(a))
        .find(|p| scope.protected.protects(p))
}

fn writes_protected(name: &str, args: &[Arg], scope: &Scope) -> Option<Class> {
    if let Some(hit) = protected_arg(args, scope) {
        return Some(Class::Hardline(format!(
            "`{name}` would change {}, a protected path.",
            hit.display()
        )));
    }
    non_options(args)
        .flat_map(|a| scope.resolve_all(a))
        .any(|p| in_agent_folder(&p, scope))
        .then(|| Class::Opaque(AGENT_FOLDER.into()))
}

/// docs/protocol.md "Paths": a write under `<project>/.agent/` (commands and skills, prompts a person
/// runs later with a mode of their own) asks in every mode.
pub const AGENT_FOLDER: &str =
    "a write under the project's .agent folder (commands and skills a person runs later)";

pub fn in_agent_folder(path: &Path, scope: &Scope) -> bool {
    path.starts_with(scope.folder.join(".agent"))
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
        let paths = scope.resolve_all(&Arg {
            text: target.to_string(),
            dynamic: arg.dynamic,
        });
        if let Some(path) = paths.into_iter().find(|p| scope.protected.protects(p)) {
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
            let all = scope.resolve_all(target);
            if let Some(path) = all.into_iter().find(|p| catastrophic(p, scope.home, scope.roots)) {
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
            .flat_map(|a| scope.resolve_all(a))
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

/// `env [-i] [-u NAME] [NAME=value…] [command…]`; `env -S 'cmd args'` (`-S'…'`,
/// `--split-string=…`) splits a script; `env -C DIR` runs the command in another folder, where the
/// judge cannot place its relative paths.
fn env(args: &[Arg]) -> Assessment {
    let mut i = 0;
    let mut steered = false;
    let mut elsewhere = false;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        let split = match text {
            "-S" | "--split-string" => Some(args.get(i + 1)),
            _ => text
                .strip_prefix("--split-string=")
                .or_else(|| text.strip_prefix("-S").filter(|rest| !rest.is_empty()))
                .map(|_| Some(arg)),
        };
        if let Some(script) = split {
            let attached = |a: &Arg| {
                let t = a.text.as_str();
                t.strip_prefix("--split-string=")
                    .or_else(|| t.strip_prefix("-S"))
                    .unwrap_or(t)
                    .to_string()
            };
            return match script {
                Some(script) if !script.dynamic => Assessment::running(Inner::Script(attached(script))),
                _ => Assessment::of(Class::Opaque("`env -S` of text only known when it runs".into())),
            };
        }
        if ["-C", "--chdir"].contains(&text) || text.starts_with("--chdir=") || text.starts_with("-C") {
            elsewhere = true;
        }
        if ["-u", "--unset", "-C", "--chdir"].contains(&text) {
            i += 2;
        } else if text == "--" {
            i += 1;
            break;
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
    let class = if elsewhere && !rest.is_empty() {
        Class::Opaque("`env -C`: a command run in another folder".into())
    } else if steered {
        Class::Changes
    } else {
        Class::ReadOnly
    };
    let inner = if rest.is_empty() {
        Vec::new()
    } else {
        vec![Inner::Words(rest.to_vec())]
    };
    Assessment { class, inner }
}

/// The command xargs runs gets words from standard input: they are only known when it runs; so is
/// every word holding the `-I`/`-i`/`--replace` string (`xargs -I% sh -c 'cat %'` runs the input).
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
    ];
    let mut replace: Option<String> = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if text == "-I" {
            replace = args.get(i + 1).map(|a| a.text.clone());
        } else if let Some(r) = text.strip_prefix("--replace") {
            replace = Some(r.strip_prefix('=').unwrap_or("{}").to_string());
        } else if let Some(r) = text.strip_prefix("-I").or_else(|| text.strip_prefix("-i")) {
            replace = Some(if r.is_empty() { "{}".into() } else { r.to_string() });
        }
        if with_value.contains(&text) {
            i += 2;
        } else if text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let unknown = || Arg {
        text: UNKNOWN.to_string(),
        dynamic: true,
    };
    let mut words: Vec<Arg> = args[i.min(args.len())..]
        .iter()
        .map(|a| match &replace {
            Some(r) if !r.is_empty() && a.text.contains(r.as_str()) => unknown(),
            _ => a.clone(),
        })
        .collect();
    if words.is_empty() {
        words.push(Arg::literal("echo"));
    }
    words.push(unknown());
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
