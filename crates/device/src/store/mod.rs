//! The session store: what the engine keeps on disk under the state folder
//! (`$XDG_STATE_HOME/lembas/`), shared by the service and every terminal.
//!
//! - `sessions/<id>.jsonl`: one append-only file per session, one JSON record per line, the first
//!   the header `{"type":"session", …}` ([`sessions`]); what the lines say is [`record`].
//! - `turns/<id>.json`: the session's turn ids and their answers, merged and replaced atomically
//!   ([`turns`]).
//! - `attachments/<id>/`: files the session's prompts brought.
//! - `copies/<id>/`: files as they were before a turn wrote them, for `/undo` ([`copies`]).
//! - `deleted.json`: sessions deleted while the instance could not be told, until the next link's
//!   initialize sends them ([`deleted`]).
//!
//! Every function taking an id from outside checks its shape first ([`ids::is_session_id`]), so an
//! id can never name a path outside the store.

mod copies;
pub mod deleted;
mod files;
mod held;
pub mod ids;
pub mod message;
pub mod record;
pub mod sessions;
pub mod turns;

use std::io;
use std::path::PathBuf;

use crate::paths;

pub use copies::copies_of_turn;
pub use held::{HoldError, SessionHold};
pub use ids::{is_session_id, new_session_id};
pub use record::{Record, SessionFile, SessionHeader};
pub use sessions::{Opened, SessionLog, SessionSummary};
pub use turns::TurnEntry;

/// The store in one state folder. Holds no open files: every call opens what it needs, so the
/// service and terminals can use the same folder at once.
#[derive(Debug, Clone)]
pub struct Store {
    state_dir: PathBuf,
    /// How many turns a session's file keeps, and when an untouched one goes.
    turns: &'static crate::decisions::Turns,
}

impl Store {
    /// The store under `state_dir` (tests use temporary folders), keeping turns as `turns` says.
    pub fn at(state_dir: PathBuf, turns: &'static crate::decisions::Turns) -> Store {
        Store { state_dir, turns }
    }

    /// The state folder this store lives in.
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }

    /// Holds the session for this process (`sessions/<id>.lock`), or says who holds it.
    pub fn hold(&self, id: &str, holder: &str) -> Result<SessionHold, HoldError> {
        let lock = self.sessions_dir().join(format!("{id}.lock"));
        check_id(id).map_err(|source| HoldError::Unusable {
            path: lock.clone(),
            source,
        })?;
        let folder = self.sessions_dir();
        paths::ensure_private_dir(&folder).map_err(|source| HoldError::Unusable {
            path: folder.clone(),
            source,
        })?;
        held::hold(&lock, holder)
    }

    /// Where the session's attachments go (`attachments/<id>/`, not created here); removed with
    /// the session.
    pub fn attachments_dir(&self, id: &str) -> io::Result<PathBuf> {
        check_id(id)?;
        Ok(self.state_dir.join("attachments").join(id))
    }

    /// The session's temp folder, `/tmp` for its commands (`tmp/<id>/`, made by the sandbox);
    /// removed with the session.
    pub fn temp_dir(&self, id: &str) -> io::Result<PathBuf> {
        check_id(id)?;
        Ok(self.state_dir.join("tmp").join(id))
    }

    /// Removes the session file, its turns file, its attachments, its temp folder and its copies. Ok(false) when there
    /// was no such session (whatever turns or attachments it left are removed all the same).
    pub fn delete(&self, id: &str) -> io::Result<bool> {
        check_id(id)?;
        // The session file goes last: a delete cut short still lists the session, and doing it
        // again finishes the job.
        files::remove_dir_if_exists(&self.attachments_dir(id)?)?;
        // What its commands left in their temp folder is theirs: a folder they made unwritable
        // does not keep the session from going.
        let _ = files::remove_dir_if_exists(&self.temp_dir(id)?);
        self.remove_copies(id)?;
        self.remove_turns(id)?;
        let sessions_dir = self.sessions_dir();
        let existed = files::remove_if_exists(&self.session_path(id))?;
        // The lock file too (a holder that still has it open keeps its lock on the unlinked file).
        let _ = files::remove_if_exists(&sessions_dir.join(format!("{id}.lock")));
        if existed {
            files::sync_dir(&sessions_dir)?;
        }
        Ok(existed)
    }

    fn sessions_dir(&self) -> PathBuf {
        self.state_dir.join("sessions")
    }

    /// Only for a checked id.
    fn session_path(&self, id: &str) -> PathBuf {
        self.sessions_dir().join(format!("{id}{}", sessions::EXTENSION))
    }

    fn turns_dir(&self) -> PathBuf {
        self.state_dir.join("turns")
    }
}

