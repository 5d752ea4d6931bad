//! The file handling the store's parts share: private folders, whole-file reads, replacing a file
//! atomically and an exclusive lock on a lock file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Creates `dir` and its parents when missing, private to the user on Unix (conversations are in
/// there).
pub(super) fn ensure_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

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

/// Makes a creation, rename or removal in `dir` itself durable.
pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

const TEMPORARY_SUFFIX: &str = ".tmp";

/// Replaces `dir/name` with `bytes` so that a reader sees the old file or the new one, never a
/// part: a temporary file beside it, flushed to disk, renamed over it.
pub(super) fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    ensure_dir(dir)?;
    let temporary = dir.join(format!(
        ".{name}.{}.{:016x}{TEMPORARY_SUFFIX}",
        std::process::id(),
        fastrand::u64(..)
    ));
    let written = (|| {
        let mut file = private_new_file().open(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temporary, dir.join(name))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written?;
    sync_dir(dir)
}

/// Removes the temporary files `write_atomic` left in `dir` for files named `<something><ending>`
/// when its writer was killed. Only call it holding the lock those writers take: then no temporary
/// is in flight.
pub(super) fn remove_stale_temporaries(dir: &Path, ending: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let ending = format!("{ending}.");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(TEMPORARY_SUFFIX) && name.contains(&ending) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

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
