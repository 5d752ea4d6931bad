//! The commands allowed in every mode because they only read (DECISIONS.md), with the options that
//! would make them write, upload or run something else.

use super::commands::{Assessment, Class, Inner};
use super::walk::{Arg, UNKNOWN};

/// DECISIONS.md's list, plus harmless shell words a watch command often needs (`true`, `false`,
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

/// The read-only commands that show what is in the files (or folders) they are given: one named
/// on a protected path is denied, as a read of it by the file tools is (ENGINE.md).
pub const SHOW_FILES: [&str; 19] = [
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "rg",
    "stat",
    "file",
    "du",
    "sha256sum",
    "md5sum",
    "sort",
    "uniq",
    "cut",
    "diff",
    "cmp",
    "tree",
    "jq",
];

pub fn assess(name: &str, args: &[Arg]) -> Assessment {
    let class = match name {
        "find" => return find(args),
        "git" => git(args),
        "curl" => curl(args),
        "wget" => wget(args),
        "sort"
            if args
                .iter()
                .any(|a| a.text.starts_with("-o") || a.text.starts_with("--output")) =>
        {
            Class::Changes
        }
        "tree" if args.iter().any(|a| a.text == "-o") => Class::Changes,
        _ if READ_ONLY.contains(&name) || name == COLON => Class::ReadOnly,
        _ => Class::Changes,
    };
    Assessment {
        class,
        inner: Vec::new(),
    }
}

/// `find` reads, unless it deletes, writes a list to a file, or runs a command per file (that
/// command is judged too, with `{}` standing for a file only known when it runs).
fn find(args: &[Arg]) -> Assessment {
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
    Assessment { class, inner }
}

fn git(args: &[Arg]) -> Class {
    // Global options first; `-c` can set a pager or hook to any command.
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.text.as_str() {
            "-C" => i += 2,
            "--no-pager" | "-P" | "--no-optional-locks" => i += 1,
            t if t.starts_with("--git-dir=") || t.starts_with("--work-tree=") => i += 1,
            t if t.starts_with('-') => return Class::Changes,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return Class::ReadOnly;
    };
    let rest = &args[i + 1..];
    if rest
        .iter()
        .any(|a| a.text.starts_with("--output") || a.text.starts_with("--ext-diff"))
    {
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
