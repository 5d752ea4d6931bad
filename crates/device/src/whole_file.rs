//! Writing a file whole or not at all: the new bytes go to a temporary file in the same folder (so
//! the rename stays on one file system), made with a name no other writer has (`create_new`), given
//! the mode the caller asks, flushed to disk, renamed over the target, and the folder flushed so
//! the rename itself survives a crash. A reader finds the old content or the new, never a part; a
//! write that fails leaves the target as it was and no temporary behind.
//!
//! Every file the device replaces goes through here; the callers keep what is theirs (which folder
//! to create and how private, whose permissions to keep, a read-only file refused).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
#[cfg(not(unix))]
use std::path::PathBuf;

/// The permissions the new file ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// What any new file gets: 0666 less the umask.
    New,
    /// These bits exactly, whatever the umask (on Unix; elsewhere a new file's). The file is
    /// readable by its owner only from its first byte until they are set.
    Exactly(u32),
}

impl Mode {
    /// Readable and writable by the owner only.
    pub const PRIVATE: Mode = Mode::Exactly(0o600);

    /// The permissions an existing file has, to give them to its replacement.
    pub fn of(metadata: &std::fs::Metadata) -> Mode {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            Mode::Exactly(metadata.permissions().mode() & 0o7777)
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            Mode::New
        }
    }
}

/// Whether the write waits for the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// The file and the folder's entry for it are on disk before the write returns.
    Synced,
    /// The new file survives the process being killed, not the machine losing power: for a file
    /// rewritten often whose loss costs little, or one the caller syncs later itself.
    Unsynced,
}

/// Replaces `path` with `bytes`, on disk before it returns. The folder must exist.
pub fn write(path: &Path, bytes: &[u8], mode: Mode) -> io::Result<()> {
    Staged::write(path, bytes, mode, Durability::Synced)?.put_in_place()
}

/// [`write`] without waiting for the disk ([`Durability::Unsynced`]).
pub fn write_unsynced(path: &Path, bytes: &[u8], mode: Mode) -> io::Result<()> {
    Staged::write(path, bytes, mode, Durability::Unsynced)?.put_in_place()
}

/// Replaces the file `name` in an open `folder`, every step relative to that folder: a folder
/// swapped for a symlink after it was opened cannot send the write elsewhere.
#[cfg(unix)]
pub fn write_in(
    folder: &File,
    name: &OsStr,
    bytes: &[u8],
    mode: Mode,
    durability: Durability,
) -> io::Result<()> {
    let folder = Folder::Open(folder.try_clone()?);
    Staged::write_to(folder, name, bytes, mode, durability)?.put_in_place()
}

/// The new content, written next to the file it will replace and not yet renamed over it: a
/// caller can check the target once more before [`Staged::put_in_place`]. Dropped unplaced, the
/// temporary file is removed.
pub struct Staged {
    folder: Folder,
    name: OsString,
    temporary: OsString,
    durability: Durability,
    placed: bool,
}

/// Where the temporary file and the target are: an open folder (Unix), or a folder's path.
enum Folder {
    #[cfg(unix)]
    Open(File),
    #[cfg(not(unix))]
    Path(PathBuf),
}

impl Staged {
    /// Writes `bytes` to a new temporary file beside `path`.
    pub fn write(path: &Path, bytes: &[u8], mode: Mode, durability: Durability) -> io::Result<Staged> {
        let Some(name) = path.file_name() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} does not name a file", path.display()),
            ));
        };
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        #[cfg(unix)]
        let folder = Folder::Open(open_folder(folder)?);
        #[cfg(not(unix))]
        let folder = Folder::Path(folder.to_owned());
        Staged::write_to(folder, name, bytes, mode, durability)
    }

    fn write_to(
        folder: Folder,
        name: &OsStr,
        bytes: &[u8],
        mode: Mode,
        durability: Durability,
    ) -> io::Result<Staged> {
        let (temporary, mut file) = create_temporary(&folder, name, mode)?;
        // From here on, dropping `staged` removes the temporary whatever fails.
        let staged = Staged {
            folder,
            name: name.to_owned(),
            temporary,
            durability,
            placed: false,
        };
        file.write_all(bytes)?;
        #[cfg(unix)]
        if let Mode::Exactly(bits) = mode {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(bits))?;
        }
        #[cfg(not(unix))]
        let _ = mode;
        if durability == Durability::Synced {
            file.sync_all()?;
        }
        Ok(staged)
    }

    /// Renames the new content over the target (and, when synced, flushes the folder).
    pub fn put_in_place(mut self) -> io::Result<()> {
        self.folder.rename(&self.temporary, &self.name)?;
        self.placed = true;
        if self.durability == Durability::Synced {
            self.folder.sync()?;
        }
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.placed {
            let _ = self.folder.remove(&self.temporary);
        }
    }
}

