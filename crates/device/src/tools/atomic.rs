//! Replacing a file so that a reader only ever sees the old content or the new one: the new bytes
//! go to a temporary file in the same folder (so the rename stays on one file system), flushed,
//! then renamed over the old one.

#[cfg(not(unix))]
use std::fs;
use std::io;
use std::path::Path;

use super::opened;

/// Writes `bytes` to `path` atomically, keeping an existing file's permissions. A read-only file
/// is refused, as an editor would: the rename alone would get past its permission.
pub fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, false)
}

/// [`replace_file`] for a path a tool call planned (resolved, so its folder has no symlink on the
/// way): the folder is opened first and checked ([`opened::open_folder`]), and the temporary file
/// is made and renamed relative to that open folder, so a folder swapped for a symlink after the
/// permission was decided cannot send the write elsewhere.
pub fn replace_planned(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, bytes, true)
}

fn replace(path: &Path, bytes: &[u8], checked: bool) -> io::Result<()> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file path"));
    };
    let temporary = format!(
        ".{}.lembas-{}-{:016x}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        fastrand::u64(..)
    );
    #[cfg(unix)]
    {
        let folder = if checked {
            opened::open_folder(folder)?
        } else {
            opened::open_folder_unchecked(folder)?
        };
        in_folder::replace(&folder, name, std::ffi::OsStr::new(&temporary), bytes)
    }
    #[cfg(not(unix))]
    {
        let _ = checked;
        by_path(path, &folder.join(temporary), bytes)
    }
}

#[cfg(not(unix))]
fn by_path(path: &Path, temporary: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::fs::OpenOptions;
    use std::io::Write;
    let permissions = match fs::metadata(path) {
        Ok(metadata) if metadata.permissions().readonly() => {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        Ok(metadata) => Some(metadata.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let written = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(temporary)?;
        file.write_all(bytes)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        fs::rename(temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(temporary);
    }
    written
}

/// The same steps relative to an open folder (`*at` calls).
#[cfg(unix)]
mod in_folder {
    use std::ffi::{CString, OsStr};
    use std::fs::File;
    use std::io::{self, Write};
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;

    fn c_name(name: &OsStr) -> io::Result<CString> {
        CString::new(name.as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name with a NUL byte"))
    }

    pub fn replace(folder: &File, name: &OsStr, temporary: &OsStr, bytes: &[u8]) -> io::Result<()> {
        let dir = folder.as_raw_fd();
        let (name, temporary) = (c_name(name)?, c_name(temporary)?);
        // SAFETY: a zeroed stat is a valid out-buffer for fstatat.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `dir` is an open folder, `name` NUL-terminated, `stat` writable.
        let mode = if unsafe { libc::fstatat(dir, name.as_ptr(), &mut stat, 0) } == 0 {
            let mode = stat.st_mode as u32 & 0o7777;
            if mode & 0o222 == 0 {
                return Err(io::Error::from(io::ErrorKind::PermissionDenied));
            }
            Some(mode)
        } else {
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::NotFound {
                return Err(error);
            }
            None
        };
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: as above; the mode is passed as the variadic argument open(2) expects.
        let fd = unsafe { libc::openat(dir, temporary.as_ptr(), flags, 0o666 as libc::c_uint) };
        if fd == -1 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        let mut file = unsafe { File::from_raw_fd(fd) };
        let written = (|| {
            file.write_all(bytes)?;
            if let Some(mode) = mode {
                file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            file.sync_all()?;
            // SAFETY: both names NUL-terminated, relative to the same open folder.
            if unsafe { libc::renameat(dir, temporary.as_ptr(), dir, name.as_ptr()) } == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })();
        if written.is_err() {
            // SAFETY: as above.
            unsafe { libc::unlinkat(dir, temporary.as_ptr(), 0) };
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("a folder");
        let path = dir.path().join("a.txt");
        replace_file(&path, b"one").expect("a new file");
        replace_file(&path, b"two").expect("a replaced file");
        assert_eq!(fs::read_to_string(&path).expect("read"), "two");
        let names: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["a.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_permissions_and_refuses_a_read_only_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a folder");
        let path = dir.path().join("run.sh");
        fs::write(&path, "old").expect("write");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o750)).expect("chmod");
        replace_file(&path, b"new").expect("replaced");
        let mode = fs::metadata(&path).expect("metadata").permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);

        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).expect("chmod");
        let err = replace_file(&path, b"newer").expect_err("a read-only file");
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(fs::read_to_string(&path).expect("read"), "new");
    }
}
