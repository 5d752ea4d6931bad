//! The commands allowed in every mode because they only read (docs/protocol.md), with the options that
//! would make them write, upload or run something else.

use std::path::Path;

use super::assessment::{Assessment, Class, Inner, Scope};
use super::cwd::Folder;
use super::globs;
use super::vars::UNKNOWN;
use super::walk::Arg;

/// docs/protocol.md's list, plus harmless shell words a watch command often needs (`true`, `false`,
/// `test`, `[`, `:`, `sleep`, `cd`, `read`) and `env` without a command (handled with the wrappers).
const READ_ONLY: [&str; 42] = [
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "rg",
    "find",
    "stat",
    "file",
    "du",
    "df",
    "pwd",
    "echo",
    "printf",
    "date",
    "uname",
    "whoami",
    "id",
    "which",
    "type",
    "sha256sum",
    "md5sum",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "tree",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "jq",
    "true",
    "false",
    "test",
    "[",
    "sleep",
    "cd",
    "read",
];
const COLON: &str = ":";

pub fn assess(name: &str, args: &[Arg], scope: &Scope) -> Assessment {
    let class = match name {
        "find" => return find(args, scope),
        "rg" => return runs_option(args, "--pre"),
        "sort" => return sort(args),
        "git" => git(args, scope),
        "curl" => curl(args),
        "wget" => wget(args),
        "tree" if args.iter().any(|a| a.text == "-o") => Class::Changes,
        _ if READ_ONLY.contains(&name) || name == COLON => Class::ReadOnly,
        _ => Class::Changes,
    };
    Assessment {
        class,
        inner: Vec::new(),
    }
}

/// `rg --pre CMD`, `sort --compress-program=CMD`: the program runs with a file (only known when it
/// runs) as its argument; it is judged as a command of the line.
fn runs_option(args: &[Arg], option: &str) -> Assessment {
    let mut inner = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let program = if arg.text == option {
            args.get(i + 1).cloned()
        } else {
            arg.text
                .strip_prefix(option)
                .and_then(|rest| rest.strip_prefix('='))
                .map(|p| Arg {
                    text: p.to_string(),
                    dynamic: arg.dynamic,
                })
        };
        if let Some(program) = program {
            inner.push(Inner::Words(vec![
                program,
                Arg {
                    text: UNKNOWN.to_string(),
                    dynamic: true,
                },
            ]));
        }
    }
    Assessment {
        class: Class::ReadOnly,
        inner,
    }
}

/// sort writes with `-o FILE` (bundled too: `-uo out`) and runs `--compress-program`.
fn sort(args: &[Arg]) -> Assessment {
    let mut assessment = runs_option(args, "--compress-program");
    let writes = args.iter().any(|a| {
        let t = a.text.as_str();
        t.starts_with("--output")
            || (t.starts_with('-') && !t.starts_with("--") && short_letters(t, "kStTo").contains(&'o'))
    });
    if writes {
        assessment.class = Class::Changes;
    }
    assessment
}

/// `find` reads, unless it deletes, writes a list to a file, or runs a command per file (that
/// command is judged too, with `{}` standing for a file only known when it runs). Files it picks
/// by a name that could be protected (`-name .env`, `-name 'id_*'`) handed to a command are read.
fn find(args: &[Arg], scope: &Scope) -> Assessment {
    let mut class = Class::ReadOnly;
    let mut inner = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text.as_str();
        if ["-exec", "-execdir", "-ok", "-okdir"].contains(&text) {
            class = Class::Changes;
            let rest = &args[i + 1..];
            let end = rest
                .iter()
                .position(|a| a.text == ";" || a.text == "+")
                .unwrap_or(rest.len());
            let words = rest[..end]
                .iter()
                .map(|a| {
                    if a.text.contains("{}") {
                        Arg {
                            text: UNKNOWN.to_string(),
                            dynamic: true,
                        }
                    } else {
                        a.clone()
                    }
                })
                .collect();
            inner.push(Inner::Words(words));
            i += end + 2;
            continue;
        }
        if text == "-delete" || text.starts_with("-fprint") || text == "-fls" {
            class = Class::Changes;
        }
        i += 1;
    }
    if !inner.is_empty()
        && let Some(name) = protected_name_test(args, scope)
    {
        class = Class::Hardline(format!(
            "`find` would hand files named {name} to a command: a protected path is never read for a remote session."
        ));
    }
    Assessment { class, inner }
}

/// The first `-name`/`-path`… pattern of `find` that could match a protected path.
fn protected_name_test(args: &[Arg], scope: &Scope) -> Option<String> {
    const TESTS: [&str; 6] = ["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"];
    args.windows(2)
        .filter(|w| TESTS.contains(&w[0].text.as_str()) && !w[1].dynamic)
        .map(|w| &w[1].text)
        .find(|pattern| {
            // find's `*` matches a leading dot too; a pattern that starts with one is still not
            // taken to aim at `.env.*` (`-name '*.rs'` is an everyday search).
            let path = Path::new("/found").join(pattern.trim_start_matches("./"));
            globs::instances(&path, scope.home, false)
                .is_none_or(|all| all.iter().any(|p| scope.protected.protects(p)))
        })
        .cloned()
}

