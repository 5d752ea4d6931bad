//! The judge in a child process with a memory and a time limit (Unix). brush-parser has had lines
//! that took minutes or more than 2 GB (each found by the `bash_judge` fuzz target and pre-checked
//! in `parse::parse`), and the next such line, written by a model, must not take the device with it:
//! a child that runs out of memory or time leaves the line unreadable (it asks), the device runs on.
//!
//! The child is a `fork` without `exec`: it only computes (brush-parser and the judge allocate,
//! which glibc's allocator allows after a fork), writes its verdict to a pipe and `_exit`s. A lock
//! another thread held at the fork stays held in the child: brush-parser keeps caches behind
//! mutexes (the `cached` crate), so the device never parses bash in its own process (only
//! [`super::judge_in_process`] does, for the fuzz target), and a child stuck anyway is cut at the
//! wall-clock backstop.
//!
//! A verdict must not depend on how busy the machine is: the time limit is the child's own CPU
//! time (`RLIMIT_CPU`), which a loaded machine does not spend for it, and the wall clock only ends
//! a child that is stuck, far later. A panic in the child (brush-parser has `unwrap`s) prints
//! nothing ([`quiet_in_children`]): the default hook would capture and symbolize a backtrace under
//! `RUST_BACKTRACE`, mapping the whole binary's debug information, past the memory cap (the fresh
//! machine's red `scripts/test`).

// Windows has no fork: the judge runs in process there (`NotStarted`), and the rest goes unused.
#![cfg_attr(not(unix), allow(dead_code))]

use std::time::Duration;

use super::{Decision, Judgement};

/// The child's limits.
#[derive(Clone, Copy)]
pub struct ChildLimits {
    /// CPU seconds the child may spend: a real line judges in microseconds (a fork costs about a
    /// millisecond); a line that backtracks is cut here, however loaded the machine is.
    pub cpu_seconds: u64,
    /// Wall-clock time after which a child that is still not done is killed: only a child stuck
    /// on something other than the CPU (a lock held at the fork) gets there.
    pub stuck_after: Duration,
}

pub const LIMITS: ChildLimits = ChildLimits {
    cpu_seconds: 1,
    stuck_after: Duration::from_secs(20),
};

/// Address space the child may add to what the device already maps, for the parse and the walk.
#[cfg(target_os = "linux")]
const MEMORY_ROOM: u64 = 256 << 20;

const TOO_LONG: &str = "bash that takes too long to read";
const TOO_BIG: &str = "bash that takes too much memory to read";
const STUCK: &str = "bash the judge got stuck reading";

pub enum Outcome {
    Judged(Judgement),
    /// The child ran out of memory or time, or died: what happened, for the reason.
    Died(&'static str),
    /// No child could be started (no pipe, no fork): the caller judges in its own process.
    NotStarted,
}

#[cfg(unix)]
pub fn contained(judge: &dyn Fn() -> Judgement, limits: ChildLimits) -> Outcome {
    let mut fds = [0 as libc::c_int; 2];
    if open_pipe(&mut fds).is_err() {
        return Outcome::NotStarted;
    }
    let [read_end, write_end] = fds;
    quiet_in_children();
    // SAFETY: the child runs only `judge` (computation and allocation), write(2) and _exit(2).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // The child: never returns.
        unsafe { libc::close(read_end) };
        QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
        let cpu = libc::rlimit {
            rlim_cur: limits.cpu_seconds,
            // SIGXCPU at the soft limit ends it; SIGKILL a second later if that signal is caught.
            rlim_max: limits.cpu_seconds + 1,
        };
        unsafe { libc::setrlimit(libc::RLIMIT_CPU, &cpu) };
        // Measured here, not before the fork: the device's other threads map more meanwhile.
        #[cfg(target_os = "linux")]
        if let Some(limit) = address_space().map(|mapped| mapped + MEMORY_ROOM) {
            let cap = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            unsafe { libc::setrlimit(libc::RLIMIT_AS, &cap) };
        }
        let verdict = encode(&judge());
        // std's write_all (which retries on EINTR); the File is never dropped: _exit ends it.
        use std::io::Write;
        use std::os::fd::FromRawFd;
        let mut pipe = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(write_end) });
        let code = if pipe.write_all(&verdict).is_ok() { 0 } else { 1 };
        unsafe { libc::_exit(code) };
    }
    unsafe { libc::close(write_end) };
    if pid < 0 {
        unsafe { libc::close(read_end) };
        return Outcome::NotStarted;
    }
    let (bytes, in_time) = read_until(read_end, limits.stuck_after);
    unsafe { libc::close(read_end) };
    if !in_time {
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let ended = reap(pid);
    match decode(&bytes) {
        Some(judgement) if ended == Ended::Well => Outcome::Judged(judgement),
        _ if !in_time => Outcome::Died(STUCK),
        _ if ended == Ended::OutOfTime => Outcome::Died(TOO_LONG),
        _ => Outcome::Died(TOO_BIG),
    }
}

