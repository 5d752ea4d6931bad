//! Deletes the instance has not heard of yet (docs/protocol.md `_lembas/session/deleted`): one made while no
//! link was up, or from a shell (`lembas sessions delete`), is kept in `deleted.json` (a JSON array
//! of session ids, oldest first) until the next link's initialize sends it; then it is forgotten.
//! The service and every terminal write the file, so each change is a read-modify-write under one
//! lock, replaced atomically.

use std::io;
use std::path::PathBuf;

use super::files::{self, FileLock};
use super::{Store, check_id};

const FILE: &str = "deleted.json";
/// Beside the file and never removed (see turns.rs for why).
const LOCK_FILE: &str = "deleted.json.lock";

impl Store {
    /// Keeps `id` until the next link can tell the instance (once, however often it is given).
    pub fn remember_deleted(&self, id: &str) -> io::Result<()> {
        check_id(id)?;
        let _lock = self.lock_deleted()?;
        let mut pending = self.deleted_pending()?;
        if pending.iter().any(|kept| kept == id) {
            return Ok(());
        }
        pending.push(id.to_string());
        files::write_atomic(&self.state_dir, FILE, &serde_json::to_vec(&pending)?)
    }

    /// Every delete kept, oldest first, and forgets them: for the link to send right after its
    /// initialize. A link that may drop before it has sent them can use `deleted_pending` and then
    /// `forget_deleted` with what it sent instead, so none is lost with the link.
    pub fn take_deleted(&self) -> io::Result<Vec<String>> {
        let _lock = self.lock_deleted()?;
        let pending = self.deleted_pending()?;
        if files::remove_if_exists(&self.deleted_path())? {
            files::sync_dir(&self.state_dir)?;
        }
        Ok(pending)
    }

    /// Forgets these deletes (the ones a link has sent); others kept meanwhile stay.
    pub fn forget_deleted(&self, sent: &[String]) -> io::Result<()> {
        let _lock = self.lock_deleted()?;
        let pending = self.deleted_pending()?;
        let left: Vec<&String> = pending.iter().filter(|id| !sent.contains(id)).collect();
        if left.len() == pending.len() {
            return Ok(());
        }
        if left.is_empty() {
            files::remove_if_exists(&self.deleted_path())?;
            return files::sync_dir(&self.state_dir);
        }
        files::write_atomic(&self.state_dir, FILE, &serde_json::to_vec(&left)?)
    }

    /// Every delete kept, oldest first, without forgetting them.
    pub fn deleted_pending(&self) -> io::Result<Vec<String>> {
        let path = self.deleted_path();
        // Written by rename only, so a read without the lock still sees one whole file.
        let Some(bytes) = files::read_if_exists(&path)? else {
            return Ok(Vec::new());
        };
        serde_json::from_slice(&bytes).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a list of session ids: {e}", path.display()),
            )
        })
    }

    fn lock_deleted(&self) -> io::Result<FileLock> {
        let lock = FileLock::acquire(self.state_dir.join(LOCK_FILE))?;
        files::remove_stale_temporaries(&self.state_dir, |target| target == FILE);
        Ok(lock)
    }

    fn deleted_path(&self) -> PathBuf {
        self.state_dir.join(FILE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::new_session_id;

    #[test]
    fn deletes_are_kept_once_each_until_taken() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(
            dir.path().join("state"),
            &crate::decisions::Decisions::built_in().turns,
        );
        assert!(store.deleted_pending().unwrap().is_empty());
        assert!(store.take_deleted().unwrap().is_empty());

        let (a, b) = (new_session_id(), new_session_id());
        store.remember_deleted(&a).unwrap();
        store.remember_deleted(&b).unwrap();
        store.remember_deleted(&a).unwrap();
        assert_eq!(store.deleted_pending().unwrap(), vec![a.clone(), b.clone()]);
        assert_eq!(
            store.deleted_pending().unwrap().len(),
            2,
            "reading does not clear"
        );
        let text = std::fs::read_to_string(store.deleted_path()).unwrap();
        assert_eq!(
            serde_json::from_str::<Vec<String>>(&text).unwrap(),
            vec![a.clone(), b.clone()]
        );

        assert_eq!(store.take_deleted().unwrap(), vec![a.clone(), b.clone()]);
        assert!(store.deleted_pending().unwrap().is_empty(), "taking clears");
        assert!(store.take_deleted().unwrap().is_empty());
        assert!(!store.deleted_path().exists());
    }

    #[test]
    fn forgetting_what_was_sent_keeps_what_came_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(
            dir.path().to_path_buf(),
            &crate::decisions::Decisions::built_in().turns,
        );
        let (a, b, c) = (new_session_id(), new_session_id(), new_session_id());
        store.remember_deleted(&a).unwrap();
        store.remember_deleted(&b).unwrap();
        let sent = store.deleted_pending().unwrap();
        store.remember_deleted(&c).unwrap();
        store.forget_deleted(&sent).unwrap();
        assert_eq!(store.deleted_pending().unwrap(), vec![c.clone()]);
        store.forget_deleted(&[c]).unwrap();
        assert!(!store.deleted_path().exists());
        store.forget_deleted(&sent).unwrap();
    }

    #[test]
    fn concurrent_remembering_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(
            dir.path().to_path_buf(),
            &crate::decisions::Decisions::built_in().turns,
        );
        let ids: Vec<String> = (0..40).map(|_| new_session_id()).collect();
        std::thread::scope(|scope| {
            for chunk in ids.chunks(10) {
                let store = store.clone();
                scope.spawn(move || {
                    for id in chunk {
                        store.remember_deleted(id).unwrap();
                    }
                });
            }
        });
        let mut pending = store.deleted_pending().unwrap();
        pending.sort();
        assert_eq!(pending, ids);
    }

    #[test]
    fn an_unreadable_file_is_an_error_and_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(
            dir.path().to_path_buf(),
            &crate::decisions::Decisions::built_in().turns,
        );
        std::fs::write(store.deleted_path(), "nonsense").unwrap();
        assert_eq!(
            store.deleted_pending().unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        assert!(store.remember_deleted(&new_session_id()).is_err());
        assert!(store.take_deleted().is_err());
        assert_eq!(std::fs::read_to_string(store.deleted_path()).unwrap(), "nonsense");
    }
}