/// git runs programs its repository's config names (hooks, `core.fsmonitor`, a pager, diff
/// drivers): a read is only a read in the session's own project. So `-C` outside the session's
/// folder, `--git-dir`, `--work-tree`, `-c` (any setting), `GIT_DIR=` (a steering variable) and a
/// `cd` out of the folder make git a change; so do `--ext-diff` and `--textconv`.
fn git(args: &[Arg], scope: &Scope) -> Class {
    let in_project = |f: &Folder| matches!(f, Folder::Known(p) if p.starts_with(scope.folder));
    if !scope.folders.iter().all(in_project) {
        return Class::Changes;
    }
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.text.as_str() {
            "-C" => {
                let inside = args.get(i + 1).is_some_and(|dir| {
                    !dir.dynamic && scope.resolve_all(dir).iter().all(|p| p.starts_with(scope.folder))
                });
                if !inside {
                    return Class::Changes;
                }
                i += 2;
            }
            "--no-pager" | "-P" | "--no-optional-locks" => i += 1,
            t if t.starts_with('-') => return Class::Changes,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return Class::ReadOnly;
    };
    let rest = &args[i + 1..];
    if rest.iter().any(|a| {
        ["--output", "--ext-diff", "--textconv"]
            .iter()
            .any(|o| a.text.starts_with(o))
    }) {
        return Class::Changes;
    }
    let reads = match sub.text.as_str() {
        "status" | "log" | "diff" | "show" | "rev-parse" | "ls-files" => true,
        // Listing only: a name or -d/-m/-c… would create, delete or move a branch.
        "branch" => {
            let listing = [
                "-a",
                "--all",
                "-r",
                "--remotes",
                "-v",
                "-vv",
                "--verbose",
                "--list",
                "-l",
                "--show-current",
                "--no-color",
                "--color",
            ];
            let list_flag = rest.iter().any(|a| a.text == "--list" || a.text == "-l");
            rest.iter()
                .all(|a| listing.contains(&a.text.as_str()) || (list_flag && !a.text.starts_with('-')))
        }
        "remote" => rest.iter().all(|a| a.text == "-v" || a.text == "--verbose"),
        _ => false,
    };
    if reads { Class::ReadOnly } else { Class::Changes }
}

/// Short options bundled in one word (`-sSLo`) spelled out; a letter that takes a value ends the
/// bundle, and the value is the rest of the word or the next word.
fn short_letters(word: &str, takes_value: &str) -> Vec<char> {
    let mut letters = Vec::new();
    for c in word.chars().skip(1) {
        letters.push(c);
        if takes_value.contains(c) {
            break;
        }
    }
    letters
}

/// What follows a bundle's value-taking letter in the same word (`-XPOST`), if anything.
fn attached<'a>(word: &'a str, letters: &[char]) -> Option<&'a str> {
    let start: usize = 1 + letters.iter().map(|c| c.len_utf8()).sum::<usize>();
    word.get(start..).filter(|rest| !rest.is_empty())
}

/// An option's value: attached to its word, or else the next word (`args[i + 1]`).
fn option_value(attached: Option<&str>, args: &[Arg], i: usize) -> Option<String> {
    attached
        .map(str::to_string)
        .or_else(|| args.get(i + 1).map(|a| a.text.clone()))
}

/// curl only fetches: no upload, no form or data, no output file, no method other than GET.
fn curl(args: &[Arg]) -> Class {
    const WRITES: [&str; 12] = [
        "output",
        "remote-name",
        "remote-name-all",
        "upload-file",
        "form",
        "json",
        "dump-header",
        "cookie-jar",
        "config",
        "output-dir",
        "trace",
        "trace-ascii",
    ];
    const VALUED: &str = "oTdFDcKXHAumewbrxUEyYzC";
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text.as_str();
        if let Some(long) = text.strip_prefix("--") {
            let key = long.split('=').next().unwrap_or(long);
            if WRITES.contains(&key) || key.starts_with("data") || key.starts_with("form") {
                return Class::Changes;
            }
            if key == "request" {
                let method = option_value(long.split_once('=').map(|(_, m)| m), args, i);
                if !method.is_some_and(|m| m.eq_ignore_ascii_case("GET")) {
                    return Class::Changes;
                }
            }
        } else if text.starts_with('-') && text.len() > 1 {
            let letters = short_letters(text, VALUED);
            if letters.iter().any(|c| "oOTdFDcK".contains(*c)) {
                return Class::Changes;
            }
            if letters.last() == Some(&'X') {
                let method = option_value(attached(text, &letters), args, i);
                if !method.is_some_and(|m| m.eq_ignore_ascii_case("GET")) {
                    return Class::Changes;
                }
            }
        }
    }
    Class::ReadOnly
}

/// wget saves a file unless told to write to standard output (`-O -`) or only to check (`--spider`).
fn wget(args: &[Arg]) -> Class {
    let mut to_stdout = false;
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text.as_str();
        if text.starts_with("--post")
            || text.starts_with("--body")
            || text.starts_with("--method")
            || text.starts_with("--output-file")
            || text.starts_with("--append-output")
        {
            return Class::Changes;
        }
        if text == "--spider" || text == "--output-document=-" {
            to_stdout = true;
        } else if text.starts_with('-') && !text.starts_with("--") {
            let letters = short_letters(text, "OoaPe");
            match letters.last() {
                Some('O') => {
                    let value = option_value(attached(text, &letters), args, i);
                    if value.as_deref() != Some("-") {
                        return Class::Changes;
                    }
                    to_stdout = true;
                }
                Some('o' | 'a' | 'P' | 'e') => return Class::Changes,
                _ => {}
            }
        }
    }
    if to_stdout {
        Class::ReadOnly
    } else {
        Class::Changes
    }
}
