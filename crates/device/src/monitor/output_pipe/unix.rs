//! Unix: tokio's pipe.

use std::io;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;

use super::WriteEnds;

/// The read end.
pub(in crate::monitor) struct OutputReader(pipe::Receiver);

impl OutputReader {
    /// What is there, 0 at the end (every write end closed).
    pub(in crate::monitor) async fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        self.0.read(buffer).await
    }
}

/// A new pipe: its read end and the write ends for the child.
pub(in crate::monitor) fn output_pipe() -> io::Result<(OutputReader, WriteEnds)> {
    // Both ends are close-on-exec, so no other process started meanwhile inherits the write end
    // and keeps the pipe open; the child's copies are its fds 1 and 2, made by dup2.
    let (write_end, read_end) = pipe::pipe()?;
    let stdout = write_end.into_blocking_fd()?;
    let stderr = stdout.try_clone()?;
    Ok((
        OutputReader(read_end),
        WriteEnds {
            stdout: stdout.into(),
            stderr: stderr.into(),
        },
    ))
}
