//! Turn ids (docs/protocol.md "Turn ids"): per session, the ids of the turns the device accepted with their
//! state and, once done, their answers, in `turns/<id>.json` (a JSON array, oldest first). The
//! service and every terminal write the same files, so each write merges with what is there under
//! one lock and replaces the file atomically; files untouched for a while are pruned.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::files::{self, FileLock};
use super::{Store, check_id, ids};
use crate::rpc::RpcError;
use lembas_protocol::prompt::{PromptAnswer, StopReason};

const EXTENSION: &str = ".json";
/// One lock for the whole folder rather than one per file: a lock file is never removed (removing
/// one while someone waits on it would let two writers in), and turn writes are small and rare
/// enough that queuing them all costs nothing.
const LOCK_FILE: &str = ".lock";
const SECONDS_PER_DAY: u64 = 24 * 60 * 60;

/// One turn a session accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEntry {
    #[serde(rename = "turnId")]
    pub turn_id: String,
    /// "queued", "running" or "done".
    pub state: String,
    /// The turn's answer, once done.
    #[serde(default)]
    pub answer: Option<StoredAnswer>,
    pub updated_ms: u64,
}

/// A done turn's answer as the turns file keeps it: the error it failed with, or the prompt's
/// answer; one this version cannot read (an older terminal's kept only its stop reason) is kept
/// as it was, so a merge never loses it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StoredAnswer {
    Failed { error: RpcError },
    Answered(PromptAnswer),
    Unread(Value),
}

impl StoredAnswer {
    pub fn of(answer: &Result<PromptAnswer, RpcError>) -> StoredAnswer {
        match answer {
            Ok(answer) => StoredAnswer::Answered(answer.clone()),
            Err(error) => StoredAnswer::Failed { error: error.clone() },
        }
    }

    /// The answer a prompt sent again with the turn's id gets: an error that cannot be read is
    /// the turn failed; any other answer that cannot be read (or none) is the turn ended, with
    /// its id.
    pub fn read(answer: Option<&StoredAnswer>, turn_id: &str) -> Result<PromptAnswer, RpcError> {
        match answer {
            Some(StoredAnswer::Failed { error }) => Err(error.clone()),
            Some(StoredAnswer::Answered(answer)) => Ok(answer.clone()),
            Some(StoredAnswer::Unread(unread)) if unread.get("error").is_some() => {
                Err(RpcError::internal("The turn failed."))
            }
            Some(StoredAnswer::Unread(_)) | None => Ok(PromptAnswer::ended(StopReason::EndTurn, turn_id)),
        }
    }
}

impl Store {
    /// Merges `entries` by turn id into the session's turns file (an entry given here wins over a
    /// stored one with the same id; among the given, the later wins), keeps the newest
    /// `turns.kept_per_session` by `updated_ms` and replaces the file atomically. Holds the turns
    /// lock from reading the file to the rename, so writers in other processes never lose each
    /// other's entries.
    pub fn merge_turns(&self, id: &str, entries: &[TurnEntry]) -> io::Result<()> {
        self.merge(id, entries, true)
    }

    /// `merge_turns` without waiting for the disk: what it wrote survives the device being killed
    /// the next instant; `sync_turns` makes it durable.
    pub fn merge_turns_unsynced(&self, id: &str, entries: &[TurnEntry]) -> io::Result<()> {
        self.merge(id, entries, false)
    }

    /// Waits for the disk to hold the session's turns file.
    pub fn sync_turns(&self, id: &str) -> io::Result<()> {
        check_id(id)?;
        files::sync_file(&self.turns_dir(), &file_name(id))
    }

