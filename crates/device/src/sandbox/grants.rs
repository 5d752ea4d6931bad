//! What a command may reach, as a list of grants: Landlock only grants, so "everything but the
//! protected places" is built by listing. A folder holding a protected place is not granted whole:
//! each of its entries that holds none is, and the ones that do are gone into in turn. Pure over a
//! [`Tree`], so the computation is tested on tables of made-up trees.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How far a grant reaches; each includes the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// Only the folder's own list of names: an ancestor of a protected place. Landlock's ReadDir
    /// is inherited, so the names inside a protected folder stay listable through it; its
    /// contents do not.
    List,
    /// Read files, list folders, run programs.
    Read,
    /// Read, and create, change, remove, rename.
    Write,
}

/// One rule: `path` and everything below it, as far as `reach`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRule {
    pub path: PathBuf,
    pub reach: Reach,
    /// Folders take folder rights (list, create inside); files only file rights.
    pub folder: bool,
}

/// What an entry is, without following a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Folder,
    File,
    Link,
}

/// The file system as the grants see it.
pub trait Tree {
    /// What `path` is, following links (the places given are resolved already); `None` when gone.
    fn kind(&self, path: &Path) -> Option<EntryKind>;
    /// A folder's entries; an unreadable folder has none (nothing in it is granted).
    fn children(&self, folder: &Path) -> Vec<(OsString, EntryKind)>;
}

/// The real file system (Landlock's rules are made from it).
#[cfg(target_os = "linux")]
pub struct Disk;

#[cfg(target_os = "linux")]
impl Tree for Disk {
    fn kind(&self, path: &Path) -> Option<EntryKind> {
        let meta = std::fs::metadata(path).ok()?;
        Some(if meta.is_dir() {
            EntryKind::Folder
        } else {
            EntryKind::File
        })
    }

    fn children(&self, folder: &Path) -> Vec<(OsString, EntryKind)> {
        let Ok(entries) = std::fs::read_dir(folder) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let kind = match entry.file_type().ok()? {
                    t if t.is_symlink() => EntryKind::Link,
                    t if t.is_dir() => EntryKind::Folder,
                    _ => EntryKind::File,
                };
                Some((entry.file_name(), kind))
            })
            .collect()
    }
}

/// The grants for reading `readable`, writing `writable`, and reaching nothing of `hidden`, merged
/// to one grant per path (the farthest reach) and sorted by path.
///
/// A place given is granted even inside a hidden one (the device names a session's own
/// attachments, inside its state folder, that way); hidden places below a given place are always
/// cut out. Symbolic links found while listing are never granted: opening one would grant its
/// target, and a target outside the hidden places is reached through its own folder anyway.
pub fn grants(
    readable: &[PathBuf],
    writable: &[PathBuf],
    hidden: &[PathBuf],
    tree: &dyn Tree,
) -> Vec<FileRule> {
    let mut out = Vec::new();
    let places = readable
        .iter()
        .map(|p| (p, Reach::Read))
        .chain(writable.iter().map(|p| (p, Reach::Write)));
    for (place, reach) in places {
        if let Some(kind) = tree.kind(place).filter(|k| *k != EntryKind::Link) {
            cover(place, kind, reach, hidden, tree, &mut out);
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path).then(b.reach.cmp(&a.reach)));
    out.dedup_by(|later, first| later.path == first.path);
    out
}

fn cover(
    path: &Path,
    kind: EntryKind,
    reach: Reach,
    hidden: &[PathBuf],
    tree: &dyn Tree,
    out: &mut Vec<FileRule>,
) {
    let holds_hidden = hidden.iter().any(|h| h != path && h.starts_with(path));
    if !holds_hidden || kind != EntryKind::Folder {
        out.push(FileRule {
            path: path.to_owned(),
            reach,
            folder: kind == EntryKind::Folder,
        });
        return;
    }
    // An ancestor: its names only, never a write (a write right on it would reach the hidden
    // place below too). So nothing new is made directly in it; its entries are granted one by one.
    out.push(FileRule {
        path: path.to_owned(),
        reach: Reach::List,
        folder: true,
    });
    for (name, kind) in tree.children(path) {
        let child = path.join(name);
        if kind == EntryKind::Link || hidden.contains(&child) {
            continue;
        }
        cover(&child, kind, reach, hidden, tree, out);
    }
}

