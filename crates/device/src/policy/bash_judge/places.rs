//! Where a read lands, judged lexically: a protected place (denied in every mode), a place under
//! the home folder outside the roots (asks; plan: denied), somewhere the judge cannot tell (asks),
//! or a free one (the session's folder, a root, the system's folders). A glob is judged as each
//! protected-looking path it could match; a path relative to a folder only known when the line
//! runs is unknown; `/proc/<pid>/root|cwd|fd…` and `/dev/fd/…` lead anywhere.

use std::path::{Component, Path};

use super::assessment::Scope;
use super::cwd::Folder;
use super::globs;
use super::paths::resolve;
use super::vars::SET_BY_LINE;
use super::vars::UNKNOWN;
use super::walk::Arg;

/// From the least to the most strict.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    Free,
    /// Under the home folder, outside every root: what it is, for the reason.
    OutsideRoots(String),
    /// Relative to a folder only known when the line runs (`cd "$D" && cat notes`), or built
    /// from a value the line sets (`vars`).
    Unplaced(String),
    /// The judge cannot tell where it lands: why.
    Unknown(String),
    /// A protected place: what it is.
    Protected(String),
}

/// Places under the home folder a recursive read must not walk into. Each is only counted when
/// `protected` says so, so the protected places stay decided in one place.
const PROBES: [&str; 9] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/lembas",
    ".local/state/lembas",
    ".local/share/keyrings",
    ".local/share/lembas",
    "Library/Keychains",
    "Library/Application Support/lembas",
];

/// `/proc/<pid>/<entry>` entries that open another file, folder or the process's memory.
const PROC_DOORS: [&str; 6] = ["root", "cwd", "fd", "mem", "map_files", "task"];

/// Where reading `arg` lands; `recursive`: the whole folder is read, everything under it.
pub fn reach(arg: &Arg, recursive: bool, scope: &Scope) -> Reach {
    let text = match arg.text.find([UNKNOWN, SET_BY_LINE]) {
        // `cat ~/.ssh/$f`: the folder before the unknown part is known, and judged as read whole.
        Some(at) if arg.dynamic => {
            let set_by_line = if arg.text.contains(SET_BY_LINE) {
                Reach::Unplaced(format!(
                    "a read of {}, a path built from a value the line sets",
                    arg.text.replace([UNKNOWN, SET_BY_LINE], "…")
                ))
            } else {
                Reach::Free
            };
            let folder = match arg.text[..at].rfind('/') {
                Some(slash) => reach(&Arg::literal(&arg.text[..slash.max(1)]), true, scope),
                None => Reach::Free,
            };
            return folder.max(set_by_line);
        }
        _ => arg.text.as_str(),
    };
    let mut worst = Reach::Free;
    for folder in scope.folders {
        let path = match folder {
            _ if text.starts_with('/') => resolve(&Arg::literal(text), Path::new("/")),
            Folder::Known(folder) => resolve(&Arg::literal(text), folder),
            Folder::Unknown => {
                return worst.max(Reach::Unplaced(format!(
                    "a read of {text}, in a folder only known when it runs"
                )));
            }
        };
        let Some(path) = path else { continue };
        worst = worst.max(of_path(&path, recursive, scope));
    }
    worst
}

/// One path, a glob standing for each path it could match.
fn of_path(path: &Path, recursive: bool, scope: &Scope) -> Reach {
    if !globs::is_glob(&path.to_string_lossy()) {
        return of_place(path, recursive, scope);
    }
    match globs::instances(path, scope.home, scope.dotglob) {
        Some(all) => all
            .iter()
            .map(|p| of_place(p, recursive, scope))
            .max()
            .unwrap_or(Reach::Free),
        None => Reach::Unknown(format!("the glob {}, too wide to read", path.display())),
    }
}

fn of_place(path: &Path, recursive: bool, scope: &Scope) -> Reach {
    let home = scope.home;
    if let Some(what) = scope.protected.protection(path) {
        return Reach::Protected(format!("{} ({what})", path.display()));
    }
    if let Some(reach) = proc_or_fd(path, recursive) {
        return reach;
    }
    if recursive {
        if home.starts_with(path) {
            return Reach::Protected(format!(
                "{}, which holds your home folder and its keys",
                path.display()
            ));
        }
        // The home folder's usual places, and the device's own wherever the environment put them.
        let holds = PROBES
            .iter()
            .map(|probe| home.join(probe))
            .chain(scope.protected.places().map(|(place, _)| place.to_path_buf()))
            .find(|place| place.starts_with(path) && scope.protected.protects(place));
        if let Some(place) = holds {
            return Reach::Protected(format!("{}, which holds {}", path.display(), place.display()));
        }
    }
    let free = path.starts_with(scope.folder) || scope.roots.iter().any(|r| path.starts_with(r));
    if !free && path.starts_with(home) {
        return Reach::OutsideRoots(format!(
            "a read of {}, under the home folder outside the roots",
            path.display()
        ));
    }
    Reach::Free
}

/// `/proc/self/environ` may hold this device's token: protected. `/proc/<pid>/root`, `cwd`, `fd`…
/// and `/dev/fd/N` lead to files the judge cannot name: unknown. A recursive read of `/proc`
/// or of one process walks into all of them.
fn proc_or_fd(path: &Path, recursive: bool) -> Option<Reach> {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => Some(""),
        })
        .filter(|n| !n.is_empty())
        .collect();
    let unknown = || {
        Reach::Unknown(format!(
            "a read of {}, which leads to files only known when it runs",
            path.display()
        ))
    };
    match names.as_slice() {
        ["proc", _, "environ", ..] | ["proc", _, "task", _, "environ", ..] => {
            Some(Reach::Protected(format!(
                "{} (a process's environment, which may hold this device's token)",
                path.display()
            )))
        }
        ["proc"] | ["proc", _] if recursive => Some(Reach::Protected(format!(
            "{}, which holds every process's environment",
            path.display()
        ))),
        ["proc", _, door, ..] if PROC_DOORS.contains(door) => Some(unknown()),
        ["dev", "fd", ..] => Some(unknown()),
        _ => None,
    }
}

/// The paths a command word may name: the word, or what follows its `=` or `@`, with `~` made the
/// home folder (curl reads `@file`; `--file=~/x` is expanded by bash).
pub fn spelled(text: &str, home: &Path) -> String {
    let text = text.strip_prefix('@').unwrap_or(text);
    match text.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            format!("{}{rest}", home.display())
        }
        _ => text.to_string(),
    }
}
