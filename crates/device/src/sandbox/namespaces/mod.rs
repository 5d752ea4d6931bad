//! Linux: the box's namespaces, made by the device itself between fork and exec (not bubblewrap:
//! Landlock must be applied after the last mount, since a Landlock domain may not mount, and
//! bubblewrap cannot apply it; one fork more costs less than one program more).
//!
//! The spawned child (the *keeper*) makes a user, mount and PID namespace, maps its own user and
//! group, and forks the box's *init* (PID 1), which lays out the mounts and forks the command (PID
//! 2). When the command ends, init ends, and the kernel ends every process left in the box
//! (`setsid`, daemons, loops). The keeper and init let go of every descriptor (the output pipe
//! among them) and wait; the keeper ends as the command ended. When the keeper is killed (cancel, a
//! timeout, Stop all), init is killed with it (`PR_SET_PDEATHSIG`), and so the box.
//!
//! Init lays out the mounts (from the outside in):
//! 1. every place to bind is cloned first (`open_tree`), while every path still names the
//!    person's files: the roots, the session's temp folder, the session's own places;
//! 2. the whole tree becomes read-only (`mount_setattr`, recursive);
//! 3. a `/dev/shm` of the box's own; the roots are attached writable where they are, the temp
//!    folder at `/tmp` and `/var/tmp` (a root below those or `/dev/shm` is attached into what
//!    covers it, its folders made there);
//! 4. inside the roots, the governing places are bound read-only and the secret files covered;
//! 5. the protected places outside are covered by an empty read-only folder (mode 000) or file, the
//!    person's runtime folder (`/run/user/<uid>`: session bus, keyring, agents) emptied, sockets
//!    named in the environment covered;
//! 6. a fresh `/proc` of the new PID namespace;
//! 7. the capabilities the namespace gave are dropped, then Landlock and seccomp (the caller's).
//!
//! The mounts are [`mounts`]'s, the keeper's and init's waiting [`processes`]'s.
//!
//! Everything the child uses is made here in the parent: between fork and exec it only makes
//! system calls with what it is handed, and allocates nothing.

mod mounts;
mod processes;
#[cfg(test)]
mod tests;

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use processes::{drop_capabilities, fork, keep, limit_processes, reap};

/// Where the temp folder is attached.
const TEMP_PLACES: [&str; 2] = ["/tmp", "/var/tmp"];
/// Places the box covers with something of its own: a root below one is attached into it.
const COVERED_PLACES: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// What the box holds, as the parent describes it.
pub(super) struct Description<'a> {
    /// The roots, resolved: attached where they are, writable but in plan mode (a root below
    /// `/tmp` would not be there otherwise).
    pub roots: &'a [PathBuf],
    /// The session's own places inside hidden ones: attached where they are (read-only in plan).
    pub own: &'a [PathBuf],
    pub plan: bool,
    /// The session's temp folder, attached at `/tmp` and `/var/tmp`.
    pub temp: &'a Path,
    /// Inside the roots, bound read-only.
    pub governing: &'a [PathBuf],
    /// Covered: folders by an empty folder, anything else by an empty file.
    pub hidden: &'a [PathBuf],
    /// An empty file of mode 000 to cover hidden files with.
    pub absent_file: &'a Path,
    /// Emptied: the person's runtime folders.
    pub emptied: &'a [PathBuf],
    /// Where the command starts.
    pub cwd: &'a Path,
}

/// A place cloned before the tree turns read-only, and where it is attached.
struct Attach {
    source: CString,
    target: CString,
    /// Folders made (in the temp folder) before attaching.
    make: Vec<CString>,
    read_only: bool,
    /// The clone's descriptor, in the child.
    fd: libc::c_int,
}

/// A hiding tmpfs and the own places attached below it.
struct Hide {
    target: CString,
    folder: bool,
    /// Own places below: the folders to make and the index of their [`Attach`].
    own: Vec<(Vec<CString>, usize)>,
}

