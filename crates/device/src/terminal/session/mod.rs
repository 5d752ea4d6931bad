//! One terminal: a shell in a PTY and the threads around it. A reader thread reads the PTY into a
//! small bounded channel; [`forward_output`] takes what is there, coalesced into frames, and waits on
//! the link's bulk lane, so a flooding shell stops being read while the link is behind.
//!
//! The PTY and the shell's process are the platform's: [`unix`] (a waiter thread learns the shell's
//! exit status without reaping it first, so no signal can reach a reused pid; hang-up is SIGHUP to
//! its groups) and [`windows`] (ConPTY through portable-pty; hang-up ends the shell).

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use lembas_protocol::LinkMethod;
use lembas_protocol::terminal::TerminalOutput;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use crate::client::outbound::Outbound;
use crate::rpc;
#[cfg(unix)]
pub use unix::{Session, start};
#[cfg(windows)]
pub use windows::{Session, start};

/// The most one read of the PTY takes.
pub const READ_CHUNK: usize = 64 * 1024;
/// The most output one `_lembas/terminal/output` frame carries (before base64).
pub const FRAME_MAX: usize = 64 * 1024;
/// Chunks read but not yet sent, at most: with the link's own small bulk lane, what bounds memory.
pub const READ_QUEUE: usize = 4;
/// Keystroke writes waiting for the PTY, at most.
const INPUT_QUEUE: usize = 64;
/// How long output is still read after the shell ended, for a background job that keeps the PTY open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

pub const OUTPUT: &str = LinkMethod::TerminalOutput.name();

/// A session just started, with the ends its output task takes.
pub struct Started {
    pub session: Arc<Session>,
    pub output: mpsc::Receiver<Vec<u8>>,
    pub exited: oneshot::Receiver<Option<i32>>,
}

/// Why a terminal could not be had; its sentence is the answer's.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    #[error("A terminal could not be opened on this computer: {0}.")]
    Open(String),
    #[error("The shell could not be started: {0}.")]
    Spawn(String),
    #[error("The terminal could not be resized: {0}.")]
    Resize(String),
}

/// How the output ended.
pub struct Ended {
    /// The shell's exit status (128 + signal for a shell ended by a signal), when it could be learnt.
    pub code: Option<i32>,
    /// The link went away while output was being sent.
    pub link_closed: bool,
}

/// Sends the session's output as `_lembas/terminal/output` frames until the shell has ended and its
/// output is read, then says how it ended. Each frame takes what the reader has (sent at once when
/// there is little; up to [`FRAME_MAX`] when there is much) and waits for the link's bulk lane.
pub async fn forward_output(
    session: &Session,
    id: &str,
    mut output: mpsc::Receiver<Vec<u8>>,
    mut exited: oneshot::Receiver<Option<i32>>,
    out: &Outbound,
    shown: impl Fn(&[u8]),
) -> Ended {
    let mut code = None;
    let mut shell_ended = false;
    let mut carried: Option<Vec<u8>> = None;
    let drain = tokio::time::sleep(Duration::MAX);
    tokio::pin!(drain);
    let mut link_closed = false;
    loop {
        let first = match carried.take() {
            Some(chunk) => chunk,
            None => tokio::select! {
                chunk = output.recv() => match chunk {
                    Some(chunk) => chunk,
                    None => break,
                },
                status = &mut exited, if !shell_ended => {
                    shell_ended = true;
                    code = status.ok().flatten();
                    drain.as_mut().reset(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
                    continue;
                }
                () = &mut drain => break,
            },
        };
        let mut frame = first;
        while frame.len() < FRAME_MAX {
            match output.try_recv() {
                Ok(more) if frame.len() + more.len() <= FRAME_MAX => frame.extend_from_slice(&more),
                Ok(more) => {
                    carried = Some(more);
                    break;
                }
                Err(_) => break,
            }
        }
        // Shown on this computer too (the window's copy).
        shown(&frame);
        let data = base64::engine::general_purpose::STANDARD.encode(&frame);
        let output = TerminalOutput {
            terminal_id: id.to_string(),
            data,
        };
        let text = rpc::notification(OUTPUT, json!(output));
        if out.bulk(text).await.is_err() {
            // Nobody is left to read it: the shell goes too.
            link_closed = true;
            session.hang_up();
            break;
        }
    }
    session.stop_reading();
    drop(output);
    if !shell_ended {
        code = exited.await.ok().flatten();
    }
    Ended { code, link_closed }
}