/// Refuses anything that is not exactly a session id, before it comes near a path.
fn check_id(id: &str) -> io::Result<()> {
    if is_session_id(id) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{id:?} is not a session id (ses_ and 26 lowercase letters and digits of Crockford's base32)"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_removes_the_session_its_turns_and_its_attachments() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(
            dir.path().to_path_buf(),
            &crate::decisions::Decisions::built_in().turns,
        );
        let id = new_session_id();
        let other = new_session_id();
        for s in [&id, &other] {
            store.create(s, &SessionHeader::in_folder("/w")).unwrap();
            store
                .merge_turns(
                    s,
                    &[TurnEntry {
                        turn_id: "t1".into(),
                        state: "done".into(),
                        answer: None,
                        updated_ms: 1,
                    }],
                )
                .unwrap();
            let attachments = store.attachments_dir(s).unwrap();
            std::fs::create_dir_all(attachments.join("sub")).unwrap();
            std::fs::write(attachments.join("sub/a.png"), b"png").unwrap();
            std::fs::create_dir_all(store.temp_dir(s).unwrap()).unwrap();
        }

        assert!(store.delete(&id).unwrap());
        assert!(!store.exists(&id));
        assert!(!store.session_path(&id).exists());
        assert!(!store.turns_dir().join(format!("{id}.json")).exists());
        assert!(!store.attachments_dir(&id).unwrap().exists());
        assert!(!store.temp_dir(&id).unwrap().exists());
        assert!(store.temp_dir(&other).unwrap().exists());
        assert!(store.load_turns(&id).unwrap().is_empty());
        assert_eq!(
            store.open(&id).err().map(|e| e.kind()),
            Some(io::ErrorKind::NotFound)
        );

        // The other session is untouched.
        assert!(store.exists(&other));
        assert_eq!(store.load_turns(&other).unwrap().len(), 1);
        assert!(store.attachments_dir(&other).unwrap().join("sub/a.png").exists());

        // Again: nothing there any more.
        assert!(!store.delete(&id).unwrap());
        assert!(!store.delete(&new_session_id()).unwrap());
    }

    #[test]
    fn ids_of_the_wrong_shape_never_reach_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let store = Store::at(state.clone(), &crate::decisions::Decisions::built_in().turns);
        // A file a crafted id would reach if ids were joined unchecked.
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(dir.path().join("victim.jsonl"), "{\"type\":\"session\"}\n").unwrap();
        for bad in ["../../victim", "../x", "/", "", "SES_01JABCDEFGHJKMNPQRSTVWXYZ0"] {
            let refused = |r: io::Result<()>| {
                assert_eq!(
                    r.err().map(|e| e.kind()),
                    Some(io::ErrorKind::InvalidInput),
                    "{bad:?}"
                )
            };
            refused(store.create(bad, &SessionHeader::default()).map(drop));
            refused(store.open(bad).map(drop));
            refused(store.delete(bad).map(drop));
            refused(store.merge_turns(bad, &[]));
            refused(store.load_turns(bad).map(drop));
            refused(store.remember_deleted(bad));
            refused(store.attachments_dir(bad).map(drop));
            assert!(!store.exists(bad));
        }
        assert!(dir.path().join("victim.jsonl").exists());
        assert!(store.deleted_pending().unwrap().is_empty());
    }
}
