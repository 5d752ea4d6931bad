//! The one pipe a command's standard output and standard error both write to, so its bytes are
//! read in the order they were written, and its read end, read asynchronously.
//!
//! - Unix ([`unix`]): tokio's pipe, both ends close-on-exec; the child's copies are its fds 1 and
//!   2, made by dup2, so no other process started meanwhile keeps the pipe open.
//! - Windows ([`windows`]): an anonymous pipe, read by a thread of its own (Windows cannot wait on
//!   an anonymous pipe asynchronously), which hands over one chunk at a time.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub(super) use unix::{OutputReader, output_pipe};
#[cfg(windows)]
pub(super) use windows::{OutputReader, output_pipe};

/// The write end twice, for the child's standard output and standard error.
pub(super) struct WriteEnds {
    pub stdout: std::process::Stdio,
    pub stderr: std::process::Stdio,
}
