//! Opening the place a call was planned for, and only that place. The plan resolved the path
//! (symlinks followed) and the permission was decided on it; between that and the open, a folder
//! on the way could be swapped for a symlink leading out of the roots. So every file or folder a
//! tool reads or writes through is opened first, and what the open really reached (the kernel's
//! own path of the open file) must be the planned path, or nothing is read or written.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The error when the path led elsewhere at open time; its text ends up in the tool's sentence.
pub fn moved(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} changed while it was being opened (a symlink was swapped in on the way), so it was left alone",
        path.display()
    ))
}

/// Opens `path` (a file) for reading, checked: it must be a regular file. A FIFO the model made
/// (`mkfifo pipe.log`) would hang the read for good, a device file could be anything: the open
/// does not wait for a writer (`O_NONBLOCK`), and what is not a regular file is refused.
pub fn open_file(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)?
    };
    #[cfg(not(unix))]
    let file = File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular(path));
    }
    #[cfg(unix)]
    blocking(&file)?;
    check(&file, path)?;
    Ok(file)
}

/// The error for a path that is not a regular file where one is read.
pub fn not_regular(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} is not a regular file (a FIFO, a socket or a device): only regular files are read",
        path.display()
    ))
}

/// Reads from a regular file block as usual again (the open was non-blocking for FIFOs' sake).
#[cfg(unix)]
fn blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Opens `path` (a folder), checked: for writing inside it relative to this very folder.
pub fn open_folder(path: &Path) -> io::Result<File> {
    let folder = open_folder_unchecked(path)?;
    check(&folder, path)?;
    Ok(folder)
}

/// Opens `path` (a folder) wherever it leads: for the device's own folders, not a tool's path.
pub fn open_folder_unchecked(path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    let folder = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)?
    };
    #[cfg(not(unix))]
    let folder = File::open(path)?;
    Ok(folder)
}

/// A folder opened checked before a walk by path (`ls`, `glob`, a mentioned folder), to confirm
/// afterwards that every name the walk found is really beneath this very folder: a folder swapped
/// for a symlink during the walk would otherwise have its names listed.
// Windows has no descriptor-relative walk yet: the folder is only kept open.
pub struct Pinned(#[cfg_attr(not(unix), allow(dead_code))] File);

impl Pinned {
    pub fn open(path: &Path) -> io::Result<Pinned> {
        open_folder(path).map(Pinned)
    }

    /// Whether `relative` is beneath the pinned folder, reached name by name from the open folder
    /// without following any symlink.
    #[cfg(unix)]
    pub fn holds(&self, relative: &Path) -> bool {
        use std::ffi::CString;
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
        use std::path::Component;
        let names: Vec<&std::ffi::OsStr> = relative
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(Ok(name)),
                Component::CurDir => None,
                _ => Some(Err(())),
            })
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        let Some((last, folders)) = names.split_last() else {
            return false;
        };
        let mut held: Option<OwnedFd> = None;
        for name in folders {
            let Ok(name) = CString::new(name.as_bytes()) else {
                return false;
            };
            let dir = held.as_ref().map_or(self.0.as_raw_fd(), |fd| fd.as_raw_fd());
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: `dir` is an open folder and `name` NUL-terminated.
            let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
            if fd == -1 {
                return false;
            }
            // SAFETY: `fd` was just opened and is owned by nothing else.
            held = Some(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let Ok(last) = CString::new(last.as_bytes()) else {
            return false;
        };
        let dir = held.as_ref().map_or(self.0.as_raw_fd(), |fd| fd.as_raw_fd());
        // SAFETY: a zeroed stat is a valid out-buffer; `dir` open, `last` NUL-terminated.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        unsafe { libc::fstatat(dir, last.as_ptr(), &mut stat, libc::AT_SYMLINK_NOFOLLOW) == 0 }
    }

    #[cfg(not(unix))]
    pub fn holds(&self, _relative: &Path) -> bool {
        true
    }
}

/// Reads a whole file, checked.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    open_file(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads a whole UTF-8 file, checked.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))
}

/// Fails with [`moved`] when `file` is not at `path`.
pub fn check(file: &File, path: &Path) -> io::Result<()> {
    match path_of(file) {
        Some(real) if real != path => Err(moved(path)),
        _ => Ok(()),
    }
}

/// Where the kernel says an open file is; `None` where it cannot say (then nothing is checked).
#[cfg(target_os = "linux")]
fn path_of(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(target_os = "macos")]
fn path_of(file: &File) -> Option<PathBuf> {
    use std::ffi::OsStr;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let mut buffer = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: F_GETPATH writes at most PATH_MAX bytes, NUL-terminated, into the buffer.
    let done = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETPATH, buffer.as_mut_ptr()) };
    if done == -1 {
        return None;
    }
    let end = buffer.iter().position(|b| *b == 0)?;
    Some(PathBuf::from(OsStr::from_bytes(&buffer[..end])))
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn path_of(_file: &File) -> Option<PathBuf> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_folder_swapped_for_a_symlink_is_not_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(base.join("inside/d")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(base.join("inside/d/f.txt"), "inside").unwrap();
        std::fs::write(base.join("outside/f.txt"), "SECRET").unwrap();
        let planned = base.join("inside/d/f.txt");
        assert_eq!(read_to_string(&planned).unwrap(), "inside");
        std::fs::rename(base.join("inside/d"), base.join("d-was")).unwrap();
        std::os::unix::fs::symlink(base.join("outside"), base.join("inside/d")).unwrap();
        let refused = read_to_string(&planned).unwrap_err();
        assert!(refused.to_string().contains("changed while"), "{refused}");
        assert!(open_folder(&base.join("inside/d")).is_err());
        // Names found by path are confirmed beneath the folder pinned before.
        std::fs::create_dir_all(base.join("tree/sub")).unwrap();
        std::fs::write(base.join("tree/sub/a.txt"), "a").unwrap();
        let pinned = Pinned::open(&base.join("tree")).unwrap();
        assert!(pinned.holds(Path::new("sub/a.txt")) && pinned.holds(Path::new("sub")));
        assert!(!pinned.holds(Path::new("sub/b.txt")) && !pinned.holds(Path::new("../tree/sub")));
        std::fs::rename(base.join("tree/sub"), base.join("sub-was")).unwrap();
        std::os::unix::fs::symlink(base.join("sub-was"), base.join("tree/sub")).unwrap();
        assert!(
            !pinned.holds(Path::new("sub/a.txt")),
            "a symlink on the way is not followed"
        );
        std::fs::rename(base.join("tree"), base.join("tree-was")).unwrap();
        std::os::unix::fs::symlink(base.join("outside"), base.join("tree")).unwrap();
        assert!(
            !pinned.holds(Path::new("f.txt")),
            "the pinned folder, not what its path leads to now"
        );
        assert!(open_folder(&base.join("outside")).is_ok());
    }
}