    fn merge(&self, id: &str, entries: &[TurnEntry], sync: bool) -> io::Result<()> {
        check_id(id)?;
        if entries.is_empty() {
            return Ok(());
        }
        let dir = self.turns_dir();
        let _lock = FileLock::acquire(dir.join(LOCK_FILE))?;
        let mut by_id: HashMap<String, TurnEntry> = self
            .load_turns(id)?
            .into_iter()
            .map(|entry| (entry.turn_id.clone(), entry))
            .collect();
        for entry in entries {
            by_id.insert(entry.turn_id.clone(), entry.clone());
        }
        let mut kept: Vec<TurnEntry> = by_id.into_values().collect();
        // Newest first to cut, then oldest first to store; the id breaks ties so every writer
        // keeps the same ones.
        kept.sort_by(|a, b| (b.updated_ms, &b.turn_id).cmp(&(a.updated_ms, &a.turn_id)));
        kept.truncate(self.turns.kept_per_session);
        kept.reverse();
        let bytes = serde_json::to_vec(&kept)?;
        if sync {
            files::write_atomic(&dir, &file_name(id), &bytes)
        } else {
            files::replace_unsynced(&dir, &file_name(id), &bytes)
        }
    }

    /// The session's turns, oldest first; empty when it has none.
    pub fn load_turns(&self, id: &str) -> io::Result<Vec<TurnEntry>> {
        check_id(id)?;
        let path = self.turns_path(id);
        // Written by rename only, so a read without the lock still sees one whole file.
        let Some(bytes) = files::read_if_exists(&path)? else {
            return Ok(Vec::new());
        };
        serde_json::from_slice(&bytes).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a list of turns: {e}", path.display()),
            )
        })
    }

    /// Removes turns files untouched (by modification time) for `turns.prune_after_days` as of
    /// `now`, and any temporary file a killed writer left; returns how many turns files went.
    pub fn prune_turns(&self, now: SystemTime) -> io::Result<usize> {
        let dir = self.turns_dir();
        if !dir.is_dir() {
            return Ok(0);
        }
        let max_age = Duration::from_secs(self.turns.prune_after_days * SECONDS_PER_DAY);
        // Under the lock no writer is between its write and its rename: a file's age is final and
        // every temporary is stale.
        let _lock = FileLock::acquire(dir.join(LOCK_FILE))?;
        files::remove_stale_temporaries(&dir, is_turns_file);
        let mut pruned = 0;
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            if !entry.file_name().to_str().is_some_and(is_turns_file) {
                continue;
            }
            let modified = match entry.metadata().and_then(|m| m.modified()) {
                Ok(modified) => modified,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            // A file from the future (a clock set back) is not old.
            let old = now.duration_since(modified).is_ok_and(|age| age >= max_age);
            if old && files::remove_if_exists(&entry.path())? {
                pruned += 1;
            }
        }
        if pruned > 0 {
            files::sync_dir(&dir)?;
        }
        Ok(pruned)
    }

    /// For delete: the session's turns file, under the lock, so a merge in flight cannot rename its
    /// file back in after the removal.
    pub(super) fn remove_turns(&self, id: &str) -> io::Result<()> {
        let dir = self.turns_dir();
        if !dir.is_dir() {
            return Ok(());
        }
        let _lock = FileLock::acquire(dir.join(LOCK_FILE))?;
        if files::remove_if_exists(&self.turns_path(id))? {
            files::sync_dir(&dir)?;
        }
        Ok(())
    }

    /// Only for a checked id.
    fn turns_path(&self, id: &str) -> PathBuf {
        self.turns_dir().join(file_name(id))
    }
}

/// `<session id>.json`.
fn is_turns_file(name: &str) -> bool {
    name.strip_suffix(EXTENSION).is_some_and(ids::is_session_id)
}

