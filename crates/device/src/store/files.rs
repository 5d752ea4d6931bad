//! The file handling the store's parts share: private folders, whole-file reads, replacing a file
//! atomically and an exclusive lock on a lock file.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use crate::whole_file::{self, Mode};

/// The store's folders are private (conversations are in there).
pub(super) use crate::paths::ensure_private_dir as ensure_dir;

/// Options for a new file only its owner can read, so a session never exists world-readable even
/// for an instant.
pub(super) fn private_new_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// The whole file, or None when there is none.
pub(super) fn read_if_exists(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes a file; false when there was none.
pub(super) fn remove_if_exists(path: &Path) -> io::Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Removes a folder and everything in it; nothing to do when it is not there.
pub(super) fn remove_dir_if_exists(dir: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Makes a creation, rename or removal in `dir` itself durable.
pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Replaces `dir/name` with `bytes`, private, so that a reader sees the old file or the new one,
/// never a part ([`whole_file`]).
pub(super) fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    ensure_dir(dir)?;
    whole_file::write(&dir.join(name), bytes, Mode::PRIVATE)
}

/// `write_atomic` without waiting for the disk: the new file survives the process being killed at
/// once, and is made durable by a later `sync_file`.
pub(super) fn replace_unsynced(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    ensure_dir(dir)?;
    whole_file::write_unsynced(&dir.join(name), bytes, Mode::PRIVATE)
}

/// Waits for the disk to hold `dir/name` and the folder's entry for it.
pub(super) fn sync_file(dir: &Path, name: &str) -> io::Result<()> {
    // Opened for writing: Windows flushes only a handle that may write (a read-only one is
    // "access denied").
    OpenOptions::new().write(true).open(dir.join(name))?.sync_all()?;
    sync_dir(dir)
}

/// Removes the temporary files `write_atomic` left in `dir` when its writer was killed, for the
/// files whose names `is_target` accepts. Only call it holding the lock those writers take: then no
/// temporary is in flight.
pub(super) use whole_file::remove_stale_temporaries;

/// An exclusive advisory lock (flock on Unix) on a lock file that is never removed, held until
/// dropped or until the process ends however it ends. Every process writing the same file takes
/// the same one, so their read-modify-writes queue up instead of overwriting each other.
pub(super) struct FileLock {
    _file: File,
}

impl FileLock {
    pub(super) fn acquire(path: PathBuf) -> io::Result<FileLock> {
        if let Some(dir) = path.parent() {
            ensure_dir(dir)?;
        }
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path)?;
        loop {
            match file.lock() {
                Ok(()) => return Ok(FileLock { _file: file }),
                // A signal arrived while waiting: wait again.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_leave_only_the_file_and_stale_temporaries_go() {
        let dir = tempfile::tempdir().unwrap();
        write_atomic(dir.path(), "f.json", b"1").unwrap();
        write_atomic(dir.path(), "f.json", b"2").unwrap();
        assert_eq!(std::fs::read(dir.path().join("f.json")).unwrap(), b"2");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

        std::fs::write(dir.path().join(".f.json.77.abc.tmp"), "stale").unwrap();
        std::fs::write(dir.path().join(".g.json.77.abc.tmp"), "someone else's").unwrap();
        remove_stale_temporaries(dir.path(), |target| target == "f.json");
        assert!(!dir.path().join(".f.json.77.abc.tmp").exists());
        assert!(dir.path().join(".g.json.77.abc.tmp").exists());
        assert!(dir.path().join("f.json").exists());
    }
}
