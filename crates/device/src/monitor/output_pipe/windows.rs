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

// Run under Wine by scripts/test-windows. The test program is the command: it runs one of its own
// ignored tests, which writes to both its outputs.
#[cfg(test)]
mod tests {
    use super::output_pipe;

    const LINES: usize = 2000;

    #[test]
    #[ignore = "the command of both_outputs_arrive_in_order_through_one_pipe, started by it"]
    fn a_command_writing_to_both_outputs() {
        for i in 0..LINES {
            println!("out {i}");
            eprintln!("err {i}");
        }
    }

    #[tokio::test]
    async fn both_outputs_arrive_in_order_through_one_pipe_and_it_ends_with_the_command() {
        let (mut reader, ends) = output_pipe().expect("a pipe");
        let mut child = {
            let mut command = std::process::Command::new(std::env::current_exe().expect("its path"));
            command.args([
                "--ignored",
                "--exact",
                "--nocapture",
                "monitor::output_pipe::windows::tests::a_command_writing_to_both_outputs",
            ]);
            command.stdout(ends.stdout).stderr(ends.stderr);
            // The command (and with it this process's copies of the write ends) goes here.
            command.spawn().expect("the command starts")
        };
        let mut output = Vec::new();
        let mut buffer = vec![0u8; 1000];
        let read_all = async {
            loop {
                let n = reader.read(&mut buffer).await.expect("a read");
                if n == 0 {
                    break;
                }
                output.extend_from_slice(&buffer[..n]);
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(60), read_all)
            .await
            .expect("the pipe ends when the command does");
        assert!(child.wait().expect("its status").success());
        let text = String::from_utf8_lossy(&output);
        let mut at = 0;
        for i in 0..LINES {
            for line in [format!("out {i}\n"), format!("err {i}\n")] {
                let found = text[at..]
                    .find(&line)
                    .unwrap_or_else(|| panic!("{line:?} after byte {at} of {}", text.len()));
                at += found + line.len();
            }
        }
    }
}
