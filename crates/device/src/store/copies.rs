//! Where a session's turns keep the files they wrote, for `/undo` (`copies/<sessionId>/`, one
//! folder per turn, removed with the session). A folder is named `<ms>-<hash>`: the time it was
//! named (so the oldest are pruned first) and a hash of the turn id (client text never becomes a
//! path).

use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};

use super::{Store, check_id};

/// The part of a turn's folder name that names the turn.
fn turn_hash(turn_id: &str) -> String {
    hex::encode(&Sha256::digest(turn_id.as_bytes())[..8])
}

/// The folder of `turn_id` among a session's turn folders ([`Store::turn_folders`]), if it has one.
pub fn copies_of_turn<'a>(folders: &'a [PathBuf], turn_id: &str) -> Option<&'a Path> {
    let suffix = format!("-{}", turn_hash(turn_id));
    folders
        .iter()
        .find(|dir| {
            dir.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&suffix))
        })
        .map(PathBuf::as_path)
}

impl Store {
    fn copies_root(&self, id: &str) -> io::Result<PathBuf> {
        check_id(id)?;
        Ok(self.state_dir.join("copies").join(id))
    }

    /// The turn's folder: the one named for it before, or a new name (created by the first write).
    pub fn turn_copies_dir(&self, id: &str, turn_id: &str) -> io::Result<PathBuf> {
        let root = self.copies_root(id)?;
        if let Some(found) = copies_of_turn(&self.turn_folders(id)?, turn_id) {
            return Ok(found.to_path_buf());
        }
        Ok(root.join(format!("{:013}-{}", crate::status::now_ms(), turn_hash(turn_id))))
    }

    /// The session's turn folders, oldest first.
    pub fn turn_folders(&self, id: &str) -> io::Result<Vec<PathBuf>> {
        let root = self.copies_root(id)?;
        let entries = match std::fs::read_dir(&root) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        folders.sort();
        Ok(folders)
    }

    /// Keeps the copies of the last `keep` turns that wrote something.
    pub fn prune_copies(&self, id: &str, keep: usize) -> io::Result<()> {
        let folders = self.turn_folders(id)?;
        let extra = folders.len().saturating_sub(keep);
        for dir in &folders[..extra] {
            std::fs::remove_dir_all(dir)?;
        }
        Ok(())
    }

    /// Removes one turn's copies (it was undone).
    pub fn remove_turn_copies(&self, id: &str, turn_id: &str) -> io::Result<()> {
        let dir = self.turn_copies_dir(id, turn_id)?;
        super::files::remove_dir_if_exists(&dir)
    }

    pub(super) fn remove_copies(&self, id: &str) -> io::Result<()> {
        super::files::remove_dir_if_exists(&self.copies_root(id)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_keeps_its_folder_and_old_turns_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(
            dir.path().to_path_buf(),
            &crate::decisions::Decisions::built_in().turns,
        );
        let id = crate::store::new_session_id();
        let mut made = Vec::new();
        for turn in ["t1", "t2", "t3"] {
            let folder = store.turn_copies_dir(&id, turn).unwrap();
            std::fs::create_dir_all(&folder).unwrap();
            assert_eq!(store.turn_copies_dir(&id, turn).unwrap(), folder);
            made.push(folder);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        store.prune_copies(&id, 2).unwrap();
        assert_eq!(store.turn_folders(&id).unwrap(), made[1..]);
        store.remove_turn_copies(&id, "t3").unwrap();
        assert_eq!(store.turn_folders(&id).unwrap(), made[1..2]);
        store
            .create(&id, &crate::store::SessionHeader::in_folder("/w"))
            .unwrap();
        store.delete(&id).unwrap();
        assert!(store.turn_folders(&id).unwrap().is_empty());
        assert!(store.turn_copies_dir("../x", "t").is_err());
    }
}