/// How many fresh names are tried when one is taken (by a temporary a killed writer left).
const NAME_TRIES: usize = 8;

/// A new temporary file for `name`, made so that no other writer can have it open: private until
/// the caller's mode is set, or a new file's mode when the caller asks for that.
fn create_temporary(folder: &Folder, name: &OsStr, mode: Mode) -> io::Result<(OsString, File)> {
    let mut last = None;
    for _ in 0..NAME_TRIES {
        let temporary = temporary_name(name);
        match folder.create_new(&temporary, mode) {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

const TEMPORARY_SUFFIX: &str = ".tmp";

/// `.<name>.<pid>.<random>.tmp`: hidden, beside its target, named after it (so a stale one can be
/// told by [`temporary_target`]), and unique to this writer.
fn temporary_name(name: &OsStr) -> OsString {
    let mut temporary = OsString::from(".");
    temporary.push(name);
    temporary.push(format!(
        ".{}.{:016x}{TEMPORARY_SUFFIX}",
        std::process::id(),
        fastrand::u64(..)
    ));
    temporary
}

/// The file a temporary of this module was for: `.<target>.<pid>.<random>.tmp` gives `<target>`.
pub fn temporary_target(name: &str) -> Option<&str> {
    let inner = name.strip_prefix('.')?.strip_suffix(TEMPORARY_SUFFIX)?;
    let mut parts = inner.rsplitn(3, '.');
    let random = parts.next()?;
    let pid = parts.next()?;
    let target = parts.next()?;
    let is_number = |s: &str, radix| !s.is_empty() && u64::from_str_radix(s, radix).is_ok();
    (is_number(random, 16) && is_number(pid, 10)).then_some(target)
}

/// Removes the temporaries left in `dir` by writers that were killed, for the targets `is_target`
/// accepts. Only call it holding the lock those writers take: then none is in flight.
pub fn remove_stale_temporaries(dir: &Path, is_target: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(target) = name.to_str().and_then(temporary_target) else {
            continue;
        };
        if is_target(target) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
fn open_folder(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(path)
}

#[cfg(unix)]
fn c_name(name: &OsStr) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name with a NUL byte"))
}

#[cfg(unix)]
fn check(result: libc::c_int) -> io::Result<()> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

impl Folder {
    fn create_new(&self, temporary: &OsStr, mode: Mode) -> io::Result<File> {
        match self {
            #[cfg(unix)]
            Folder::Open(folder) => {
                use std::os::fd::{AsRawFd, FromRawFd};
                let temporary = c_name(temporary)?;
                let flags =
                    libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
                // Private until the caller's bits are set; a new file's mode otherwise.
                let mode: libc::c_uint = match mode {
                    Mode::New => 0o666,
                    Mode::Exactly(_) => 0o600,
                };
                // SAFETY: an open folder, a NUL-terminated name; the mode is the variadic argument
                // open(2) expects with O_CREAT.
                let fd = unsafe { libc::openat(folder.as_raw_fd(), temporary.as_ptr(), flags, mode) };
                check(fd)?;
                // SAFETY: `fd` was just opened and is owned by nothing else.
                Ok(unsafe { File::from_raw_fd(fd) })
            }
            #[cfg(not(unix))]
            Folder::Path(dir) => {
                let _ = mode;
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(dir.join(temporary))
            }
        }
    }

    fn rename(&self, temporary: &OsStr, name: &OsStr) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Folder::Open(folder) => {
                use std::os::fd::AsRawFd;
                let (temporary, name) = (c_name(temporary)?, c_name(name)?);
                let dir = folder.as_raw_fd();
                // SAFETY: both names NUL-terminated, relative to the same open folder.
                check(unsafe { libc::renameat(dir, temporary.as_ptr(), dir, name.as_ptr()) })
            }
            #[cfg(not(unix))]
            Folder::Path(dir) => std::fs::rename(dir.join(temporary), dir.join(name)),
        }
    }

    fn remove(&self, temporary: &OsStr) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Folder::Open(folder) => {
                use std::os::fd::AsRawFd;
                let temporary = c_name(temporary)?;
                // SAFETY: a NUL-terminated name relative to an open folder.
                check(unsafe { libc::unlinkat(folder.as_raw_fd(), temporary.as_ptr(), 0) })
            }
            #[cfg(not(unix))]
            Folder::Path(dir) => std::fs::remove_file(dir.join(temporary)),
        }
    }

    /// Makes the rename durable: the folder's entry for the new file is on disk.
    fn sync(&self) -> io::Result<()> {
        match self {
            #[cfg(unix)]
            Folder::Open(folder) => folder.sync_all(),
            #[cfg(not(unix))]
            // Elsewhere a folder cannot be opened to flush it; the file itself was.
            Folder::Path(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_content_is_whole_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write(&path, b"first", Mode::PRIVATE).unwrap();
        write(&path, b"second, longer", Mode::PRIVATE).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
        write_unsynced(&path, b"3", Mode::New).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"3");
        assert_eq!(names(dir.path()), ["f.json"]);
    }

    #[test]
    fn a_failed_write_leaves_the_target_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        // The rename fails after the temporary is written: the target is a folder with a file in it.
        let target = dir.path().join("taken");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "kept").unwrap();
        assert!(write(&target, b"new", Mode::PRIVATE).is_err());
        assert_eq!(names(dir.path()), ["taken"]);
        assert_eq!(std::fs::read_to_string(target.join("inside")).unwrap(), "kept");

        // The folder is not one: nothing is made anywhere.
        let file = dir.path().join("plain");
        std::fs::write(&file, "plain").unwrap();
        assert!(write(&file.join("f.json"), b"new", Mode::PRIVATE).is_err());
        assert_eq!(names(dir.path()), ["plain", "taken"]);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "plain");
    }

    #[test]
    fn a_staged_write_dropped_unplaced_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, "old").unwrap();
        let staged = Staged::write(&path, b"new", Mode::PRIVATE, Durability::Synced).unwrap();
        assert_eq!(names(dir.path()).len(), 2, "the temporary is beside the target");
        drop(staged);
        assert_eq!(names(dir.path()), ["f.json"]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    }

    #[cfg(unix)]
    #[test]
    fn the_mode_is_the_one_asked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
        let path = dir.path().join("secret");
        // An existing file's wider mode does not carry over to a private write.
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write(&path, b"token", Mode::PRIVATE).unwrap();
        assert_eq!(mode(&path), 0o600);
        write(&path, b"script", Mode::Exactly(0o750)).unwrap();
        assert_eq!(mode(&path), 0o750);
        assert_eq!(Mode::of(&std::fs::metadata(&path).unwrap()), Mode::Exactly(0o750));
        // A new file's mode is what a plain new file gets here (the umask's say).
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        let made = dir.path().join("made");
        write(&made, b"status", Mode::New).unwrap();
        assert_eq!(mode(&made), mode(&plain));
    }

    #[cfg(unix)]
    #[test]
    fn a_write_in_an_open_folder_lands_there() {
        let dir = tempfile::tempdir().unwrap();
        let folder = open_folder(dir.path()).unwrap();
        write_in(
            &folder,
            OsStr::new("a.txt"),
            b"one",
            Mode::New,
            Durability::Synced,
        )
        .unwrap();
        assert_eq!(std::fs::read(dir.path().join("a.txt")).unwrap(), b"one");
        assert_eq!(names(dir.path()), ["a.txt"]);
    }

    #[test]
    fn two_writers_at_once_leave_one_whole_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shared");
        // Large enough that a torn write would show: every byte of one content is the same.
        let contents: Vec<Vec<u8>> = (b'a'..=b'b').map(|c| vec![c; 256 * 1024]).collect();
        std::thread::scope(|scope| {
            for content in &contents {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..20 {
                        write_unsynced(path, content, Mode::New).unwrap();
                    }
                });
            }
        });
        let found = std::fs::read(&path).unwrap();
        assert!(contents.contains(&found), "{} bytes, mixed", found.len());
        assert_eq!(names(dir.path()), ["shared"]);
    }

    #[test]
    fn temporaries_are_told_by_the_file_they_were_for() {
        let made = temporary_name(OsStr::new("deleted.json"));
        assert_eq!(temporary_target(made.to_str().unwrap()), Some("deleted.json"));
        assert_eq!(temporary_target(".a.b.json.1.0.tmp"), Some("a.b.json"));
        for other in [
            "deleted.json",
            ".deleted.json.tmp",
            ".x.12.zz.tmp",
            ".x.y.00ff.tmp",
            "x.1.2.tmp",
        ] {
            assert_eq!(temporary_target(other), None, "{other}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.json"), "kept").unwrap();
        std::fs::write(dir.path().join(".f.json.77.abc.tmp"), "stale").unwrap();
        std::fs::write(dir.path().join(".g.json.77.abc.tmp"), "someone else's").unwrap();
        remove_stale_temporaries(dir.path(), |target| target == "f.json");
        assert_eq!(names(dir.path()), [".g.json.77.abc.tmp", "f.json"]);
    }
}
