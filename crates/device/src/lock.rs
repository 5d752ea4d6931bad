//! One device per user: a lock file in the state folder, held for the runtime's life. The holder
//! writes its pid and what it is, so a second one can say who holds it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use crate::paths::Dirs;

/// Held while alive; the OS releases the lock when the process ends, however it ends.
#[derive(Debug)]
pub struct DeviceLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another LLeMbas device runtime is already running for this user: {holder}. Stop it first (one device per user)."
    )]
    Held { holder: String },
    #[error(
        "cannot use the lock file {path}: {source}. Its folder must be a folder you can write: fix it, or move it away to start afresh, then start again."
    )]
    Io { path: PathBuf, source: std::io::Error },
}

pub fn lock_file(dirs: &Dirs) -> PathBuf {
    dirs.state.join("device.lock")
}

const PROBE_RETRIES: u32 = 25;
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Takes the lock, saying `what` holds it (e.g. "lembas service run").
pub fn acquire(dirs: &Dirs, what: &str) -> Result<DeviceLock, LockError> {
    let path = lock_file(dirs);
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    // `holder()` in another process (`lembas status`, the tray's poll) holds the lock for an
    // instant to look: a start that meets only such a probe tries again rather than failing.
    let mut probes = 0;
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) if probes < PROBE_RETRIES => {
                probes += 1;
                std::thread::sleep(PROBE_WAIT);
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if holder.is_empty() {
                    "a process that has not said its name yet".to_string()
                } else {
                    holder.to_string()
                };
                return Err(LockError::Held { holder });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    file.set_len(0).map_err(io)?;
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    write!(file, "{what} (pid {})", std::process::id()).map_err(io)?;
    file.flush().map_err(io)?;
    Ok(DeviceLock { _file: file })
}

/// Who holds the lock now, if anyone (for `lembas status` and the tray app).
pub fn holder(dirs: &Dirs) -> Option<String> {
    let path = lock_file(dirs);
    let mut file = OpenOptions::new().read(true).write(true).open(&path).ok()?;
    // Shared: two probes never fail each other, and the runtime's exclusive lock still shows.
    match file.try_lock_shared() {
        Ok(()) => None, // nobody: dropping the file releases our probe
        Err(_) => {
            let mut holder = String::new();
            file.read_to_string(&mut holder).ok()?;
            Some(holder.trim().to_string())
        }
    }
}
