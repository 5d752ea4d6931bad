//! Unix: the PTY's master end read with poll (a stop pipe ends the reader), the shell's exit
//! learnt with `waitid(WNOWAIT)`, signals to its process groups.

use std::fs::File;
use std::io::{PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::{mpsc, oneshot};

use super::{INPUT_QUEUE, PtyError, READ_CHUNK, READ_QUEUE, Started};
use crate::poison::Recover;
use crate::terminal::integration::RcFolder;

/// How long a hung-up shell has to end before its process group is killed.
const HANGUP_GRACE: Duration = Duration::from_secs(3);

/// Whether the shell has been reaped: signals go to its pid (and group) only while it has not, so
/// they can never reach a process that reused the pid.
#[derive(Default)]
struct Life {
    reaped: Mutex<bool>,
    changed: Condvar,
    /// The device hung the terminal up: what the shell leaves in its session is ended with it.
    hung_up: AtomicBool,
}

impl Life {
    fn lock(&self) -> MutexGuard<'_, bool> {
        self.reaped.lock().recover()
    }

    /// `kill(target, signal)` while the shell is not reaped (`target` negative: a process group).
    fn signal(&self, target: libc::pid_t, signal: libc::c_int) {
        let reaped = self.lock();
        if !*reaped {
            unsafe { libc::kill(target, signal) };
        }
    }
}

/// A running terminal, shared by the handlers and its output task.
pub struct Session {
    pid: libc::pid_t,
    master: Mutex<Box<dyn MasterPty + Send>>,
    input: mpsc::Sender<Vec<u8>>,
    life: Arc<Life>,
    stop_reader: Mutex<Option<PipeWriter>>,
    /// Bytes read from the PTY so far (the flood test watches it stop).
    #[cfg(test)]
    bytes_read: Arc<AtomicU64>,
    /// The rc wrappers: removed when the session is gone.
    _rc_folder: Option<RcFolder>,
}

/// Starts `command` in a new PTY of `size`.
pub fn start(
    command: CommandBuilder,
    rc_folder: Option<RcFolder>,
    size: PtySize,
) -> Result<Started, PtyError> {
    let pair = native_pty_system()
        .openpty(size)
        .map_err(|e| PtyError::Open(e.to_string()))?;
    let fd = pair
        .master
        .as_raw_fd()
        .ok_or_else(|| PtyError::Open("it has no file descriptor".into()))?;
    let cannot = |e: std::io::Error| PtyError::Open(e.to_string());
    let reader = duplicate(fd).map_err(cannot)?;
    let writer = duplicate(fd).map_err(cannot)?;
    let (stop_rx, stop_tx) = std::io::pipe().map_err(cannot)?;
    let child = pair
        .slave
        .spawn_command(command)
        .map_err(|e| PtyError::Spawn(e.to_string()))?;
    drop(pair.slave);
    let Some(pid) = child.process_id().and_then(|pid| libc::pid_t::try_from(pid).ok()) else {
        return Err(PtyError::Spawn("it has no process id".into()));
    };

    let life = Arc::new(Life::default());
    let (exit_tx, exited) = oneshot::channel();
    let (output_tx, output) = mpsc::channel(READ_QUEUE);
    let (input, input_rx) = mpsc::channel(INPUT_QUEUE);
    let bytes_read = Arc::new(AtomicU64::new(0));

    let waiter = {
        let life = life.clone();
        std::thread::Builder::new()
            .name(format!("terminal-wait-{pid}"))
            .spawn(move || wait_for_exit(child, pid, &life, exit_tx))
    };
    if let Err(e) = waiter {
        // The child went with the closure; nobody will reap it, but it must not run on.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        return Err(PtyError::Spawn(format!("it cannot be watched ({e})")));
    }
    let session = Arc::new(Session {
        pid,
        master: Mutex::new(pair.master),
        input,
        life,
        stop_reader: Mutex::new(Some(stop_tx)),
        #[cfg(test)]
        bytes_read: bytes_read.clone(),
        _rc_folder: rc_folder,
    });
    let threads = std::thread::Builder::new()
        .name(format!("terminal-read-{pid}"))
        .spawn(move || read_pty(reader, stop_rx, output_tx, &bytes_read))
        .and_then(|_| {
            std::thread::Builder::new()
                .name(format!("terminal-write-{pid}"))
                .spawn(move || write_pty(writer, input_rx))
        });
    if let Err(e) = threads {
        session.life.signal(-pid, libc::SIGKILL);
        return Err(PtyError::Spawn(format!("its terminal could not be served ({e})")));
    }
    Ok(Started {
        session,
        output,
        exited,
    })
}

