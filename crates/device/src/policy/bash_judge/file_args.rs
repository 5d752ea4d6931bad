//! Which words of a command name files it reads: every argument of every command, option values
//! included (`date -f FILE`, `--file=FILE`, `xargs -a FILE`, curl's `@FILE`, dd's `if=FILE`), except
//! where the word is known to be something else: a search pattern, a program text, a format, a
//! command a wrapper runs (judged as a command of its own). A command not listed here is taken to
//! read every word that can be a path: a protected one is denied whatever the command.

use std::path::Path;

use super::places::spelled;
use super::walk::Arg;

/// A path a command reads; `recursive`: with everything under it.
pub struct Read {
    pub arg: Arg,
    pub recursive: bool,
}

/// Commands whose words are no files they read: text they print, names they look up, shell
/// state, or a command they run (judged on its own). `cd`/`pushd` move the line (`cwd`); `test`
/// looks at a file's metadata, never its content.
const NO_FILES: [&str; 52] = [
    "echo",
    "printf",
    "basename",
    "dirname",
    "which",
    "type",
    "command",
    "true",
    "false",
    ":",
    "sleep",
    "cd",
    "pushd",
    "popd",
    "test",
    "[",
    "exit",
    "return",
    "shift",
    "wait",
    "break",
    "continue",
    "set",
    "local",
    "export",
    "unset",
    "read",
    "let",
    "declare",
    "typeset",
    "readonly",
    "shopt",
    "alias",
    "unalias",
    "hash",
    "trap",
    "kill",
    "id",
    "whoami",
    "uname",
    "pwd",
    "env",
    "eval",
    "watch",
    "seq",
    "tr",
    "realpath",
    "readlink",
    "printenv",
    "getopts",
    "mapfile",
    "readarray",
];

/// Options whose value is a glob of names to search or skip, not a file (`--exclude=.env`).
const PATTERN_OPTIONS: [&str; 8] = [
    "--exclude",
    "--include",
    "--exclude-dir",
    "--glob",
    "--iglob",
    "--pre-glob",
    "--type-add",
    "--regexp",
];

/// The files `name` reads given `args`; `wrapped`: the command only runs another one (`nice`,
/// `timeout`, a shell's `-c`…), whose words are judged where that one is.
pub fn reads(name: &str, args: &[Arg], wrapped: bool, home: &Path) -> Vec<Read> {
    if wrapped || NO_FILES.contains(&name) {
        return Vec::new();
    }
    match name {
        "find" => find(args),
        "grep" | "egrep" | "fgrep" | "rg" => search(name, args, home),
        "ls" | "tree" | "du" => listing(name, args, home),
        "git" => git(args, home),
        "date" => values_of(args, &["-f", "--file", "-r", "--reference"], home),
        "xargs" => values_of(args, &["-a", "--arg-file"], home),
        "jq" | "awk" | "gawk" | "sed" | "perl" => after_program(args, home),
        _ => every_word(args, home),
    }
}

fn read(text: &str, dynamic: bool, recursive: bool, home: &Path) -> Read {
    Read {
        arg: Arg {
            text: spelled(text, home),
            dynamic,
        },
        recursive,
    }
}

/// The paths one word may name: a positional word and what follows its `=`; an option's value
/// after `=`, or attached to a short option when it looks like a path (`-f/x`, `-f~/x`).
fn candidates(arg: &Arg, positional: bool, home: &Path) -> Vec<Read> {
    let text = arg.text.as_str();
    if text.contains("://") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let value = text.split_once('=');
    if positional {
        out.push(read(text, arg.dynamic, false, home));
    } else if value.is_some_and(|(key, _)| PATTERN_OPTIONS.contains(&key)) {
        return out;
    } else if value.is_none() && !text.starts_with("--") {
        let attached = text.get(2..).unwrap_or("");
        if attached.contains('/') || attached.starts_with(['.', '~']) {
            out.push(read(attached, arg.dynamic, false, home));
        }
    }
    if let Some((_, value)) = value.filter(|(_, v)| !v.is_empty()) {
        out.push(read(value, arg.dynamic, false, home));
    }
    out
}

/// Every word, options' values too; after `--` every word is positional.
fn every_word(args: &[Arg], home: &Path) -> Vec<Read> {
    let mut positional_only = false;
    let mut out = Vec::new();
    for arg in args {
        if arg.text == "--" && !positional_only {
            positional_only = true;
            continue;
        }
        let positional = positional_only || !arg.text.starts_with('-') || arg.text == "-";
        out.extend(candidates(arg, positional, home));
    }
    out
}