fn file_name(id: &str) -> String {
    format!("{id}{EXTENSION}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::new_session_id;
    use serde_json::json;

    fn entry(turn_id: &str, state: &str, updated_ms: u64) -> TurnEntry {
        TurnEntry {
            turn_id: turn_id.into(),
            state: state.into(),
            answer: (state == "done")
                .then(|| StoredAnswer::of(&Ok(PromptAnswer::ended(StopReason::EndTurn, turn_id)))),
            updated_ms,
        }
    }

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::at(
            dir.path().to_path_buf(),
            &crate::decisions::Decisions::built_in().turns,
        );
        (dir, store)
    }

    #[test]
    fn answers_read_back_as_they_were_kept_and_an_older_one_as_the_turn_ended() {
        let read = |v| serde_json::from_value::<StoredAnswer>(v).unwrap();
        let failed = read(json!({ "error": { "code": -32603, "message": "The model failed." } }));
        assert_eq!(
            StoredAnswer::read(Some(&failed), "t1").unwrap_err().message,
            "The model failed."
        );
        let answered = StoredAnswer::of(&Ok(PromptAnswer::ended(StopReason::Cancelled, "t1")));
        assert_eq!(read(json!(answered)), answered);
        // An older terminal kept only the stop reason: kept as it was, read as the turn ended.
        let older = json!({ "stopReason": "max_tokens" });
        assert_eq!(read(older.clone()), StoredAnswer::Unread(older.clone()));
        let ended = PromptAnswer::ended(StopReason::EndTurn, "t2");
        assert_eq!(StoredAnswer::read(Some(&read(older)), "t2"), Ok(ended.clone()));
        assert_eq!(StoredAnswer::read(None, "t2"), Ok(ended));
        let broken = read(json!({ "error": "gone" }));
        assert_eq!(
            StoredAnswer::read(Some(&broken), "t3").unwrap_err().message,
            "The turn failed."
        );
    }

    #[test]
    fn no_file_means_no_turns() {
        let (_dir, store) = store();
        assert!(store.load_turns(&new_session_id()).unwrap().is_empty());
        store.merge_turns(&new_session_id(), &[]).unwrap();
        assert!(!store.turns_dir().exists(), "merging nothing writes nothing");
    }

    #[test]
    fn an_unsynced_merge_is_read_back_and_synced_later() {
        let (_dir, store) = store();
        let id = new_session_id();
        store.merge_turns(&id, &[entry("a", "done", 1)]).unwrap();
        store.merge_turns_unsynced(&id, &[entry("b", "done", 2)]).unwrap();
        assert_eq!(
            store.load_turns(&id).unwrap(),
            vec![entry("a", "done", 1), entry("b", "done", 2)]
        );
        store.sync_turns(&id).unwrap();
        assert!(store.sync_turns("../x").is_err(), "the id is checked");
    }

    #[test]
    fn merge_adds_replaces_by_turn_id_and_keeps_the_newest() {
        let (_dir, store) = store();
        let id = new_session_id();
        store
            .merge_turns(&id, &[entry("a", "running", 10), entry("b", "queued", 11)])
            .unwrap();
        // The given entry wins over the stored one with the same id, even when older.
        store
            .merge_turns(&id, &[entry("a", "done", 5), entry("c", "queued", 12)])
            .unwrap();
        let turns = store.load_turns(&id).unwrap();
        assert_eq!(
            turns,
            vec![
                entry("a", "done", 5),
                entry("b", "queued", 11),
                entry("c", "queued", 12)
            ]
        );

        // The file is the documented shape.
        let text = std::fs::read_to_string(store.turns_path(&id)).unwrap();
        let stored: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(stored[0]["turnId"], "a");
        assert_eq!(stored[0]["answer"]["stopReason"], "end_turn");
        assert_eq!(stored[1]["answer"], Value::Null);

        let kept = crate::decisions::Decisions::built_in().turns.kept_per_session;
        let many: Vec<TurnEntry> = (0..kept + 50)
            .map(|n| entry(&format!("t{n}"), "done", 100 + n as u64))
            .collect();
        store.merge_turns(&id, &many).unwrap();
        let turns = store.load_turns(&id).unwrap();
        assert_eq!(turns.len(), kept);
        assert_eq!(turns[0].turn_id, "t50", "the oldest go first");
        assert_eq!(turns[kept - 1].turn_id, format!("t{}", kept + 49));
        assert!(turns.windows(2).all(|w| w[0].updated_ms <= w[1].updated_ms));
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(store.turns_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(
            names.iter().filter(|n| n.ends_with(".tmp")).count(),
            0,
            "{names:?}"
        );
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let (_dir, store) = store();
        let id = new_session_id();
        let writers = 4;
        let per_writer = 25;
        std::thread::scope(|scope| {
            for w in 0..writers {
                let store = store.clone();
                let id = id.clone();
                scope.spawn(move || {
                    for n in 0..per_writer {
                        let turn = entry(&format!("w{w}-{n}"), "done", (n * writers + w) as u64);
                        store.merge_turns(&id, &[turn]).unwrap();
                    }
                });
            }
        });
        let turns = store.load_turns(&id).unwrap();
        assert!(writers * per_writer <= crate::decisions::Decisions::built_in().turns.kept_per_session);
        assert_eq!(
            turns.len(),
            writers * per_writer,
            "every writer's every entry is there"
        );
    }

    #[test]
    fn an_unreadable_turns_file_is_an_error_not_an_empty_list() {
        let (_dir, store) = store();
        let id = new_session_id();
        std::fs::create_dir_all(store.turns_dir()).unwrap();
        std::fs::write(store.turns_path(&id), "{ not json").unwrap();
        let e = store.load_turns(&id).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(store.merge_turns(&id, &[entry("a", "done", 1)]).is_err());
        assert_eq!(
            std::fs::read_to_string(store.turns_path(&id)).unwrap(),
            "{ not json"
        );
    }

    #[test]
    fn prune_removes_files_untouched_for_the_configured_days() {
        let (_dir, store) = store();
        let now = SystemTime::now();
        assert_eq!(store.prune_turns(now).unwrap(), 0, "no folder: nothing to do");

        let day = Duration::from_secs(SECONDS_PER_DAY);
        let days = crate::decisions::Decisions::built_in().turns.prune_after_days as u32;
        let (old, recent, future) = (new_session_id(), new_session_id(), new_session_id());
        for id in [&old, &recent, &future] {
            store.merge_turns(id, &[entry("a", "done", 1)]).unwrap();
        }
        let set = |id: &str, at: SystemTime| {
            let file = std::fs::File::options()
                .append(true)
                .open(store.turns_path(id))
                .unwrap();
            file.set_modified(at).unwrap();
        };
        set(&old, now - day * days - Duration::from_secs(1));
        set(&recent, now - day * (days - 1));
        set(&future, now + day);
        // A temporary a killed writer left, and a file that is not a turns file.
        std::fs::write(store.turns_dir().join(format!(".{recent}.json.1.00ff.tmp")), "[").unwrap();
        std::fs::write(store.turns_dir().join("notes.json"), "[]").unwrap();
        let file = std::fs::File::options()
            .append(true)
            .open(store.turns_dir().join("notes.json"))
            .unwrap();
        file.set_modified(now - day * days * 2).unwrap();

        assert_eq!(store.prune_turns(now).unwrap(), 1);
        assert!(!store.turns_path(&old).exists());
        assert!(store.load_turns(&old).unwrap().is_empty());
        assert_eq!(store.load_turns(&recent).unwrap().len(), 1);
        assert_eq!(store.load_turns(&future).unwrap().len(), 1);
        assert!(store.turns_dir().join("notes.json").exists());
        let mut names: Vec<_> = std::fs::read_dir(store.turns_dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let mut expected = vec![
            ".lock".to_string(),
            "notes.json".into(),
            file_name(&recent),
            file_name(&future),
        ];
        expected.sort();
        assert_eq!(names, expected);
        assert_eq!(store.prune_turns(now).unwrap(), 0);
    }
}
