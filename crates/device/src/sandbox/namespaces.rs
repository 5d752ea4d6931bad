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
//! Everything the child uses is made here in the parent: between fork and exec it only makes
//! system calls with what it is handed, and allocates nothing.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Options of a tmpfs that hides a place: empty, unreadable, tiny.
const HIDING: &[u8] = b"mode=000,size=4k,nr_inodes=16\0";
/// A hiding tmpfs with the session's own places below it: passable, not listable.
const PASSABLE: &[u8] = b"mode=711,size=4k,nr_inodes=64\0";
/// The person's runtime folder in the box: there, and empty.
const EMPTIED: &[u8] = b"mode=700,size=4k,nr_inodes=16\0";
/// The box's own `/dev/shm` (Python's multiprocessing needs one).
const SHM: &[u8] = b"mode=1777,size=64m\0";
/// How close to full a file system the command writes to may come before the box is ended.
const DISK_FLOOR: u128 = 1 << 30;
/// How often the keeper looks.
const DISK_LOOK: std::time::Duration = std::time::Duration::from_millis(100);
/// What the output says when the keeper ended the box for it.
const DISK_FULL: &[u8] =
    b"\n[the sandbox stopped the command: the disk it writes to came within 1 GiB (or a tenth) of full]\n";
/// The processes (and threads) of the person's account a command may reach.
const PROCESSES: libc::rlim_t = 8192;
/// Where the temp folder is attached.
const TEMP_PLACES: [&str; 2] = ["/tmp", "/var/tmp"];
/// Places the box covers with something of its own: a root below one is attached into it.
const COVERED_PLACES: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const OPEN_TREE_CLONE: libc::c_uint = 0x1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const AT_RECURSIVE: libc::c_int = 0x8000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

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

fn c(path: &Path) -> io::Result<CString> {
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

    /// # Safety
    /// In the box's init, between fork and exec.
    unsafe fn lay_out(&mut self) -> io::Result<()> {
        // SAFETY: the caller's contract; every pointer is a NUL-terminated string of `self`.
        unsafe {
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for place in &mut self.attach {
                let fd = libc::syscall(
                    libc::SYS_open_tree,
                    libc::AT_FDCWD,
                    place.source.as_ptr(),
                    OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | AT_RECURSIVE as libc::c_uint,
                );
                place.fd = i32::try_from(fd).map_err(|_| io::Error::last_os_error())?;
                if place.fd < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            set_read_only(c"/".as_ptr(), true)?;
            let shm = libc::mount(
                c"tmpfs".as_ptr(),
                c"/dev/shm".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                SHM.as_ptr().cast(),
            );
            gone_is_fine(shm)?;
            // The clones of places below a hiding tmpfs are attached with it.
            let below_hidden: usize = self.hide.iter().map(|h| h.own.len()).sum();
            let direct = self.attach.len() - below_hidden;
            for place in &self.attach[..direct] {
                for folder in &place.make {
                    make_folder(folder)?;
                }
                attach(place)?;
            }
            for place in &self.governing {
                bind_read_only(place, place, true)?;
            }
            for hide in &self.hide {
                self.hide_place(hide)?;
            }
            for place in &self.emptied {
                let done = libc::mount(
                    c"tmpfs".as_ptr(),
                    place.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
                    EMPTIED.as_ptr().cast(),
                );
                gone_is_fine(done)?;
            }
            check(libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ))?;
            // The folder was entered before the mounts: enter it again, through them.
            check(libc::chdir(self.cwd.as_ptr()))?;
        }
        Ok(())
    }

    /// # Safety
    /// In the box's init, between fork and exec.
    unsafe fn hide_place(&self, hide: &Hide) -> io::Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            if !hide.folder {
                return bind_read_only(&self.absent_file, &hide.target, false);
            }
            let (options, flags) = if hide.own.is_empty() {
                (HIDING, libc::MS_RDONLY)
            } else {
                (PASSABLE, 0)
            };
            let done = libc::mount(
                c"tmpfs".as_ptr(),
                hide.target.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | flags,
                options.as_ptr().cast(),
            );
            if gone(done) {
                return Ok(());
            }
            check(done)?;
            if hide.own.is_empty() {
                return Ok(());
            }
            for (make, at) in &hide.own {
                for folder in make {
                    make_folder(folder)?;
                }
                attach(&self.attach[*at])?;
            }
            set_read_only(hide.target.as_ptr(), false)
        }
    }
}