/// `find ROOT… EXPRESSION`: the roots are read whole; the expression's words are tests and
/// names (`-name .env`), not files (its `-exec` command is judged on its own).
fn find(args: &[Arg]) -> Vec<Read> {
    let mut i = 0;
    // -H, -L, -P, -D debugopts, -Olevel come before the roots.
    while let Some(arg) = args.get(i) {
        match arg.text.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let roots: Vec<Read> = args[i.min(args.len())..]
        .iter()
        .take_while(|a| !(a.text.starts_with('-') || a.text == "(" || a.text == "!"))
        .map(|a| Read {
            arg: a.clone(),
            recursive: true,
        })
        .collect();
    if roots.is_empty() { here(true) } else { roots }
}

/// The folder the command runs in, read (ls, rg and find with no path).
fn here(recursive: bool) -> Vec<Read> {
    vec![Read {
        arg: Arg::literal("."),
        recursive,
    }]
}

/// Options of the search tools whose value is the next word (never a file but for `-f`, read
/// apart). grep's `-r` is "recursive", rg's is "replace".
const GREP_VALUES: [&str; 8] = ["-e", "--regexp", "-A", "-B", "-C", "-m", "-d", "-D"];
const RG_VALUES: [&str; 23] = [
    "-e",
    "--regexp",
    "-g",
    "--glob",
    "--iglob",
    "-t",
    "--type",
    "-T",
    "--type-not",
    "-r",
    "--replace",
    "-A",
    "-B",
    "-C",
    "-m",
    "-M",
    "-j",
    "-d",
    "--max-depth",
    "--pre",
    "--pre-glob",
    "-E",
    "--type-add",
];

/// `grep [-r] PATTERN [FILE…]`, `rg PATTERN [PATH…]`: the first word is the pattern unless `-e` or
/// `-f` gave it; `-f FILE` reads a file. rg and `grep -r` read folders whole, the current one when
/// no path is given.
fn search(name: &str, args: &[Arg], home: &Path) -> Vec<Read> {
    let valued: &[&str] = if name == "rg" { &RG_VALUES } else { &GREP_VALUES };
    let recursive = name == "rg"
        || args.iter().take_while(|a| a.text != "--").any(|a| {
            let t = a.text.as_str();
            t == "--recursive"
                || t == "--dereference-recursive"
                || t == "--directories=recurse"
                || (t.starts_with('-') && !t.starts_with("--") && t.contains(['r', 'R']))
        });
    let mut out = Vec::new();
    let mut pattern_given = false;
    let mut positionals = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        let t = arg.text.as_str();
        i += 1;
        if options_done || !t.starts_with('-') || t == "-" {
            positionals.push(arg);
            continue;
        }
        if t == "--" {
            options_done = true;
        } else if t == "-f" || t == "--file" {
            pattern_given = true;
            if let Some(file) = args.get(i) {
                out.push(read(&file.text, file.dynamic, false, home));
            }
            i += 1;
        } else if let Some(file) = t.strip_prefix("--file=") {
            pattern_given = true;
            out.push(read(file, arg.dynamic, false, home));
        } else if valued.contains(&t) {
            pattern_given |= t == "-e" || t == "--regexp";
            i += 1;
        } else {
            pattern_given |= t.starts_with("-e") || t.starts_with("--regexp=");
            out.extend(candidates(arg, false, home));
        }
    }
    let paths = &positionals[usize::from(!pattern_given).min(positionals.len())..];
    for path in paths {
        out.push(read(&path.text, path.dynamic, recursive, home));
    }
    if paths.is_empty() && recursive {
        out.extend(here(true));
    }
    out
}

/// `ls` (recursive with `-R`), `tree` and `du` (always): the current folder when no path is given.
fn listing(name: &str, args: &[Arg], home: &Path) -> Vec<Read> {
    let recursive = name != "ls"
        || args.iter().any(|a| {
            a.text == "--recursive"
                || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('R'))
        });
    let mut out: Vec<Read> = every_word(args, home);
    let positional = args.iter().any(|a| !a.text.starts_with('-'));
    for r in out.iter_mut() {
        r.recursive = recursive;
    }
    if !positional {
        out.extend(here(recursive));
    }
    out
}

/// git reads its repository (judged in `readers`); the files it is named are paths after `--`,
/// every path with `--no-index`, the path of `REV:path`, and words that look like paths.
fn git(args: &[Arg], home: &Path) -> Vec<Read> {
    let no_index = args.iter().any(|a| a.text == "--no-index");
    let mut after_dashes = false;
    let mut out = Vec::new();
    for arg in args {
        let t = arg.text.as_str();
        if t == "--" {
            after_dashes = true;
            continue;
        }
        if t.starts_with('-') && !after_dashes {
            continue;
        }
        let path_like = t.contains('/') || t.starts_with(['.', '~']);
        if after_dashes || no_index || path_like {
            out.push(read(t, arg.dynamic, false, home));
        }
        if let Some((_, path)) = t.split_once(':').filter(|(_, p)| !p.is_empty()) {
            out.push(read(path, arg.dynamic, false, home));
        }
    }
    out
}

/// The values of the listed options only (`date -f FILE`, `--file=FILE`, `-fFILE`).
fn values_of(args: &[Arg], options: &[&str], home: &Path) -> Vec<Read> {
    let mut out = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let t = arg.text.as_str();
        for option in options {
            if t == *option {
                if let Some(value) = args.get(i + 1) {
                    out.push(read(&value.text, value.dynamic, false, home));
                }
            } else if let Some(value) = t.strip_prefix(option) {
                let value = if option.starts_with("--") {
                    value.strip_prefix('=')
                } else {
                    Some(value)
                };
                if let Some(value) = value.filter(|v| !v.is_empty()) {
                    out.push(read(value, arg.dynamic, false, home));
                }
            }
        }
    }
    out
}

/// `jq FILTER FILE…`, `awk PROGRAM FILE…`, `sed SCRIPT FILE…`: the first word is the program,
/// unless `-e`/`-f` gave it.
fn after_program(args: &[Arg], home: &Path) -> Vec<Read> {
    let given = args.iter().any(|a| {
        ["-e", "-f", "--expression", "--file", "--from-file"]
            .iter()
            .any(|o| a.text == *o || a.text.starts_with(&format!("{o}=")))
    });
    let first = args.iter().position(|a| !a.text.starts_with('-'));
    let rest: Vec<Arg> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| given || Some(*i) != first)
        .map(|(_, a)| a.clone())
        .collect();
    every_word(&rest, home)
}
