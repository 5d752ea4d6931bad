//! Replacing a file so that a reader only ever sees the old content or the new one: the new bytes
//! go to a temporary file in the same folder (so the rename stays on one file system), flushed,
//! then renamed over the old one.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically, keeping an existing file's permissions. A read-only file
/// is refused, as an editor would: the rename alone would get past its permission.
pub fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file path"));
    };
    let permissions = match fs::metadata(path) {
        Ok(metadata) if metadata.permissions().readonly() => {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        Ok(metadata) => Some(metadata.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let temporary = folder.join(format!(
        ".{}.lembas-{}-{:016x}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        fastrand::u64(..)
    ));
    let written = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temporary)?;
        file.write_all(bytes)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

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
