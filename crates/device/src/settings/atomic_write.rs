//! Replacing `config.yaml` so that a reader only ever sees the old file or the new one, and so that
//! what another writer saved between our read and our rename is never silently lost.
//!
//! Writers that go through here take an advisory lock on the folder (Unix), so they queue up; a
//! writer that does not (an editor, another tool) is caught by re-reading the file just before the
//! rename and redoing the edit on what it now holds.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::SettingsError;
use crate::whole_file::{self, Durability, Mode, Staged};

/// How often the edit is redone on fresh content before giving up.
pub(super) const MAX_ATTEMPTS: usize = 8;

/// What an edit is given and must return: the whole text of the file ("" when there is none).
pub(super) type EditText<'a> = dyn FnMut(&str) -> Result<String, SettingsError> + 'a;

/// Reads the file at `path`, computes its new text with `edit` and replaces it atomically; returns
/// the text the file now holds. When `edit` returns its input unchanged, nothing is written.
/// `before_commit` runs after the new text is safely in the temporary file and before the re-check
/// and rename: tests use it to play another writer.
pub(super) fn update(
    path: &Path,
    edit: &mut EditText<'_>,
    before_commit: &mut dyn FnMut(),
) -> Result<String, SettingsError> {
    let target = write_target(path);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| SettingsError::Refused(format!("{} does not name a file", path.display())))?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let write_err = |source| SettingsError::Write {
        path: target.clone(),
        source,
    };
    crate::paths::ensure_private_dir(&dir).map_err(write_err)?;
    let _lock = FolderLock::acquire(&dir).map_err(write_err)?;
    // Holding the lock, no cooperating writer has a temporary file in flight: any left is from a
    // writer that was killed, and is removed so they do not pile up.
    whole_file::remove_stale_temporaries(&dir, |target| target == name);

    for _ in 0..MAX_ATTEMPTS {
        let original = read_bytes(&target)?;
        let old_text = match &original {
            None => "",
            Some(bytes) => std::str::from_utf8(bytes).map_err(|e| SettingsError::Invalid {
                path: target.clone(),
                line: None,
                message: format!("it is not UTF-8 text ({e})"),
            })?,
        };
        let new_text = edit(old_text)?;
        if new_text == old_text {
            return Ok(new_text);
        }
        // The user's file keeps its permissions; a new one is private.
        let mode = match &original {
            Some(_) => fs::metadata(&target)
                .map(|m| Mode::of(&m))
                .unwrap_or(Mode::PRIVATE),
            None => Mode::PRIVATE,
        };
        let staged =
            Staged::write(&target, new_text.as_bytes(), mode, Durability::Synced).map_err(write_err)?;
        before_commit();
        if read_bytes(&target)? != original {
            // Someone else saved in between: drop ours and redo the edit on what they wrote.
            continue;
        }
        staged.put_in_place().map_err(write_err)?;
        return Ok(new_text);
    }
    Err(SettingsError::Contended {
        path: target,
        attempts: MAX_ATTEMPTS,
    })
}

/// A `config.yaml` that is a symbolic link (dotfiles kept elsewhere) stays one: the file it points to
/// is what gets replaced.
fn write_target(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => crate::paths::resolved(path),
        _ => path.to_owned(),
    }
}

fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>, SettingsError> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SettingsError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// An exclusive advisory lock on the config folder, released when dropped (or when the process
/// dies).
struct FolderLock {
    #[cfg(unix)]
    _folder: fs::File,
}

impl FolderLock {
    #[cfg(unix)]
    fn acquire(dir: &Path) -> io::Result<Self> {
        use std::os::fd::AsRawFd;
        let folder = fs::File::open(dir)?;
        loop {
            // SAFETY: flock on a descriptor this struct owns for as long as the lock is held.
            if unsafe { libc::flock(folder.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Self { _folder: folder });
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    #[cfg(not(unix))]
    fn acquire(_dir: &Path) -> io::Result<Self> {
        Ok(Self {})
    }
}