/// # Safety
/// Between fork and exec, in a single-threaded process.
unsafe fn fork() -> io::Result<libc::pid_t> {
    // SAFETY: the caller's contract.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        pid => Ok(pid),
    }
}

/// Closes every descriptor but `kept` (ascending): the output pipe's write end among them, unless
/// kept, so the output ends with the command's processes.
///
/// # Safety
/// Between fork and exec.
unsafe fn close_all_but(kept: &[libc::c_int]) {
    let mut from: libc::c_uint = 0;
    // SAFETY: plain numbers.
    unsafe {
        for &fd in kept {
            let fd = fd as libc::c_uint;
            if fd > from {
                libc::syscall(libc::SYS_close_range, from, fd - 1, 0u32);
            }
            from = fd + 1;
        }
        libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32);
    }
}

/// Waits for `pid`, through interruptions; its status.
///
/// # Safety
/// Between fork and exec.
unsafe fn wait_for(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    // SAFETY: plain numbers and a status of ours.
    unsafe {
        loop {
            let waited = libc::waitpid(pid, &mut status, 0);
            if waited == pid || (waited < 0 && *libc::__errno_location() != libc::EINTR) {
                return status;
            }
        }
    }
}

/// The keeper, outside the box: waits for the box's init and ends as the command ended (by the
/// same signal, when `report` names one). It outlives a SIGTERM sent to the command's group, which
/// reaches the command itself; SIGKILL ends it, and with it the box. While it waits it looks at the
/// file systems the command writes to: one that comes within [`DISK_FLOOR`] of full (a command
/// filling its temp folder, or a root) ends the box, with a line in the output saying why, before
/// the device and the person's other programs run out of room.
///
/// # Safety
/// Between fork and exec.
unsafe fn keep(init: libc::pid_t, report: libc::c_int, disks: &[CString]) -> ! {
    // SAFETY: plain system calls on numbers and buffers of ours.
    unsafe {
        close_all_but(&[libc::STDOUT_FILENO, report]);
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::signal(signal, libc::SIG_IGN);
        }
        let init_fd = libc::syscall(libc::SYS_pidfd_open, init, 0u32) as libc::c_int;
        let mut status = 0;
        loop {
            let waited = libc::waitpid(init, &mut status, libc::WNOHANG);
            if waited == init || (waited < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
            if disks.iter().any(|disk| nearly_full(disk)) {
                libc::kill(init, libc::SIGKILL);
                libc::write(libc::STDOUT_FILENO, DISK_FULL.as_ptr().cast(), DISK_FULL.len());
                status = wait_for(init);
                break;
            }
            // Woken at once when init ends (its pidfd turns readable), else after a while.
            let mut ended = libc::pollfd {
                fd: init_fd,
                events: libc::POLLIN,
                revents: 0,
            };
            if init_fd < 0 || libc::poll(&mut ended, 1, DISK_LOOK.as_millis() as libc::c_int) < 0 {
                let pause = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: DISK_LOOK.as_nanos() as libc::c_long,
                };
                libc::nanosleep(&pause, std::ptr::null_mut());
            }
        }
        libc::close(libc::STDOUT_FILENO);
        let mut signal = [0u8; 1];
        if libc::read(report, signal.as_mut_ptr().cast(), 1) == 1 {
            end_by(libc::c_int::from(signal[0]));
        }
        if libc::WIFSIGNALED(status) {
            end_by(libc::WTERMSIG(status));
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Whether the file system holding `path` has less room left than [`DISK_FLOOR`] (or a tenth of
/// its size, for a small one).
///
/// # Safety
/// Between fork and exec.
unsafe fn nearly_full(path: &CString) -> bool {
    // SAFETY: a NUL-terminated path and a structure of ours.
    unsafe {
        let mut disk: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(path.as_ptr(), &mut disk) != 0 || disk.f_blocks == 0 {
            return false;
        }
        let block = disk.f_frsize as u128;
        let (size, left) = (disk.f_blocks as u128 * block, disk.f_bavail as u128 * block);
        left < DISK_FLOOR.min(size / 10)
    }
}

/// The box's init (PID 1): reaps every process left to it until the command ends, then ends, and
/// the kernel ends everything left in the box. The command is not PID 1, so it takes signals
/// (`kill $$`, a stop's SIGTERM) as it would anywhere.
///
/// # Safety
/// Between fork and exec.
unsafe fn reap(command: libc::pid_t, report: libc::c_int) -> ! {
    // SAFETY: plain system calls on numbers and buffers of ours.
    unsafe {
        close_all_but(&[report]);
        loop {
            let mut status = 0;
            let waited = libc::waitpid(-1, &mut status, 0);
            if waited == command {
                if libc::WIFSIGNALED(status) {
                    let signal = [libc::WTERMSIG(status) as u8];
                    libc::write(report, signal.as_ptr().cast(), 1);
                    libc::_exit(0);
                }
                libc::_exit(libc::WEXITSTATUS(status));
            }
            if waited < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
    }
}

/// Ends the calling process by `signal`, as the command ended.
///
/// # Safety
/// Between fork and exec.
unsafe fn end_by(signal: libc::c_int) -> ! {
    // SAFETY: plain numbers.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
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

/// # Safety
/// Between fork and exec.
unsafe fn make_folder(path: &CString) -> io::Result<()> {
    // SAFETY: a NUL-terminated path.
    let done = unsafe { libc::mkdir(path.as_ptr(), 0o700) };
    if done != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// # Safety
/// Between fork and exec, `place.fd` a clone.
unsafe fn attach(place: &Attach) -> io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        if place.read_only {
            let attr = MountAttr {
                attr_set: MOUNT_ATTR_RDONLY,
                attr_clr: 0,
                propagation: 0,
                userns_fd: 0,
            };
            check_long(libc::syscall(
                libc::SYS_mount_setattr,
                place.fd,
                c"".as_ptr(),
                libc::AT_EMPTY_PATH | AT_RECURSIVE,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ))?;
        }
        check_long(libc::syscall(
            libc::SYS_move_mount,
            place.fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            place.target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        ))?;
        libc::close(place.fd);
    }
    Ok(())
}

/// Binds `source` at `target` read-only. A target that is not there (below a covered place) has
/// nothing to protect.
///
/// # Safety
/// Between fork and exec.
unsafe fn bind_read_only(source: &CString, target: &CString, recursive: bool) -> io::Result<()> {
    // SAFETY: NUL-terminated paths.
    unsafe {
        let flags = libc::MS_BIND | if recursive { libc::MS_REC } else { 0 };
        let done = libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        );
        if gone(done) {
            return Ok(());
        }
        check(done)?;
        set_read_only(target.as_ptr(), recursive)
    }
}

/// # Safety
/// Between fork and exec; `path` NUL-terminated.
unsafe fn set_read_only(path: *const libc::c_char, recursive: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: the caller's contract; the attribute outlives the call.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            if recursive { AT_RECURSIVE } else { 0 },
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

/// The namespace gave every capability inside it; a command needs none (root in the box could
/// otherwise read a file of mode 000 that root owns, or undo a mount).
///
/// # Safety
/// Between fork and exec.
unsafe fn drop_capabilities() {
    // SAFETY: plain numbers; a capability past the kernel's last is EINVAL, which is fine.
    unsafe {
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        for capability in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
    }
}

/// At most [`PROCESSES`] processes and threads of the person's account while a command runs: a
/// command that forks without end fails its forks instead of starving the device of them. (The
/// kernel does not count root's.)
///
/// # Safety
/// Between fork and exec.
unsafe fn limit_processes() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain structures of ours.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NPROC, &mut limit) == 0 && limit.rlim_cur > PROCESSES {
            limit.rlim_cur = PROCESSES;
            limit.rlim_max = limit.rlim_max.min(PROCESSES);
            libc::setrlimit(libc::RLIMIT_NPROC, &limit);
        }
    }
}

fn gone(done: libc::c_int) -> bool {
    done != 0
        && matches!(
            io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOENT | libc::ENOTDIR)
        )
}