/// The box's mounts and identity, ready for the child.
pub(super) struct Layout {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Roots outside the temp places, then the temp folder's two, then roots inside them, then the
    /// own places (attached below their hiding tmpfs).
    attach: Vec<Attach>,
    governing: Vec<CString>,
    hide: Vec<Hide>,
    absent_file: CString,
    emptied: Vec<CString>,
    cwd: CString,
    /// The file systems the command writes to (its roots and temp folder), watched by the keeper.
    disks: Vec<CString>,
}

/// `path` for a system call; one holding a NUL byte is refused.
pub(super) fn c(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} holds a NUL byte", path.display()),
        )
    })
}

/// The folders between a temp place and `path` (below it), outer first.
fn folders_below(path: &Path, place: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(place) && *a != place)
        .map(Path::to_owned)
        .collect();
    folders.reverse();
    folders
}

fn under_covered(path: &Path) -> Option<&'static str> {
    COVERED_PLACES.into_iter().find(|t| path.starts_with(t))
}

/// Whether the box covers `path` with a place of its own (see [`super::covered_by_the_box`]).
pub(super) fn covered(path: &Path) -> bool {
    under_covered(path).is_some()
}

impl Layout {
    pub(super) fn new(box_: &Description) -> io::Result<Self> {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut attach = Vec::new();
        let attach_at = |path: &Path, read_only: bool| -> io::Result<Attach> {
            // Below a temp place: the folders down to it, and its own mount point.
            let make = match under_covered(path) {
                Some(place) => folders_below(path, Path::new(place))
                    .iter()
                    .map(|f| c(f))
                    .chain([c(path)])
                    .collect::<io::Result<_>>()?,
                None => Vec::new(),
            };
            Ok(Attach {
                source: c(path)?,
                target: c(path)?,
                make,
                read_only,
                fd: -1,
            })
        };
        let mut roots: Vec<&PathBuf> = box_.roots.iter().collect();
        roots.sort_by_key(|p| p.as_os_str().len());
        for root in roots.iter().filter(|r| under_covered(r).is_none()) {
            attach.push(attach_at(root, box_.plan)?);
        }
        for place in TEMP_PLACES {
            if Path::new(place).is_dir() {
                attach.push(Attach {
                    source: c(box_.temp)?,
                    target: c(Path::new(place))?,
                    make: Vec::new(),
                    read_only: false,
                    fd: -1,
                });
            }
        }
        for root in roots.iter().filter(|r| under_covered(r).is_some()) {
            attach.push(attach_at(root, box_.plan)?);
        }
        // Hidden places inside other hidden places cannot be reached to be covered, nor need be.
        let hidden: Vec<&PathBuf> = box_
            .hidden
            .iter()
            .filter(|h| !box_.hidden.iter().any(|o| o != *h && h.starts_with(o)))
            .filter(|h| std::fs::symlink_metadata(h).is_ok())
            .collect();
        let mut hide = Vec::new();
        for place in hidden {
            let folder = std::fs::symlink_metadata(place).is_ok_and(|m| m.is_dir());
            let mut own = Vec::new();
            for mine in box_.own.iter().filter(|o| o.starts_with(place)) {
                // The folders down to it, and its own mount point.
                let mut make: Vec<CString> = folders_below(mine, place)
                    .iter()
                    .map(|f| c(f))
                    .collect::<io::Result<_>>()?;
                make.push(c(mine)?);
                own.push((make, attach.len()));
                attach.push(Attach {
                    source: c(mine)?,
                    target: c(mine)?,
                    make: Vec::new(),
                    read_only: box_.plan,
                    fd: -1,
                });
            }
            hide.push(Hide {
                target: c(place)?,
                folder,
                own,
            });
        }
        // Files first: the empty file that covers them lies in a folder that gets hidden.
        hide.sort_by_key(|h| h.folder);
        Ok(Self {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            attach,
            governing: box_.governing.iter().map(|p| c(p)).collect::<io::Result<_>>()?,
            hide,
            absent_file: c(box_.absent_file)?,
            emptied: box_
                .emptied
                .iter()
                .filter(|p| p.is_dir())
                .map(|p| c(p))
                .collect::<io::Result<_>>()?,
            cwd: c(box_.cwd)?,
            disks: box_
                .roots
                .iter()
                .map(PathBuf::as_path)
                .chain([box_.temp])
                .map(c)
                .collect::<io::Result<_>>()?,
        })
    }