/// Set in a judging child: its panics (brush-parser's `unwrap`s, caught by the judge as an
/// unreadable line) print nothing.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Wraps the process's panic hook once, in the parent, so that a judging child's panics skip it.
/// Not `set_hook` in the child: the hook's lock may be held at the fork by a thread that was
/// panicking (printing a backtrace takes seconds), and the child would wait on it for good.
#[cfg(unix)]
fn quiet_in_children() {
    static WRAPPED: std::sync::Once = std::sync::Once::new();
    WRAPPED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
                previous(info);
            }
        }));
    });
}

#[cfg(not(unix))]
pub fn contained(_judge: &dyn Fn() -> Judgement, _limits: ChildLimits) -> Outcome {
    Outcome::NotStarted
}

/// The verdict as the child writes it: its length first, so the parent knows it has all of it
/// without waiting for the pipe's end (another judge's child, forked meanwhile from another
/// thread, holds a copy of this pipe's write end until it exits).
fn encode(judgement: &Judgement) -> Vec<u8> {
    let body = judgement.reason.len() + 1;
    let mut bytes = Vec::with_capacity(4 + body);
    bytes.extend_from_slice(&(body as u32).to_le_bytes());
    bytes.push(match judgement.decision {
        Decision::Allow => b'A',
        Decision::Ask => b'Q',
        Decision::Deny => b'D',
    });
    bytes.extend_from_slice(judgement.reason.as_bytes());
    bytes
}

/// Whether `bytes` hold a whole verdict.
fn complete(bytes: &[u8]) -> bool {
    match bytes.get(..4) {
        Some(length) => {
            let body = u32::from_le_bytes([length[0], length[1], length[2], length[3]]) as usize;
            bytes.len() >= 4 + body
        }
        None => false,
    }
}

fn decode(bytes: &[u8]) -> Option<Judgement> {
    if !complete(bytes) {
        return None;
    }
    let (first, reason) = bytes[4..].split_first()?;
    let decision = match first {
        b'A' => Decision::Allow,
        b'Q' => Decision::Ask,
        b'D' => Decision::Deny,
        _ => return None,
    };
    Some(Judgement {
        decision,
        reason: String::from_utf8(reason.to_vec()).ok()?,
    })
}

