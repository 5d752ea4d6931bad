//! Shell builtins that only steer the script itself (`exit`, `set -e`, `local x=1`, `export
//! NAME=value`…): read-only, unless they change what later commands run or load, or how the judge
//! reads the line (a steering variable, a nameref, `set -a`/`-k`, a function unset).

use super::commands::{Class, Scope, steering};
use super::walk::Arg;

/// The builtins this module judges.
pub const BUILTINS: [&str; 10] = [
    "exit", "return", "shift", "wait", "break", "continue", "set", "local", "export", "unset",
];

pub fn assess(name: &str, args: &[Arg], scope: &Scope) -> Class {
    match name {
        "set" => set(args),
        "local" | "export" => declare(name, args),
        "unset" => unset(args, scope),
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
    let function = args.iter().any(|a| {
        a.dynamic || (a.text.starts_with('-') && a.text.contains('f')) || scope.functions.contains(&a.text)
    });
    if function { Class::Changes } else { Class::ReadOnly }
}
