//! One process holds a session at a time: the service for LLeMbas, or an editor's `lembas serve
//! --stdio`. Both append to `sessions/<id>.jsonl`; two writers would interleave two conversations
//! in one file. A lock file beside it (`sessions/<id>.lock`), held while the session is open in
//! memory, says who holds it; the OS lets go when the process ends, however it ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Held while the session is open; dropping it lets another process open the session.
#[derive(Debug)]
pub struct SessionHold {
    _file: File,
}

/// Why a session cannot be held; its sentence is for a person.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    /// Another process holds it: `holder` is what that process wrote ("the LLeMbas service, pid
    /// 123"), or "another LLeMbas process".
    #[error(
        "This session is open in {holder}: one process holds a session at a time. Close it there, or open a new session."
    )]
    Held { holder: String },
    #[error("The session's lock file {} cannot be used: {source}.", path.display())]
    Unusable { path: PathBuf, source: io::Error },
}

/// Takes the session's lock for `holder` ("the LLeMbas service, pid 123"), or says who holds it
/// when another process does.
pub fn hold(path: &Path, holder: &str) -> Result<SessionHold, HoldError> {
    let unusable = |source: io::Error| HoldError::Unusable {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(unusable)?;
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
            let holder = match who {
                "" => "another LLeMbas process",
                who => who,
            };
            Err(HoldError::Held {
                holder: holder.to_string(),
            })
        }
        Err(TryLockError::Error(e)) => Err(unusable(e)),
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
            matches!(&refused, HoldError::Held { holder } if holder == "the LLeMbas service (pid 1)"),
            "{refused:?}"
        );
        assert!(
            refused
                .to_string()
                .contains("open in the LLeMbas service (pid 1)"),
            "{refused}"
        );
        drop(first);
        assert!(hold(&path, "an editor").is_ok());
    }
}
