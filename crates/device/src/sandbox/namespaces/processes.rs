//! The processes around the command: the keeper outside the box, the box's init, and what the
//! command itself sheds before it runs (capabilities, an unbounded count of processes). Between
//! fork and exec: system calls only.

use std::ffi::CString;
use std::io;

/// How close to full a file system the command writes to may come before the box is ended.
const DISK_FLOOR: u128 = 1 << 30;
/// How often the keeper looks.
const DISK_LOOK: std::time::Duration = std::time::Duration::from_millis(100);
/// What the output says when the keeper ended the box for it.
const DISK_FULL: &[u8] =
    b"\n[the sandbox stopped the command: the disk it writes to came within 1 GiB (or a tenth) of full]\n";
/// The processes (and threads) of the person's account a command may reach.
const PROCESSES: libc::rlim_t = 8192;

/// # Safety
/// Between fork and exec, in a single-threaded process.
pub(super) unsafe fn fork() -> io::Result<libc::pid_t> {
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
pub(super) unsafe fn keep(init: libc::pid_t, report: libc::c_int, disks: &[CString]) -> ! {
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
pub(super) unsafe fn reap(command: libc::pid_t, report: libc::c_int) -> ! {
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

/// The namespace gave every capability inside it; a command needs none (root in the box could
/// otherwise read a file of mode 000 that root owns, or undo a mount).
///
/// # Safety
/// Between fork and exec.
pub(super) unsafe fn drop_capabilities() {
    // SAFETY: plain numbers; a capability past the kernel's last is EINVAL, which is fine.
    unsafe {
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        for capability in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
    }
}

/// At most [`PROCESSES`] processes and threads of the person's account while a command runs: a
/// command that forks without end fails its forks instead of starving the device of them. The
/// count is the box's user namespace's, so root's processes are counted too.
///
/// # Safety
/// Between fork and exec.
pub(super) unsafe fn limit_processes() {
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
