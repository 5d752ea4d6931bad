//! The process side of `_lembas/monitor` (docs/protocol.md "Monitor mode"): run a
//! schedule's watch command, hash its output as it streams, and answer with the result's shape. The
//! permission judgement and the refusals are the caller's; this runs what it is given.
//!
//! How a watch runs:
//! - `bash -c <command>` in `cwd`, in a process tree of its own ([`crate::process_tree`]: a process
//!   group on Unix, a Job Object on Windows, where bash is Git Bash's, [`crate::commands_shell`]),
//!   stdin the null device, and standard output and standard error as one pipe (both are the same
//!   pipe's write end, [`output_pipe`]), so the bytes are in the order the process wrote them.
//! - The output is read asynchronously; every byte goes through SHA-256, the first
//!   `scheduled.monitor.output_max_bytes` are kept for the excerpt, the rest are only counted.
//! - The watch is over when the pipe is closed and bash has exited. In the box (sandbox/namespaces/)
//!   bash's end ends everything it started, so the two come together. Without the box, bash exiting
//!   while something it started still holds the pipe (`sleep 100 &`) is not the end: the output is
//!   not complete, so the watch keeps reading until the timeout, and then it is a timeout like any
//!   other.
//! - At the timeout the tree is stopped: SIGTERM to the group, SIGKILL to the group when anything
//!   is left after `kill_grace_ms`, then at most `kill_grace_ms` more for it to be gone (Windows:
//!   the job's processes are ended at once). Members left
//!   behind by a watch that finished (a background job that let go of the output) are stopped the
//!   same way, since a schedule repeating the watch would otherwise pile them up.
//! - Dropping the future part-way kills the tree (SIGKILL; the job closed) and leaves bash to
//!   tokio's reaper.
//!
//! Every watch and command runs in the [`Sandbox`] it is given (docs/protocol.md "The sandbox under every
//! command"), made by the caller from the limits at that moment.
//!
//! `truncated` is true exactly when the excerpt is not the whole output: the output was longer than
//! what was kept, or the kept bytes decode to more than `excerpt_chars` characters. When keeping
//! stopped inside a multi-byte character, that partial character is left out of the excerpt.

mod output;
mod output_pipe;
#[cfg(test)]
mod tests;

use crate::decisions;
use crate::events::WatchEnd;
use crate::process_tree::{self, ProcessTree};
use crate::sandbox::Sandbox;
use lembas_protocol::scheduled::Watched;
use output::OutputSink;
use output_pipe::{OutputReader, output_pipe};
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How much output is read at a time: the only buffer besides the kept start of the output.
const READ_CHUNK: usize = 64 * 1024;
/// How often a stopping watch looks whether its group is gone (a group ending wakes nothing).
const GROUP_POLL: Duration = Duration::from_millis(20);

/// How a watch (or a `bash` call) ended: `_lembas/monitor`'s result, and for the model why the
/// sandbox refused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchOutcome {
    pub watched: Watched,
    /// The line saying the sandbox refused a read or write, when the command failed that way while
    /// sandboxed: for the model, never part of `_lembas/monitor`'s result.
    pub sandbox_refusal: Option<String>,
}

impl WatchOutcome {
    /// How it ended, without what it printed: what the activity list is told.
    pub fn end(&self) -> WatchEnd {
        let w = &self.watched;
        WatchEnd {
            exit: w.exit,
            timed_out: w.timed_out,
            truncated: w.truncated,
            bytes: w.bytes,
            duration_ms: w.duration_ms,
        }
    }
}

/// The watch's time limit from the request's `timeout_s`: absent, zero, negative or not a number
/// gives `scheduled.monitor.timeout_seconds.default`; more than `max` (infinity included) gives `max`.
/// Fractions of a second are kept.
pub fn clamp_timeout(requested: Option<f64>, limits: &decisions::MonitorTimeout) -> Duration {
    let max = Duration::from_secs(limits.max);
    let default = Duration::from_secs(limits.default).min(max);
    match requested {
        Some(seconds) if seconds.is_nan() || seconds <= 0.0 => default,
        Some(seconds) if seconds >= limits.max as f64 => max,
        Some(seconds) => Duration::from_secs_f64(seconds),
        None => default,
    }
}

