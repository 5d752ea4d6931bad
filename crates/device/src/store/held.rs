//! One process holds a session at a time: the service for LLeMbas, or an editor's `lembas serve
//! --stdio`. Both append to `sessions/<id>.jsonl`; two writers would interleave two conversations
//! in one file. A lock file beside it (`sessions/<id>.lock`), held while the session is open in
//! memory, says who holds it; the OS lets go when the process ends, however it ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Held while the session is open; dropping it lets another process open the session.
#[derive(Debug)]
pub struct SessionHold {
    _file: File,
}

/// Takes the session's lock for `holder` ("the LLeMbas service, pid 123"); the sentence naming
/// who holds it when another process does.
pub fn hold(path: &Path, holder: &str) -> Result<SessionHold, String> {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| format!("The session's lock file {} cannot be used: {e}.", path.display()))?;
    match file.try_lock() {
        Ok(()) => {
            // Who holds it, for the next one to say; best effort (the lock is what counts).
            let _ = file.set_len(0);
            let _ = file.seek(SeekFrom::Start(0));
            let _ = file.write_all(holder.as_bytes());
            Ok(SessionHold { _file: file })
        }
        Err(TryLockError::WouldBlock) => {
            let mut who = String::new();
            let _ = file.read_to_string(&mut who);
            let who = who.trim();
            let who = if who.is_empty() {
                "another LLeMbas process"
            } else {
                who
            };
            Err(format!(
                "This session is open in {who}: one process holds a session at a time. Close it there, or open a new session."
            ))
        }
        Err(TryLockError::Error(e)) => Err(format!(
            "The session's lock file {} cannot be used: {e}.",
            path.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_told_who_holds_it_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ses_x.lock");
        let first = hold(&path, "the LLeMbas service (pid 1)").unwrap();
        // Another open file description in this process stands in for another process: flock
        // locks belong to the open file, so this is refused as another process is.
        let refused = hold(&path, "an editor").unwrap_err();
        assert!(
            refused.contains("open in the LLeMbas service (pid 1)"),
            "{refused}"
        );
        drop(first);
        assert!(hold(&path, "an editor").is_ok());
    }
}
