//! One folder's file index: every file and folder under it, as ripgrep lists them (`.gitignore`
//! respected, hidden files kept, symlinks not followed, protected paths left out), ready for fuzzy
//! matching. Built on the first search, then rebuilt in the background at a search that finds it
//! older than `files.index_max_age_seconds`: the search answers at once from the index it has, so a
//! warm picker never waits for a walk. (A `notify` watcher would be fresher, but costs a watch per
//! folder of a tree as large as the roots; a picker a few seconds stale is what ripgrep's list in
//! the TUI is too.)

use crate::policy::protected::Protected;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use nucleo_matcher::Utf32String;

use crate::poison::Recover;
use crate::tools::{relative_text, walker};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    File,
    Dir,
}

impl PathKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PathKind::File => "file",
            PathKind::Dir => "dir",
        }
    }
}

/// One entry: its path relative to the folder, `/`-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub kind: PathKind,
}

/// The index as one walk found it. Entries are sorted shallow first, then by path, so that among
/// equal scores (and with no query at all) the nearer file comes first.
pub struct Snapshot {
    pub entries: Vec<Entry>,
    /// The entries' paths as the matcher reads them, in the same order.
    pub haystacks: Vec<Utf32String>,
    pub built: Instant,
    pub took: Duration,
    /// The walk stopped at `files.index_max_entries`.
    pub truncated: bool,
}

impl Snapshot {
    /// Walks `root` (blocking I/O).
    pub fn build(root: &Path, protected: &Protected, max_entries: usize) -> Snapshot {
        let started = Instant::now();
        let mut entries = Vec::new();
        let mut truncated = false;
        for entry in walker(root, protected).build().filter_map(Result::ok) {
            if entry.depth() == 0 {
                continue;
            }
            if entries.len() >= max_entries {
                truncated = true;
                break;
            }
            let kind = match entry.file_type() {
                Some(t) if t.is_dir() => PathKind::Dir,
                _ => PathKind::File,
            };
            entries.push(Entry {
                path: relative_text(entry.path(), root),
                kind,
            });
        }
        entries.sort_by(|a, b| order_key(&a.path).cmp(&order_key(&b.path)));
        let haystacks = entries
            .iter()
            .map(|e| Utf32String::from(e.path.as_str()))
            .collect();
        Snapshot {
            entries,
            haystacks,
            built: Instant::now(),
            took: started.elapsed(),
            truncated,
        }
    }
}

/// A folder's index, shared by every session there.
pub struct FolderIndex {
    pub root: PathBuf,
    protected: Protected,
    current: RwLock<Option<Arc<Snapshot>>>,
    rebuilding: AtomicBool,
}

impl FolderIndex {
    pub fn new(root: PathBuf, protected: Protected) -> FolderIndex {
        FolderIndex {
            root,
            protected,
            current: RwLock::new(None),
            rebuilding: AtomicBool::new(false),
        }
    }

    /// The index to answer from (blocking: the first call walks the folder). One older than
    /// `max_age` is answered from all the same, and rebuilt on a thread of its own.
    pub fn snapshot(self: &Arc<Self>, max_age: Duration, max_entries: usize) -> Arc<Snapshot> {
        let current = self.current.read().recover().clone();
        match current {
            Some(snapshot) => {
                if snapshot.built.elapsed() > max_age && !self.rebuilding.swap(true, Ordering::SeqCst) {
                    let index = self.clone();
                    std::thread::spawn(move || {
                        index.rebuild(max_entries);
                        index.rebuilding.store(false, Ordering::SeqCst);
                    });
                }
                snapshot
            }
            None => self.rebuild(max_entries),
        }
    }

    fn rebuild(&self, max_entries: usize) -> Arc<Snapshot> {
        let snapshot = Arc::new(Snapshot::build(&self.root, &self.protected, max_entries));
        tracing::debug!(
            root = %self.root.display(),
            entries = snapshot.entries.len(),
            truncated = snapshot.truncated,
            took_ms = snapshot.took.as_millis() as u64,
            "file index built"
        );
        *self.current.write().recover() = Some(snapshot.clone());
        snapshot
    }
}

/// The index's order: shallow first, then by path.
pub fn order_key(path: &str) -> (usize, &str) {
    (path.bytes().filter(|b| *b == b'/').count(), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_files_and_folders_shallow_first_without_ignored_or_protected() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        for (path, text) in [
            ("src/deep/z.rs", ""),
            ("src/a.rs", ""),
            ("README.md", ""),
            (".gitignore", "target/\n*.log\n"),
            ("debug.log", ""),
            ("target/out.bin", ""),
            (".env", "SECRET=1"),
            (".git/config", ""),
        ] {
            std::fs::write(root.join(path), text).unwrap();
        }
        let snapshot = Snapshot::build(root, &Protected::under_home(Path::new("/nonexistent-home")), 100);
        let listed: Vec<(&str, PathKind)> = snapshot
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.kind))
            .collect();
        assert_eq!(
            listed,
            [
                (".gitignore", PathKind::File),
                ("README.md", PathKind::File),
                ("src", PathKind::Dir),
                ("src/a.rs", PathKind::File),
                ("src/deep", PathKind::Dir),
                ("src/deep/z.rs", PathKind::File),
            ]
        );
        assert!(!snapshot.truncated);
        let capped = Snapshot::build(root, &Protected::under_home(Path::new("/nonexistent-home")), 2);
        assert_eq!(capped.entries.len(), 2);
        assert!(capped.truncated);
    }

    #[test]
    fn a_stale_index_answers_at_once_and_is_rebuilt_behind() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("one.txt"), "").unwrap();
        let index = Arc::new(FolderIndex::new(
            dir.path().to_path_buf(),
            Protected::under_home(Path::new("/none")),
        ));
        let first = index.snapshot(Duration::from_secs(60), 100);
        assert_eq!(first.entries.len(), 1);
        std::fs::write(dir.path().join("two.txt"), "").unwrap();
        // Fresh enough: the same index.
        assert_eq!(index.snapshot(Duration::from_secs(60), 100).entries.len(), 1);
        // Stale: answered from the old one, the new one follows.
        let stale = index.snapshot(Duration::ZERO, 100);
        assert_eq!(stale.entries.len(), 1);
        let deadline = Instant::now() + Duration::from_secs(10);
        while index.snapshot(Duration::from_secs(60), 100).entries.len() != 2 {
            assert!(Instant::now() < deadline, "the index was not rebuilt");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