/// Runs `command` as a watch (see the module's description) and answers with its outcome. A timeout
/// is an outcome, not an error; errors are failures to run at all (no bash, a `cwd` that cannot be
/// entered) or to read the output, each with a message a person can act on.
///
/// Must be called inside a tokio runtime with I/O and time enabled.
pub async fn run_watch(
    cwd: &Path,
    command: &str,
    timeout: Duration,
    sandbox: &Sandbox,
    numbers: &decisions::Monitor,
) -> io::Result<WatchOutcome> {
    let limits = WatchLimits {
        output_max_bytes: numbers.output_max_bytes,
        excerpt_chars: numbers.excerpt_chars,
        kill_grace: Duration::from_millis(numbers.kill_grace_ms),
    };
    run_watch_within(cwd, command, timeout, &limits, sandbox, None).await
}

/// The bash tool's runner (docs/protocol.md "Tools"): the same process group, one stream and stopping as a
/// watch, but keeping `keep_bytes` of output whole for the model instead of an excerpt. Dropping
/// the future (session/cancel) kills the group.
pub async fn run_command(
    cwd: &Path,
    command: &str,
    timeout: Duration,
    keep_bytes: usize,
    sandbox: &Sandbox,
    numbers: &decisions::Monitor,
) -> io::Result<WatchOutcome> {
    run_command_forwarding(cwd, command, timeout, keep_bytes, sandbox, numbers, None).await
}

/// [`run_command`], every chunk of output also sent to `forward` as it is read (an editor drawing
/// it as it comes). The receiver must keep reading: the command's output waits for it.
pub async fn run_command_forwarding(
    cwd: &Path,
    command: &str,
    timeout: Duration,
    keep_bytes: usize,
    sandbox: &Sandbox,
    numbers: &decisions::Monitor,
    forward: Option<mpsc::Sender<Vec<u8>>>,
) -> io::Result<WatchOutcome> {
    let limits = WatchLimits {
        output_max_bytes: keep_bytes,
        excerpt_chars: usize::MAX,
        kill_grace: Duration::from_millis(numbers.kill_grace_ms),
    };
    run_watch_within(cwd, command, timeout, &limits, sandbox, forward).await
}

/// How a background job's command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobEnd {
    /// The exit code; `None` when a signal ended it.
    pub exit: Option<i32>,
    /// It was stopped (`stop` fired), rather than ending by itself.
    pub stopped: bool,
    /// Whether it ran in a sandbox (for [`Sandbox::refusal_line`]).
    pub sandboxed: bool,
}

/// A background job's runner (docs/protocol.md "Background jobs"): the bash tool's process group,
/// one stream and stopping, with no time limit. Every chunk of output goes to `output` as it is
/// read. When `stop` fires (or its sender is dropped) the group is stopped as a watch's is at its
/// timeout; dropping the future kills the group.
pub async fn run_job(
    cwd: &Path,
    command: &str,
    sandbox: &Sandbox,
    output: mpsc::Sender<Vec<u8>>,
    stop: oneshot::Receiver<()>,
    numbers: &decisions::Monitor,
) -> io::Result<JobEnd> {
    let grace = Duration::from_millis(numbers.kill_grace_ms);
    let mut watch = Watch::start(cwd, command, 0, sandbox)?;
    watch.forward = Some(output);
    let stopped = tokio::select! {
        ended = async {
            // A job has no time limit: it is looked at again every hour only to keep `until` sane.
            while !watch.run_until(Instant::now() + Duration::from_secs(3600), Watch::output_and_exit_seen, false).await? {}
            Ok::<(), io::Error>(())
        } => {
            ended?;
            false
        }
        _ = stop => true,
    };
    // Stopped, or ended with something it started still in its group: the group is stopped.
    if stopped || watch.tree.alive() {
        watch.stop_group(grace).await?;
    }
    let status = match watch.status {
        Some(status) => status,
        None => watch.child.wait().await?,
    };
    watch.tree.disarm();
    if let Some(swept) = swept_line(&watch.absent) {
        tracing::warn!("A background job {swept}");
    }
    let (_, exit) = hashed_status(status)?;
    Ok(JobEnd {
        exit,
        stopped,
        sandboxed: watch.sandboxed,
    })
}