fn gone_is_fine(done: libc::c_int) -> io::Result<()> {
    if gone(done) { Ok(()) } else { check(done) }
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

/// `OsStr` of a C string, for tests.
#[cfg(test)]
fn shown(c: &CString) -> &std::ffi::OsStr {
    std::ffi::OsStr::from_bytes(c.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_below_the_temp_places_are_attached_after_them_with_their_folders_made() {
        let roots = [PathBuf::from("/tmp/a/b/root"), PathBuf::from("/home/p/w")];
        let own = [PathBuf::from("/home/p/.local/state/lembas/attachments/s1")];
        let hidden = [PathBuf::from("/")];
        let layout = Layout::new(&Description {
            roots: &roots,
            own: &own,
            plan: false,
            temp: Path::new("/home/p/.local/state/lembas/tmp/s1"),
            governing: &[],
            hidden: &hidden[..0],
            absent_file: Path::new("/dev/null"),
            emptied: &[],
            cwd: Path::new("/home/p/w"),
        })
        .unwrap();
        let targets: Vec<&std::ffi::OsStr> = layout.attach.iter().map(|a| shown(&a.target)).collect();
        assert_eq!(targets, ["/home/p/w", "/tmp", "/var/tmp", "/tmp/a/b/root"]);
        let made: Vec<&std::ffi::OsStr> = layout.attach[3].make.iter().map(shown).collect();
        assert_eq!(made, ["/tmp/a", "/tmp/a/b", "/tmp/a/b/root"]);
        assert_eq!(
            folders_below(Path::new("/s/x/y"), Path::new("/s")),
            [Path::new("/s/x")]
        );
    }
}

#[cfg(test)]
mod box_tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// A root and the temp folder both below the machine's /tmp (a test's, or a person's scratch
    /// folder): the root is attached into the box's own /tmp, and the command starts in it.
    #[test]
    fn a_root_below_tmp_is_reached_in_the_box() {
        for plan in [false, true] {
            root_below_tmp(plan);
        }
    }

    fn root_below_tmp(plan: bool) {
        let base = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let (root, temp) = (base.join("repo"), base.join("state/tmp/s1"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&temp).unwrap();
        let roots = [root.clone()];
        let mut layout = Layout::new(&Description {
            roots: &roots,
            own: &[],
            plan,
            temp: &temp,
            governing: &[],
            hidden: &[base.join("state")],
            absent_file: Path::new("/dev/null"),
            emptied: &[],
            cwd: &root,
        })
        .unwrap();
        let mut command = std::process::Command::new("sh");
        let line = if plan {
            "pwd && echo t > /tmp/t.txt && ! touch made.txt 2>/dev/null"
        } else {
            "pwd && echo made > made.txt && echo t > /tmp/t.txt"
        };
        command.args(["-c", line]);
        // SAFETY: `enter` is made for this place.
        unsafe {
            command.pre_exec(move || layout.enter());
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            root.display().to_string()
        );
        assert_eq!(root.join("made.txt").exists(), !plan);
        assert!(temp.join("t.txt").exists());
    }
}
