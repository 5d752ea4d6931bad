//! Windows: an anonymous pipe read by a thread of its own.

use std::io::{self, Read};

use tokio::sync::mpsc;

use super::WriteEnds;

/// Chunks read ahead of the reader, at most: with one, a command printing faster than its output
/// is taken waits on its pipe.
const READ_AHEAD: usize = 1;

/// The read end: chunks from the reading thread, and what of the last one is not yet taken.
pub(in crate::monitor) struct OutputReader {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    left: Vec<u8>,
    at: usize,
}

impl OutputReader {
    /// What is there, 0 at the end (every write end closed).
    pub(in crate::monitor) async fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.at == self.left.len() {
            match self.chunks.recv().await {
                Some(Ok(chunk)) => (self.left, self.at) = (chunk, 0),
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = buffer.len().min(self.left.len() - self.at);
        buffer[..n].copy_from_slice(&self.left[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A new pipe: its read end and the write ends for the child. The reading thread ends at the
/// pipe's end or when the reader is dropped (at its next chunk).
pub(in crate::monitor) fn output_pipe() -> io::Result<(OutputReader, WriteEnds)> {
    let (mut read_end, write_end) = io::pipe()?;
    let stderr = write_end.try_clone()?;
    let (sender, chunks) = mpsc::channel(READ_AHEAD);
    std::thread::Builder::new()
        .name("command-output".into())
        .spawn(move || {
            let mut buffer = vec![0u8; super::super::READ_CHUNK];
            loop {
                let read = match read_end.read(&mut buffer) {
                    Ok(0) => return,
                    // A broken pipe is how Windows says every write end is closed.
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(n) => Ok(buffer[..n].to_vec()),
                    Err(e) => Err(e),
                };
                let failed = read.is_err();
                if sender.blocking_send(read).is_err() || failed {
                    return;
                }
            }
        })?;
    Ok((
        OutputReader {
            chunks,
            left: Vec::new(),
            at: 0,
        },
        WriteEnds {
            stdout: write_end.into(),
            stderr: stderr.into(),
        },
    ))
}