#[cfg(target_os = "linux")]
fn open_pipe(fds: &mut [libc::c_int; 2]) -> Result<(), ()> {
    // Close-on-exec: a bash the device starts meanwhile on another thread must not hold the pipe.
    match unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } {
        0 => Ok(()),
        _ => Err(()),
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
fn open_pipe(fds: &mut [libc::c_int; 2]) -> Result<(), ()> {
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(());
    }
    for fd in *fds {
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// The device's mapped address space in bytes (`/proc/self/statm`'s first field).
#[cfg(target_os = "linux")]
fn address_space() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    Some(pages * page)
}

/// Reads a whole verdict, to the end of the pipe or to the deadline; `false` when the deadline
/// came first.
#[cfg(unix)]
fn read_until(fd: libc::c_int, limit: Duration) -> (Vec<u8>, bool) {
    let deadline = std::time::Instant::now() + limit;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if complete(&bytes) {
            return (bytes, true);
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return (bytes, false);
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        match unsafe { libc::poll(&mut poll, 1, ms) } {
            0 => continue,
            n if n < 0 => {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return (bytes, true);
            }
            _ => {}
        }
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        match n {
            0 => return (bytes, true),
            n if n < 0 => {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return (bytes, true);
            }
            n => bytes.extend_from_slice(&chunk[..n as usize]),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// Exited with 0.
    Well,
    /// Killed for its CPU time (SIGXCPU, or SIGKILL at the hard limit).
    OutOfTime,
    /// Anything else: an abort for memory, an exit with an error.
    Otherwise,
}

/// Waits for the child and says how it ended.
#[cfg(unix)]
fn reap(pid: libc::pid_t) -> Ended {
    let mut status = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                Ended::Well
            } else if libc::WIFSIGNALED(status)
                && matches!(libc::WTERMSIG(status), libc::SIGXCPU | libc::SIGKILL)
            {
                Ended::OutOfTime
            } else {
                Ended::Otherwise
            };
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Ended::Otherwise;
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn verdict(reason: &str) -> Judgement {
        Judgement {
            decision: Decision::Deny,
            reason: reason.into(),
        }
    }

    /// A short backstop, so a test of a stuck child does not wait the device's.
    const QUICK: ChildLimits = ChildLimits {
        cpu_seconds: 1,
        stuck_after: Duration::from_secs(3),
    };

    #[test]
    fn a_verdict_comes_back_from_the_child() {
        let long = "é".repeat(10_000); // more than a pipe's first read
        match contained(&|| verdict(&long), LIMITS) {
            Outcome::Judged(j) => {
                assert_eq!(j.decision, Decision::Deny);
                assert_eq!(j.reason, long);
            }
            other => panic!("the child's verdict was lost: {}", describe(&other)),
        }
    }

    #[test]
    fn a_verdict_is_taken_without_waiting_for_the_pipe_to_close() {
        let outcome = contained(
            &|| {
                // A process holding the pipe's write end on past the backstop, as the child of
                // another judgement forked meanwhile from another thread does: waiting for the
                // pipe's end would come back as a death.
                if unsafe { libc::fork() } == 0 {
                    std::thread::sleep(Duration::from_secs(30));
                    unsafe { libc::_exit(0) };
                }
                verdict("quick")
            },
            QUICK,
        );
        assert!(matches!(outcome, Outcome::Judged(_)), "{}", describe(&outcome));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_child_runs_under_a_memory_cap_and_a_cpu_limit() {
        let outcome = contained(
            &|| {
                let read = |resource| {
                    let mut cap = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: 0,
                    };
                    unsafe { libc::getrlimit(resource, &mut cap) };
                    cap.rlim_cur
                };
                verdict(&format!("{} {}", read(libc::RLIMIT_AS), read(libc::RLIMIT_CPU)))
            },
            LIMITS,
        );
        let Outcome::Judged(j) = outcome else {
            panic!("{}", describe(&outcome));
        };
        let mut caps = j.reason.split(' ').map(|n| n.parse().unwrap_or(u64::MAX));
        let (memory, cpu) = (caps.next().unwrap_or(0), caps.next().unwrap_or(0));
        let mapped = address_space().unwrap_or(0);
        assert!(
            memory != libc::RLIM_INFINITY && memory > mapped,
            "cap {memory}, mapped {mapped}"
        );
        assert_eq!(cpu, LIMITS.cpu_seconds);
    }

    #[test]
    fn a_child_that_grows_without_end_dies_and_the_device_does_not() {
        let outcome = contained(
            &|| {
                let mut held: Vec<Vec<u8>> = Vec::new();
                loop {
                    held.push(vec![1u8; 16 << 20]);
                    if held.len() > 4096 {
                        return verdict("64 GB held: nothing stopped it");
                    }
                }
            },
            LIMITS,
        );
        assert!(matches!(outcome, Outcome::Died(_)), "{}", describe(&outcome));
    }

    #[test]
    fn a_child_that_computes_without_end_is_cut_by_its_cpu_time() {
        // Only the CPU limit ends it as too long; the backstop would say it was stuck.
        let limits = ChildLimits {
            cpu_seconds: 1,
            stuck_after: Duration::from_secs(120),
        };
        let outcome = contained(
            &|| {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            },
            limits,
        );
        assert!(
            matches!(outcome, Outcome::Died(TOO_LONG)),
            "{}",
            describe(&outcome)
        );
    }

    #[test]
    fn a_child_stuck_without_computing_is_killed_at_the_backstop() {
        let outcome = contained(
            &|| loop {
                std::thread::sleep(Duration::from_secs(60));
            },
            QUICK,
        );
        assert!(matches!(outcome, Outcome::Died(STUCK)), "{}", describe(&outcome));
    }

    #[test]
    fn a_panic_in_the_child_is_quiet_and_cheap() {
        // Under RUST_BACKTRACE the default hook would symbolize a backtrace of this test binary
        // (hundreds of MB of debug information), past the memory cap: the verdict was lost.
        let outcome = contained(
            &|| {
                std::panic::catch_unwind(|| -> Judgement { panic!("brush-parser unwrapped a None") })
                    .unwrap_or_else(|_| verdict("unreadable"))
            },
            LIMITS,
        );
        match outcome {
            Outcome::Judged(j) => assert_eq!(j.reason, "unreadable"),
            other => panic!("{}", describe(&other)),
        }
    }

    fn describe(outcome: &Outcome) -> String {
        match outcome {
            Outcome::Judged(j) => format!("judged {:?}", j.reason),
            Outcome::Died(what) => format!("died: {what}"),
            Outcome::NotStarted => "not started".into(),
        }
    }
}
