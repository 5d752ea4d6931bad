//! Replacing a file a tool writes so that a reader only ever sees the old content or the new one
//! ([`crate::whole_file`]), keeping the file's permissions and refusing a read-only one.

use std::io;
use std::path::Path;

#[cfg(unix)]
use super::opened;
use crate::whole_file::{self, Mode};

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
    #[cfg(unix)]
    {
        let folder = if checked {
            opened::open_folder(folder)?
        } else {
            opened::open_folder_unchecked(folder)?
        };
        let mode = kept_mode(&folder, name)?;
        whole_file::write_in(&folder, name, bytes, mode, whole_file::Durability::Synced)
    }
    #[cfg(not(unix))]
    {
        let _ = (checked, folder, name);
        let mode = match std::fs::metadata(path) {
            Ok(metadata) if metadata.permissions().readonly() => {
                return Err(io::Error::from(io::ErrorKind::PermissionDenied));
            }
            Ok(metadata) => Mode::of(&metadata),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Mode::New,
            Err(e) => return Err(e),
        };
        whole_file::write(path, bytes, mode)
    }
}

/// The mode of `name` in the open folder (following a symlink, as the write does), for its
/// replacement; a new file's when there is none. A file no one may write is refused.
#[cfg(unix)]
fn kept_mode(folder: &std::fs::File, name: &std::ffi::OsStr) -> io::Result<Mode> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name with a NUL byte"))?;
    // SAFETY: a zeroed stat is a valid out-buffer for fstatat.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `folder` is an open folder, `name` NUL-terminated, `stat` writable.
    if unsafe { libc::fstatat(folder.as_raw_fd(), name.as_ptr(), &mut stat, 0) } == 0 {
        let mode = stat.st_mode as u32 & 0o7777;
        if mode & 0o222 == 0 {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        return Ok(Mode::Exactly(mode));
    }
    let error = io::Error::last_os_error();
    if error.kind() == io::ErrorKind::NotFound {
        Ok(Mode::New)
    } else {
        Err(error)
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
