//! Shell builtins that only steer the script itself (`exit`, `set -e`, `local x=1`, `export
//! NAME=value`…): read-only, unless they change what later commands run or load, or how the judge
//! reads the line (a steering variable, a nameref, `set -a`/`-k`, a function unset). A variable's
//! name only known when the line runs (`read "$v"`, `test -v "$x"`, `unset "$x"`) may carry an
//! array subscript bash evaluates, running what is inside (`subscripts`): it is not read unasked.

use super::assessment::{Class, Scope, steering};
use super::walk::Arg;

/// The builtins this module judges.
pub const BUILTINS: [&str; 14] = [
    "exit", "return", "shift", "wait", "break", "continue", "set", "local", "export", "unset", "read",
    "printf", "test", "[",
];

fn name_unknown() -> Class {
    Class::Opaque("a variable's name only known when it runs (its subscript would run)".into())
}

pub fn assess(name: &str, args: &[Arg], scope: &Scope) -> Class {
    match name {
        "set" => set(args),
        "local" | "export" => declare(name, args),
        "unset" => unset(args, scope),
        "read" => read(args),
        "printf" => printf(args),
        "test" | "[" => test(args),
        // exit, return, shift, wait, break, continue: control flow of the script itself.
        _ => Class::ReadOnly,
    }
}

/// Short options `set` may turn on or off: errexit, nounset, xtrace, verbose, noglob, and
/// noclobber on (`-C`; turning it off asks, it lowers a guard the person chose).
const SET_LETTERS: &str = "euxvfC";
/// `set -o`/`+o` names allowed: the same, spelled long, and pipefail.
const SET_NAMES: [&str; 7] = [
    "errexit",
    "nounset",
    "xtrace",
    "verbose",
    "noglob",
    "pipefail",
    "noclobber",
];

/// `set` with only the options above (and positional parameters after `--`/`-`) is read-only;
/// anything else may change how later commands run (`-a` exports every assignment, `-k` takes
/// assignments from arguments, `-o posix`, `+C`…) and is a change.
fn set(args: &[Arg]) -> Class {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if arg.dynamic {
            return Class::Changes;
        }
        if text == "--" || text == "-" || !(text.starts_with('-') || text.starts_with('+')) {
            // The rest are positional parameters: the judge reads `$1` as unknown anyway.
            return Class::ReadOnly;
        }
        let on = text.starts_with('-');
        // `-o name` may close a bundle: `set -euo pipefail`.
        let (letters, takes_name) = match text[1..].strip_suffix('o') {
            Some(letters) => (letters, true),
            None => (&text[1..], false),
        };
        let letters_allowed = letters
            .chars()
            .all(|c| SET_LETTERS.contains(c) && (on || c != 'C'));
        if !letters_allowed || (letters.is_empty() && !takes_name) {
            return Class::Changes;
        }
        if takes_name {
            match args.get(i + 1) {
                // `set -o` alone lists the options.
                None => return Class::ReadOnly,
                Some(option) if option.dynamic => return Class::Changes,
                Some(option) if option.text == "noclobber" && !on => return Class::Changes,
                Some(option) if SET_NAMES.contains(&option.text.as_str()) => {}
                Some(_) => return Class::Changes,
            }
            i += 1;
        }
        i += 1;
    }
    Class::ReadOnly
}

/// `local`/`export` of variables that steer nothing. A steering name (PATH, LD_*…), a name only
/// known at run time, a nameref (`-n`, which makes a later plain assignment set another
/// variable), and `export -f` (a function handed to every child bash) are changes.
fn declare(name: &str, args: &[Arg]) -> Class {
    for arg in args {
        let text = arg.text.as_str();
        if let Some(options) = text.strip_prefix('-').filter(|o| !o.is_empty()) {
            let risky = match name {
                "export" => options.contains('f'),
                _ => options.contains('n'),
            };
            if risky || arg.dynamic {
                return Class::Changes;
            }
            continue;
        }
        let variable = text.split_once('=').map_or(text, |(name, _)| name);
        let plain = !variable.is_empty() && variable.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !plain || steering(variable) {
            return Class::Changes;
        }
    }
    Class::ReadOnly
}

/// `unset` of variables: read-only. Of a function (`-f`, or a name the line defines as one, which
/// plain `unset` removes when no variable has that name), a change: a call the judge read as the
/// line's function would then run a command of that name.
fn unset(args: &[Arg], scope: &Scope) -> Class {
    if args.iter().any(|a| a.dynamic) {
        return name_unknown();
    }
    let function = args
        .iter()
        .any(|a| (a.text.starts_with('-') && a.text.contains('f')) || scope.functions.contains(&a.text));
    if function { Class::Changes } else { Class::ReadOnly }
}

/// The variables a command sets, by name: one only known when it runs asks; a steering one
/// (`read PATH`, `printf -v PATH`) changes what later commands run.
fn sets(names: &[&Arg]) -> Class {
    if names.iter().any(|n| n.dynamic) {
        return name_unknown();
    }
    let steers = names.iter().any(|n| {
        let name = n.text.split('[').next().unwrap_or(&n.text);
        steering(name)
    });
    if steers { Class::Changes } else { Class::ReadOnly }
}

/// `read [-ers] [-a NAME] [-d D] [-i T] [-n N] [-N N] [-p P] [-t T] [-u FD] [NAME…]`.
fn read(args: &[Arg]) -> Class {
    const VALUED: &str = "adinNptu";
    let mut names = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        i += 1;
        if text == "--" {
            names.extend(&args[i.min(args.len())..]);
            break;
        }
        if !text.starts_with('-') || text == "-" || arg.dynamic {
            names.push(arg);
            continue;
        }
        // A bundle ends at its first letter that takes a value: the rest, or the next word.
        let letters: String = text.chars().skip(1).collect();
        if let Some(at) = letters.find(|c| VALUED.contains(c)) {
            let attached = &letters[at + 1..];
            let value = if attached.is_empty() {
                i += 1;
                args.get(i - 1)
            } else {
                None
            };
            if letters[at..].starts_with('a') {
                match value {
                    Some(v) => names.push(v),
                    None => names.push(arg),
                }
            }
        }
    }
    sets(&names)
}

/// `printf -v NAME FORMAT…` sets NAME; otherwise printf only prints.
fn printf(args: &[Arg]) -> Class {
    match args.first().map(|a| a.text.as_str()) {
        Some("-v") => match args.get(1) {
            Some(name) => sets(&[name]),
            None => Class::ReadOnly,
        },
        Some(t) if t.starts_with("-v") => sets(&[&args[0]]),
        _ => Class::ReadOnly,
    }
}

/// `test -v NAME`, `[ -R NAME ]`: the name is looked up, its subscript evaluated.
fn test(args: &[Arg]) -> Class {
    let looked_up = args
        .windows(2)
        .any(|w| (w[0].text == "-v" || w[0].text == "-R") && w[1].dynamic);
    if looked_up {
        name_unknown()
    } else {
        Class::ReadOnly
    }
}
