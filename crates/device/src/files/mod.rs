//! Capability `files` (docs/protocol.md): the file index `_lembas/files/search` answers from (one per
//! session folder, built on the first search), what each session used recently (which nudges the
//! picker's order), and the `@path` mentions of a prompt ([`mention`]).

pub mod index;
pub mod mention;
pub mod search;

use crate::policy::protected::Protected;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::decisions;
use crate::poison::Recover;
use crate::tools::relative_text;
pub use index::{Entry, FolderIndex, PathKind, Snapshot};

/// The engine's indexes and recent uses. Cheap to share behind an `Arc`.
pub struct Files {
    /// How many indexes and uses are kept, how old an index may get, how recent use counts.
    numbers: &'static decisions::FilesNumbers,
    /// Folder indexes with when each was last searched, the least recent first out.
    indexes: Mutex<Vec<(Arc<FolderIndex>, Instant)>>,
    /// (session, resolved path), newest last.
    uses: Mutex<VecDeque<(String, PathBuf)>>,
}

impl Files {
    pub fn new(numbers: &'static decisions::FilesNumbers) -> Files {
        Files {
            numbers,
            indexes: Mutex::default(),
            uses: Mutex::default(),
        }
    }

    /// The index of `root` (resolved), made when there is none.
    pub fn index(&self, root: &Path, protected: &Protected) -> Arc<FolderIndex> {
        let mut indexes = self.indexes.lock().recover();
        if let Some((index, used)) = indexes.iter_mut().find(|(i, _)| i.root == root) {
            *used = Instant::now();
            return index.clone();
        }
        let kept = self.numbers.indexes_kept.max(1);
        if indexes.len() >= kept {
            indexes.sort_by_key(|(_, used)| std::cmp::Reverse(*used));
            indexes.truncate(kept - 1);
        }
        let index = Arc::new(FolderIndex::new(root.to_path_buf(), protected.clone()));
        indexes.push((index.clone(), Instant::now()));
        index
    }

    /// The picker's answer for `query` in `root` (blocking: the first search of a folder walks
    /// it). `session` nudges the order by what it used; without one, by what any session there did.
    pub fn search(
        &self,
        root: &Path,
        protected: &Protected,
        session: Option<&str>,
        query: &str,
        limit: usize,
    ) -> Vec<Entry> {
        let numbers = self.numbers;
        let snapshot = self.index(root, protected).snapshot(
            Duration::from_secs(numbers.index_max_age_seconds),
            numbers.index_max_entries,
        );
        let recent = self.recent(root, session);
        search::search(&snapshot, query, &recent, limit, numbers.recent_bonus)
            .into_iter()
            .cloned()
            .collect()
    }

    /// `session` used `path` (resolved): a mention attached, a file the model read or wrote.
    pub fn used(&self, session: &str, path: &Path) {
        let mut uses = self.uses.lock().recover();
        uses.retain(|(s, p)| !(s == session && p == path));
        uses.push_back((session.to_string(), path.to_path_buf()));
        // Enough for every folder an index is kept for.
        let numbers = self.numbers;
        while uses.len() > numbers.recent_kept * numbers.indexes_kept.max(1) {
            uses.pop_front();
        }
    }

    /// What was used under `root`, most recent first, relative to it.
    pub fn recent(&self, root: &Path, session: Option<&str>) -> Vec<String> {
        let uses = self.uses.lock().recover();
        let mut out: Vec<String> = Vec::new();
        for (s, path) in uses.iter().rev() {
            if session.is_some_and(|session| session != s) || !path.starts_with(root) || path == root {
                continue;
            }
            let relative = relative_text(path, root);
            if !out.contains(&relative) {
                out.push(relative);
            }
            if out.len() >= self.numbers.recent_kept {
                break;
            }
        }
        out
    }

    /// Forgets a deleted session's uses.
    pub fn forget(&self, session: &str) {
        self.uses.lock().recover().retain(|(s, _)| s != session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_uses_per_session_and_folder() {
        let files = Files::new(&decisions::Decisions::built_in().files);
        let root = Path::new("/w/p");
        files.used("s1", Path::new("/w/p/a.rs"));
        files.used("s2", Path::new("/w/p/b.rs"));
        files.used("s1", Path::new("/w/other/c.rs"));
        files.used("s1", Path::new("/w/p/src/d.rs"));
        files.used("s1", Path::new("/w/p/a.rs"));
        assert_eq!(files.recent(root, Some("s1")), ["a.rs", "src/d.rs"]);
        assert_eq!(files.recent(root, None), ["a.rs", "src/d.rs", "b.rs"]);
        files.forget("s1");
        assert_eq!(files.recent(root, None), ["b.rs"]);
    }

    #[test]
    fn searches_a_folder_with_its_recent_files_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for name in ["alpha.txt", "beta.txt", "gamma.txt"] {
            std::fs::write(root.join(name), "").unwrap();
        }
        let files = Files::new(&decisions::Decisions::built_in().files);
        let home = &crate::policy::protected::Protected::under_home(Path::new("/none"));
        let found = |q: &str, limit| -> Vec<String> {
            files
                .search(&root, home, Some("s"), q, limit)
                .into_iter()
                .map(|e| e.path)
                .collect()
        };
        assert_eq!(found("", 2), ["alpha.txt", "beta.txt"]);
        files.used("s", &root.join("gamma.txt"));
        assert_eq!(found("", 2), ["gamma.txt", "alpha.txt"]);
        assert_eq!(found("bet", 5), ["beta.txt"]);
    }
}
