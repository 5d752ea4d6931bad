//! What the judge says of one command and where it judges it: a command's class (read-only, a
//! change, never allowed, or not seen through), the commands it runs in turn, the scope a line is
//! judged in (its folders, the protected places, the roots), and the variables that steer what a
//! command runs.

use std::path::{Path, PathBuf};

use super::cwd::Folder;
use super::paths::resolve;
use super::vars::Vars;
use super::walk::Arg;
use crate::policy::protected::Protected;

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
    pub fn of(class: Class) -> Assessment {
        Assessment {
            class,
            inner: Vec::new(),
        }
    }
    pub fn running(inner: Inner) -> Assessment {
        Assessment {
            class: Class::ReadOnly,
            inner: vec![inner],
        }
    }
}

pub struct Scope<'a> {
    pub folder: &'a Path,
    pub home: &'a Path,
    pub protected: &'a Protected,
    pub roots: &'a [PathBuf],
    pub functions: &'a [String],
    /// Every folder the line may run a command in (`cwd`).
    pub folders: &'a [Folder],
    /// The line may make `*` match names that start with a dot.
    pub dotglob: bool,
    /// What the line gives its variables, for the scripts it runs.
    pub vars: &'a Vars,
}

impl Scope<'_> {
    /// `arg` as an absolute path from each folder the line may be in that is known.
    pub fn resolve_all(&self, arg: &Arg) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> = Vec::new();
        for folder in self.folders {
            if let Folder::Known(folder) = folder
                && let Some(path) = resolve(arg, folder)
                && !all.contains(&path)
            {
                all.push(path);
            }
        }
        all
    }
}

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