impl Session {
    #[cfg(test)]
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    #[cfg(test)]
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// Keystrokes, in order. Errors once the shell is gone.
    pub async fn write(&self, bytes: Vec<u8>) -> Result<(), ()> {
        self.input.send(bytes).await.map_err(|_| ())
    }

    pub fn resize(&self, size: PtySize) -> Result<(), PtyError> {
        let master = self.master.lock().recover();
        master.resize(size).map_err(|e| PtyError::Resize(e.to_string()))
    }

    /// SIGHUP to the shell's process group and to the job in the foreground, as a closing terminal
    /// does; a shell still there after the grace is killed with its group.
    pub fn hang_up(&self) {
        let foreground = self.master.lock().recover().process_group_leader();
        self.life.hung_up.store(true, Ordering::SeqCst);
        self.life.signal(-self.pid, libc::SIGHUP);
        if let Some(group) = foreground.filter(|&group| group != self.pid) {
            self.life.signal(-group, libc::SIGHUP);
            self.life.signal(-group, libc::SIGCONT);
        }
        let (life, pid) = (self.life.clone(), self.pid);
        let _ = std::thread::Builder::new()
            .name(format!("terminal-hangup-{pid}"))
            .spawn(move || {
                let reaped = life.lock();
                let (reaped, _) = life
                    .changed
                    .wait_timeout_while(reaped, HANGUP_GRACE, |reaped| !*reaped)
                    .recover();
                if !*reaped {
                    unsafe { libc::kill(-pid, libc::SIGKILL) };
                }
            });
    }

    pub(super) fn stop_reading(&self) {
        if let Some(mut stop) = self.stop_reader.lock().recover().take() {
            let _ = stop.write_all(b"x");
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop_reading();
    }
}

/// A close-on-exec duplicate of the PTY's master end.
fn duplicate(fd: RawFd) -> std::io::Result<File> {
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { File::from_raw_fd(dup) })
}

/// The reader thread: waits for output or for the stop pipe, reads, and hands chunks over, blocking
/// while the channel is full (the backpressure). Ends at the PTY's end (EIO once no process holds
/// it), when stopped, or when the output task is gone.
fn read_pty(mut pty: File, stop: PipeReader, chunks: mpsc::Sender<Vec<u8>>, bytes_read: &AtomicU64) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: pty.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: stop.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if fds[1].revents != 0 || fds[0].revents & libc::POLLNVAL != 0 {
            return;
        }
        if fds[0].revents == 0 {
            continue;
        }
        match pty.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                bytes_read.fetch_add(n as u64, Ordering::Relaxed);
                if chunks.blocking_send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                ) => {}
            Err(_) => return,
        }
    }
}

/// The writer thread: keystrokes in order, until the session is gone or the PTY is.
fn write_pty(mut pty: File, mut input: mpsc::Receiver<Vec<u8>>) {
    while let Some(bytes) = input.blocking_recv() {
        if pty.write_all(&bytes).is_err() {
            return;
        }
    }
}

/// The waiter thread: waits for the shell to end without reaping it, marks it reaped while it reaps
/// it (so no signal goes out in between), and reports its status. A hung-up shell's session is
/// ended before the reap, while its pid (the session's id) cannot have been reused.
fn wait_for_exit(
    mut child: Box<dyn Child + Send + Sync>,
    pid: libc::pid_t,
    life: &Life,
    done: oneshot::Sender<Option<i32>>,
) {
    let code = loop {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            break Some(status_code(&info));
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break None;
        }
    };
    if life.hung_up.load(Ordering::SeqCst) {
        end_session(pid);
    }
    {
        let mut reaped = life.lock();
        let _ = child.wait();
        *reaped = true;
        life.changed.notify_all();
    }
    let _ = done.send(code);
}

/// SIGKILL to every process left in the session `sid` (background jobs in groups of their own, which
/// a shell killed after the grace never hung up). Only on Linux, where `/proc` lists them; elsewhere
/// the shell's own hang-up of its jobs is what there is.
fn end_session(sid: libc::pid_t) {
    #[cfg(target_os = "linux")]
    {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse().ok()) else {
                continue;
            };
            if pid != sid && unsafe { libc::getsid(pid) } == sid {
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = sid;
}

/// The status as a shell reports it: the exit code, or 128 + the signal that ended it.
fn status_code(info: &libc::siginfo_t) -> i32 {
    #[cfg(target_os = "macos")]
    let status = info.si_status;
    #[cfg(not(target_os = "macos"))]
    let status = unsafe { info.si_status() };
    if info.si_code == libc::CLD_EXITED {
        status
    } else {
        128 + status
    }
}