    /// Makes the namespaces, forks the box's init and, from it, the command; returns in the command
    /// only, with the mounts laid out and the capabilities dropped. The keeper and init never
    /// return: they wait, and end as the command ended.
    ///
    /// # Safety
    /// Only between fork and exec, in a single-threaded child.
    pub(super) unsafe fn enter(&mut self) -> io::Result<()> {
        // SAFETY: the caller's contract; every call below takes what was made in the parent.
        unsafe {
            // The device is not dumpable, so neither is this copy of it; while it is not, its
            // /proc files belong to root and it could not write its own maps.
            check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
            // The box goes with the device: its commands are spawned from the runtime's threads,
            // which live as long as it does (the signal follows the thread that forked).
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            check(libc::unshare(
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID,
            ))?;
            write_file(b"/proc/self/setgroups\0", b"deny")?;
            write_file(b"/proc/self/uid_map\0", &self.uid_map)?;
            write_file(b"/proc/self/gid_map\0", &self.gid_map)?;
            // Not dumpable again: the keeper holds a copy of the device's memory while it waits.
            check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0))?;
            // The keeper learns through this pipe which signal ended the command: the box's
            // init cannot die by a signal of its own.
            let mut report = [0 as libc::c_int; 2];
            check(libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC))?;
            let init = fork()?;
            if init > 0 {
                keep(init, report[0], &self.disks);
            }
            libc::close(report[0]);
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            self.lay_out()?;
            let command = fork()?;
            if command > 0 {
                reap(command, report[1]);
            }
            libc::close(report[1]);
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            drop_capabilities();
            limit_processes();
        }
        Ok(())
    }
}

/// # Safety
/// Between fork and exec; `path` and `bytes` valid.
unsafe fn write_file(path: &[u8], bytes: &[u8]) -> io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(error);
        }
    }
    Ok(())
}

fn check(done: libc::c_int) -> io::Result<()> {
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn check_long(done: libc::c_long) -> io::Result<()> {
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether this kernel and this account can make the box, or why not; asked once a process.
pub(super) fn available() -> Result<(), String> {
    static PROBED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

/// Makes an empty box around `true`.
fn probe() -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let temp = std::env::temp_dir();
    let cwd = PathBuf::from("/");
    let mut layout = Layout::new(&Description {
        roots: &[],
        own: &[],
        plan: true,
        temp: &temp,
        governing: &[],
        hidden: &[],
        absent_file: Path::new("/dev/null"),
        emptied: &[],
        cwd: &cwd,
    })
    .map_err(|e| e.to_string())?;
    let mut command = std::process::Command::new("true");
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: `enter` is made for this place.
    unsafe {
        command.pre_exec(move || layout.enter());
    }
    match command.status() {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("a command in a box ended with {status}")),
        Err(e) => Err(why_not(&e)),
    }
}

/// The sentence for a box that could not be made.
fn why_not(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => format!(
            "this system does not let programs make user namespaces ({error}; a container, or \
             Ubuntu's AppArmor restriction without a profile for the device)"
        ),
        Some(libc::ENOSYS) => "this kernel is older than Linux 5.12 (no mount_setattr)".into(),
        Some(libc::EINVAL) => format!("this kernel refused a namespace ({error})"),
        _ => format!("the box could not be made: {error}"),
    }
}