/// The decisions' numbers a watch runs by; apart so the tests can use small ones.
struct WatchLimits {
    output_max_bytes: usize,
    excerpt_chars: usize,
    kill_grace: Duration,
}

async fn run_watch_within(
    cwd: &Path,
    command: &str,
    timeout: Duration,
    limits: &WatchLimits,
    sandbox: &Sandbox,
    forward: Option<mpsc::Sender<Vec<u8>>>,
) -> io::Result<WatchOutcome> {
    let started = Instant::now();
    let mut watch = Watch::start(cwd, command, limits.output_max_bytes, sandbox)?;
    watch.forward = forward;
    let finished = watch
        .run_until(started + timeout, Watch::output_and_exit_seen, false)
        .await?;
    if !finished || watch.tree.alive() {
        watch.stop_group(limits.kill_grace).await?;
    }
    watch.tree.disarm();

    let (hash, exit) = match (finished, watch.status) {
        (false, _) => (None, None),
        (true, Some(status)) => {
            let (hashed, exit) = hashed_status(status)?;
            (Some(watch.sink.hash(hashed)), exit)
        }
        (true, None) => return Err(io::Error::other("the watch command's exit status was lost")),
    };
    let (excerpt, truncated) = watch.sink.excerpt(limits.excerpt_chars);
    let refused = match (watch.sandboxed, finished) {
        (true, true) => sandbox.refusal_line(&excerpt, exit),
        _ => None,
    };
    let swept = swept_line(&watch.absent);
    let sandbox_refusal = match (refused, swept) {
        (Some(refused), Some(swept)) => Some(format!("{refused}\n{swept}")),
        (refused, swept) => refused.or(swept),
    };
    Ok(WatchOutcome {
        watched: Watched {
            hash,
            exit,
            timed_out: !finished,
            excerpt,
            truncated,
            bytes: watch.sink.bytes(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        },
        sandbox_refusal,
    })
}

/// Removes what the command made where a project lacked a governing place (`.agent/`,
/// `.lembas/`, `.git/hooks`), which the box could not bind read-only; the line saying so.
fn swept_line(absent: &[std::path::PathBuf]) -> Option<String> {
    let removed = crate::sandbox::inside_roots::sweep(absent);
    if removed.is_empty() {
        return None;
    }
    let names: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
    Some(format!(
        "[the sandbox removed {}: a command may not make the places that govern what runs later]",
        names.join(", ")
    ))
}

/// The status the hash uses and the `exit` the result says: an exit code is both; a signal hashes as
/// a shell reports it (128 + the signal) and has no exit.
fn hashed_status(status: ExitStatus) -> io::Result<(i32, Option<i32>)> {
    process_tree::shell_status(status)
        .ok_or_else(|| io::Error::other(format!("the watch command ended in an unexpected way ({status})")))
}

/// One running watch: bash, the read end of its output, and what has been seen so far.
struct Watch {
    child: Child,
    /// None once the pipe is closed (or given up on while stopping).
    output: Option<OutputReader>,
    status: Option<ExitStatus>,
    sink: OutputSink,
    buffer: Box<[u8]>,
    tree: ProcessTree,
    /// Whether bash runs in a sandbox (`remote.sandbox: auto` runs without one where none is had).
    sandboxed: bool,
    /// Governing places its projects lacked, swept when it ends.
    absent: Vec<std::path::PathBuf>,
    /// A background job's: where each chunk read goes as well.
    /// A job's reader: bounded, so a command printing faster than the job's output is kept
    /// waits on its pipe instead of the device holding what it printed.
    forward: Option<mpsc::Sender<Vec<u8>>>,
}

impl Watch {
    fn start(cwd: &Path, command: &str, output_max_bytes: usize, sandbox: &Sandbox) -> io::Result<Self> {
        // Made before anything is opened: a refusal (`remote.sandbox: required`) leaves nothing.
        let prepared = sandbox.prepare()?;
        let (read_end, write_ends) = output_pipe()?;
        let sandboxed = prepared.on();
        let absent = prepared.absent();
        let mut bash: Command = prepared.command(crate::commands_shell::bash()?, cwd)?;
        bash.arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(write_ends.stdout)
            .stderr(write_ends.stderr);
        ProcessTree::prepare(&mut bash);
        let child = bash.spawn().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "Could not start the watch command with bash in {}: {e}",
                    cwd.display()
                ),
            )
        })?;
        // The Command holds our copies of the write end; the pipe only closes once they are gone.
        // The sandbox's ruleset was needed only until the child restricted itself.
        drop(bash);
        let tree = ProcessTree::of(&child)?;
        Ok(Self {
            child,
            output: Some(read_end),
            status: None,
            sink: OutputSink::new(output_max_bytes),
            buffer: vec![0; READ_CHUNK].into_boxed_slice(),
            tree,
            sandboxed,
            absent,
            forward: None,
        })
    }

    fn output_and_exit_seen(&self) -> bool {
        self.output.is_none() && self.status.is_some()
    }

    /// Reads output and reaps bash until `done` holds (true) or `until` passes (false). With
    /// `poll_group`, also wakes now and then, for a `done` that looks at the group.
    async fn run_until(
        &mut self,
        until: Instant,
        done: fn(&Self) -> bool,
        poll_group: bool,
    ) -> io::Result<bool> {
        let deadline = tokio::time::sleep_until(until);
        tokio::pin!(deadline);
        let mut ticks = tokio::time::interval(GROUP_POLL);
        loop {
            if done(self) {
                return Ok(true);
            }
            let reading = self.output.is_some();
            let waiting = self.status.is_none();
            tokio::select! {
                read = read_some(&mut self.output, &mut self.buffer), if reading => match read {
                    Ok(0) => self.output = None,
                    Ok(n) => {
                        self.sink.take(&self.buffer[..n]);
                        if let Some(forward) = &self.forward {
                            let _ = forward.send(self.buffer[..n].to_vec()).await;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(io::Error::new(e.kind(), format!("Could not read the watch command's output: {e}"))),
                },
                status = self.child.wait(), if waiting => {
                    self.status = Some(status.map_err(|e| {
                        io::Error::new(e.kind(), format!("Could not wait for the watch command: {e}"))
                    })?);
                }
                _ = &mut deadline => return Ok(false),
                _ = ticks.tick(), if poll_group => {}
            }
        }
    }

    /// SIGTERM to the group; SIGKILL after the grace if anything is left; then at most the grace again
    /// for it to be gone. Output read meanwhile still counts.
    async fn stop_group(&mut self, grace: Duration) -> io::Result<()> {
        self.tree.ask_to_stop();
        let gone = self
            .run_until(Instant::now() + grace, |w| !w.tree.alive(), true)
            .await?;
        if !gone {
            self.tree.kill();
            self.run_until(
                Instant::now() + grace,
                |w| w.status.is_some() && !w.tree.alive(),
                true,
            )
            .await?;
        }
        // Whatever still holds the pipe now has left the group (setsid); its output is not waited for.
        self.output = None;
        Ok(())
    }
}

/// Reads from the pipe, or never finishes once it is closed (so a select can leave it out).
async fn read_some(output: &mut Option<OutputReader>, buffer: &mut [u8]) -> io::Result<usize> {
    match output {
        Some(reader) => reader.read(buffer).await,
        None => std::future::pending().await,
    }
}