/// `path` resolved as far as it exists, the rest appended: a protected place that does not exist
/// yet is still known by where it would be.
pub fn resolve_leniently(path: &Path) -> PathBuf {
    if let Ok(resolved) = crate::canonical::canonicalize(path) {
        return resolved;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => resolve_leniently(parent).join(name),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A made-up tree: paths ending in `/` are folders, `@` marks a link.
    struct Fake(BTreeMap<PathBuf, EntryKind>);

    impl Fake {
        fn new(entries: &[&str]) -> Self {
            let mut map = BTreeMap::new();
            map.insert(PathBuf::from("/"), EntryKind::Folder);
            for e in entries {
                let (path, kind) = match (e.strip_suffix('/'), e.strip_suffix('@')) {
                    (Some(p), _) => (p, EntryKind::Folder),
                    (_, Some(p)) => (p, EntryKind::Link),
                    _ => (*e, EntryKind::File),
                };
                let mut at = PathBuf::from(path);
                map.insert(at.clone(), kind);
                while let Some(parent) = at.parent().map(Path::to_owned) {
                    map.entry(parent.clone()).or_insert(EntryKind::Folder);
                    at = parent;
                }
            }
            Self(map)
        }
    }

    impl Tree for Fake {
        fn kind(&self, path: &Path) -> Option<EntryKind> {
            self.0.get(path).copied()
        }
        fn children(&self, folder: &Path) -> Vec<(OsString, EntryKind)> {
            self.0
                .iter()
                .filter(|(p, _)| p.parent() == Some(folder))
                .filter_map(|(p, k)| Some((p.file_name()?.to_owned(), *k)))
                .collect()
        }
    }

    fn shown(grants: &[FileRule]) -> Vec<String> {
        grants
            .iter()
            .map(|g| format!("{} {:?}", g.path.display(), g.reach))
            .collect()
    }

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    const TREE: &[&str] = &[
        "/usr/bin/bash",
        "/etc/hosts",
        "/tmp/",
        "/home/p/.ssh/id_ed25519",
        "/home/p/.bashrc",
        "/home/p/code/app/src/main.rs",
        "/home/p/.config/lembas/config.yaml",
        "/home/p/.config/git/config",
        "/home/p/dots@",
        "/home/q/notes",
    ];

    const HIDDEN: &[&str] = &["/home/p/.ssh", "/home/p/.config/lembas"];

    /// Why, readable, writable, hidden, the grants wanted.
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    );

    #[test]
    fn grant_tables() {
        let tree = Fake::new(TREE);
        let cases: &[Case] = &[
            (
                "nothing hidden: one grant each",
                &["/"],
                &["/tmp"],
                &[],
                &["/ Read", "/tmp Write"],
            ),
            (
                "the ancestors of hidden places are listed, their other entries granted, links left out",
                &["/"],
                &[],
                HIDDEN,
                &[
                    "/ List",
                    "/etc Read",
                    "/home List",
                    "/home/p List",
                    "/home/p/.bashrc Read",
                    "/home/p/.config List",
                    "/home/p/.config/git Read",
                    "/home/p/code Read",
                    "/home/q Read",
                    "/tmp Read",
                    "/usr Read",
                ],
            ),
            (
                "a root holding a hidden place is cut around it for writes too",
                &[],
                &["/home/p"],
                HIDDEN,
                &[
                    "/home/p List",
                    "/home/p/.bashrc Write",
                    "/home/p/.config List",
                    "/home/p/.config/git Write",
                    "/home/p/code Write",
                ],
            ),
            (
                "a root beside the hidden places is granted whole; reads and writes merge",
                &["/"],
                &["/home/p/code/app", "/tmp"],
                HIDDEN,
                &[
                    "/ List",
                    "/etc Read",
                    "/home List",
                    "/home/p List",
                    "/home/p/.bashrc Read",
                    "/home/p/.config List",
                    "/home/p/.config/git Read",
                    "/home/p/code Read",
                    "/home/p/code/app Write",
                    "/home/q Read",
                    "/tmp Write",
                    "/usr Read",
                ],
            ),
            (
                "a place named inside a hidden one is granted as itself",
                &["/home/p/.config/lembas/config.yaml"],
                &[],
                HIDDEN,
                &["/home/p/.config/lembas/config.yaml Read"],
            ),
            (
                "a hidden place that does not exist still keeps its ancestors from whole grants",
                &[],
                &["/home/q"],
                &["/home/q/.aws"],
                &["/home/q List", "/home/q/notes Write"],
            ),
            (
                "places that do not exist and links given are left out",
                &["/nowhere", "/home/p/dots"],
                &[],
                &[],
                &[],
            ),
        ];
        for (why, readable, writable, hidden_here, want) in cases {
            let got = grants(&paths(readable), &paths(writable), &paths(hidden_here), &tree);
            assert_eq!(shown(&got), *want, "{why}");
        }
    }

    #[test]
    fn files_take_file_rights_and_folders_folder_rights() {
        let tree = Fake::new(TREE);
        let got = grants(&paths(&["/"]), &[], &paths(&["/home/p/.ssh"]), &tree);
        let folder = |p: &str| got.iter().find(|g| g.path == Path::new(p)).map(|g| g.folder);
        assert_eq!(folder("/home/p/.bashrc"), Some(false));
        assert_eq!(folder("/home/p/code"), Some(true));
        assert_eq!(folder("/home/p"), Some(true));
    }

    #[cfg(unix)]
    #[test]
    fn resolving_leniently_keeps_the_missing_tail() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        let link = real.join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(resolve_leniently(&link.join("not/yet")), real.join("not/yet"));
        assert_eq!(resolve_leniently(&link), real);
    }
}
