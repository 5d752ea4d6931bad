//! Replacing `config.yaml` so that a reader only ever sees the old file or the new one, and so that
//! what another writer saved between our read and our rename is never silently lost.
//!
//! Writers that go through here take an advisory lock on the folder (Unix), so they queue up; a
//! writer that does not (an editor, another tool) is caught by re-reading the file just before the
//! rename and redoing the edit on what it now holds.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::SettingsError;

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
    let folder = FolderLock::acquire(&dir).map_err(write_err)?;
    // Holding the lock, no cooperating writer has a temporary file in flight: any left is from a
    // writer that was killed, and is removed so they do not pile up.
    remove_stale_temporaries(&dir, &name);

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
        let mode = match &original {
            Some(_) => fs::metadata(&target).map(|m| m.permissions()).ok(),
            None => None,
        };
        let temporary = Temporary::write(&dir, &name, new_text.as_bytes(), mode).map_err(write_err)?;
        before_commit();
        if read_bytes(&target)? != original {
            // Someone else saved in between: drop ours and redo the edit on what they wrote.
            continue;
        }
        temporary.rename_over(&target).map_err(write_err)?;
        folder.sync().map_err(write_err)?;
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

fn temporary_prefix(name: &str) -> String {
    format!(".{name}.")
}

const TEMPORARY_SUFFIX: &str = ".tmp";

fn remove_stale_temporaries(dir: &Path, name: &str) {
    let prefix = temporary_prefix(name);
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        if file_name.starts_with(&prefix) && file_name.ends_with(TEMPORARY_SUFFIX) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The new content, written and flushed to disk next to the file it will replace; removed again
/// unless it was renamed into place.
struct Temporary {
    path: PathBuf,
    renamed: bool,
}

impl Temporary {
    fn write(dir: &Path, name: &str, bytes: &[u8], mode: Option<fs::Permissions>) -> io::Result<Self> {
        let path = dir.join(format!(
            "{}{}.{:016x}{TEMPORARY_SUFFIX}",
            temporary_prefix(name),
            std::process::id(),
            fastrand::u64(..)
        ));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&path)?;
        // From here on the guard removes the file whatever fails.
        let temporary = Self { path, renamed: false };
        file.write_all(bytes)?;
        // The umask may have narrowed the bits at creation; set them exactly.
        match mode {
            Some(permissions) => file.set_permissions(permissions)?,
            #[cfg(unix)]
            None => file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?,
            #[cfg(not(unix))]
            None => {}
        }
        file.sync_all()?;
        Ok(temporary)
    }

    fn rename_over(mut self, target: &Path) -> io::Result<()> {
        fs::rename(&self.path, target)?;
        self.renamed = true;
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// An exclusive advisory lock on the config folder, released when dropped (or when the process
/// dies). Also the handle used to flush the rename to disk.
struct FolderLock {
    #[cfg(unix)]
    folder: fs::File,
}

impl FolderLock {
    #[cfg(unix)]
    fn acquire(dir: &Path) -> io::Result<Self> {
        use std::os::fd::AsRawFd;
        let folder = fs::File::open(dir)?;
        loop {
            // SAFETY: flock on a descriptor this struct owns for as long as the lock is held.
            if unsafe { libc::flock(folder.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Self { folder });
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

    /// Makes the rename itself durable.
    fn sync(&self) -> io::Result<()> {
        #[cfg(unix)]
        self.folder.sync_all()?;
        Ok(())
    }
}
