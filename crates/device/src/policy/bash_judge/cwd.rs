//! The folders a line's commands may run in. `cd ~/.ssh && cat config` reads `~/.ssh/config`: a
//! relative path is judged against every folder the line may be in. The walk flattens the line
//! (subshells, functions called later, loops), so the judge does not follow the order of `cd`s: it
//! takes every folder any `cd`/`pushd` of the line names, plus the one it started in, and judges a
//! relative path against each. A `cd` to a folder only known when it runs (`cd "$D"`, `cd -`,
//! `popd`, a sourced file) makes the folder unknown.

use std::path::{Path, PathBuf};

use super::parse;
use super::paths::resolve;
use super::vars::Vars;
use super::walk::{Arg, Part, Walk, name_of};

/// More folders than this and the judge stops listing them: unknown.
const MAX_FOLDERS: usize = 16;
/// `eval 'eval "cd …"'` deeper than this is not looked into: unknown.
const MAX_DEPTH: usize = 4;

#[derive(Debug, Clone, PartialEq)]
pub enum Folder {
    Known(PathBuf),
    Unknown,
}

/// `outer` (where the script starts: the session's folder, or a script's caller's folders) and
/// every folder the parts may `cd` into, each `cd` taken from the folders named before it.
/// `functions`: the line defines some, whose bodies (read where they are defined) may run after
/// a later `cd`: then the `cd`s are taken a second time, from every folder the first time found.
pub fn folders(parts: &[Part], outer: &[Folder], home: &Path, functions: bool) -> Vec<Folder> {
    let mut all = outer.to_vec();
    for _ in 0..1 + usize::from(functions) {
        add_moves(parts, home, &mut all, 0);
    }
    all
}

fn add_moves(parts: &[Part], home: &Path, all: &mut Vec<Folder>, depth: usize) {
    for part in parts {
        let Part::Command { words, .. } = part else {
            continue;
        };
        let Some((first, args)) = words.split_first() else {
            continue;
        };
        match name_of(first).as_str() {
            "cd" | "pushd" => {
                let target = args
                    .iter()
                    .find(|a| !(a.text.starts_with('-') && a.text.len() > 1) || a.dynamic);
                match target {
                    None if name_of(first) == "cd" => push(all, Folder::Known(home.to_path_buf())),
                    Some(t) if !t.dynamic && t.text != "-" && !t.text.starts_with('+') => move_to(t, all),
                    _ => push(all, Folder::Unknown),
                }
            }
            "popd" | "source" | "." => push(all, Folder::Unknown),
            // `eval` runs in this shell: its own `cd`s move the line.
            "eval" if depth < MAX_DEPTH && !args.iter().any(|a| a.dynamic) => {
                let script: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                match parse::parse(&script.join(" ")) {
                    Ok(program) => {
                        let inner = Walk::of(&program, &home.to_string_lossy(), &Vars::default());
                        add_moves(&inner.parts, home, all, depth + 1);
                    }
                    Err(_) => push(all, Folder::Unknown),
                }
            }
            "eval" => push(all, Folder::Unknown),
            _ => {}
        }
    }
}

/// `cd target` from each folder known so far.
fn move_to(target: &Arg, all: &mut Vec<Folder>) {
    let from: Vec<PathBuf> = all
        .iter()
        .filter_map(|f| match f {
            Folder::Known(p) => Some(p.clone()),
            Folder::Unknown => None,
        })
        .collect();
    for folder in from {
        if let Some(path) = resolve(target, &folder) {
            push(all, Folder::Known(path));
        }
    }
}

fn push(all: &mut Vec<Folder>, folder: Folder) {
    if all.contains(&folder) {
        return;
    }
    if all.len() >= MAX_FOLDERS {
        if !all.contains(&Folder::Unknown) {
            all.push(Folder::Unknown);
        }
        return;
    }
    all.push(folder);
}
