//! The terminal baselines' side: a command in a PTY the bench opens itself (portable-pty), read
//! and written directly with blocking calls, as fast as a PTY goes without the device and the link.

use std::io::{ErrorKind, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::device::PROMPT;

const READ_CHUNK: usize = 64 * 1024;

pub struct RawPty {
    reader: Box<dyn Read + Send>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    // Kept open for the child's lifetime: dropping the master hangs the terminal up.
    _master: Box<dyn MasterPty + Send>,
}

impl RawPty {
    /// `bash` with `args` in a fresh 80 × 24 PTY, in `home`, showing the bench prompt.
    pub fn bash(home: &Path, args: &[&str]) -> anyhow::Result<Self> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| anyhow!("cannot open a PTY: {e}"))?;
        let mut command = CommandBuilder::new("bash");
        command.args(args);
        command.cwd(home);
        command.env("HOME", home);
        command.env("TERM", "xterm-256color");
        command.env("PS1", PROMPT);
        let child = pair
            .slave
            .spawn_command(command)
            .map_err(|e| anyhow!("cannot start bash in a PTY: {e}"))?;
        // Only the child holds the slave now, so its exit ends our reads.
        drop(pair.slave);
        let reader = pair.master.try_clone_reader().map_err(|e| anyhow!("{e}"))?;
        let writer = pair.master.take_writer().map_err(|e| anyhow!("{e}"))?;
        Ok(RawPty {
            reader,
            writer,
            child,
            _master: pair.master,
        })
    }

    pub fn type_text(&mut self, text: &str) -> anyhow::Result<()> {
        self.writer.write_all(text.as_bytes())?;
        self.writer.flush()?;
        Ok(())
    }

    /// Reads until `done` says so for a chunk, or the PTY ends (then `ended` is returned as true).
    /// The bytes read.
    pub fn read_until(&mut self, mut done: impl FnMut(&[u8]) -> bool) -> anyhow::Result<(u64, bool)> {
        let mut buf = vec![0u8; READ_CHUNK];
        let mut total = 0u64;
        loop {
            let n = match self.reader.read(&mut buf) {
                Ok(0) => return Ok((total, true)),
                // Linux answers EIO once nothing holds the slave: the end of the output.
                Err(error) if error.raw_os_error() == Some(libc::EIO) => return Ok((total, true)),
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => return Err(error).context("reading the PTY"),
                Ok(n) => n,
            };
            total += n as u64;
            if done(&buf[..n]) {
                return Ok((total, false));
            }
        }
    }
}

impl Drop for RawPty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Finds byte strings, one after the other, in a stream of chunks, across chunk boundaries.
pub struct Finder {
    needles: Vec<Vec<u8>>,
    next: usize,
    tail: Vec<u8>,
}

impl Finder {
    pub fn new(needle: &str) -> Self {
        Finder::in_order(&[needle])
    }

    /// Each needle must come after the previous one's end.
    pub fn in_order(needles: &[&str]) -> Self {
        let needles = needles.iter().map(|n| n.as_bytes().to_vec()).collect();
        Finder {
            needles,
            next: 0,
            tail: Vec::new(),
        }
    }

    /// Whether every needle has been seen, this chunk included.
    pub fn found_in(&mut self, chunk: &[u8]) -> bool {
        self.tail.extend_from_slice(chunk);
        while let Some(needle) = self.needles.get(self.next) {
            match find(&self.tail, needle) {
                Some(at) => {
                    self.tail.drain(..at + needle.len());
                    self.next += 1;
                }
                None => {
                    let keep = needle.len().saturating_sub(1);
                    if self.tail.len() > keep {
                        self.tail.drain(..self.tail.len() - keep);
                    }
                    return false;
                }
            }
        }
        true
    }
}

/// Where `needle` starts in `haystack`. Looks for the first byte before comparing, so scanning a
/// flood costs the client little (the throughput figures count the client's work).
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let Some(&first) = needle.first() else {
        return Some(0);
    };
    let mut from = 0;
    while let Some(skip) = haystack[from..].iter().position(|&b| b == first) {
        let at = from + skip;
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The marker the terminal throughput command prints after its output (`$((6*7))` in the typed
/// line, so the echo of the line does not match).
pub const THROUGHPUT_END: &str = "BENCH_42_END";

/// Time to read `bytes` of `head -c` output through a raw PTY.
pub fn throughput(home: &Path, bytes: u64) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut pty = RawPty::bash(
        home,
        &[
            "--noprofile",
            "--norc",
            "-c",
            &format!("head -c {bytes} /dev/zero"),
        ],
    )?;
    // The same scan the linked client does for its end marker, so both sides do the same work.
    let mut end = Finder::new(THROUGHPUT_END);
    let (read, _) = pty.read_until(|chunk| end.found_in(chunk))?;
    let took = started.elapsed();
    if read < bytes {
        bail!("the raw PTY gave {read} of {bytes} bytes");
    }
    Ok(took)
}

/// Keystroke echo round trips against `cat` in a raw PTY: the line discipline echoes each key.
pub fn echo(home: &Path, rounds: usize) -> anyhow::Result<Vec<Duration>> {
    let mut pty = RawPty::bash(home, &["--noprofile", "--norc", "-c", "exec cat"])?;
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let mut line = Finder::new(ECHOED_LINE);
        let mut whole_line = false;
        let started = Instant::now();
        pty.type_text("x")?;
        pty.read_until(|chunk| {
            whole_line |= line.found_in(chunk);
            !chunk.is_empty()
        })?;
        samples.push(started.elapsed());
        pty.type_text("\r")?;
        if !whole_line {
            pty.read_until(|chunk| line.found_in(chunk))?;
        }
    }
    Ok(samples)
}

/// What one echo round shows: the key's echo, Enter's, and the line `cat` writes back.
pub const ECHOED_LINE: &str = "x\r\nx\r\n";

/// How much of a flood is read before Ctrl-C is pressed.
pub const FLOOD_BEFORE_CTRL_C: u64 = 1 << 20;

/// Ctrl-C to the prompt while `yes` floods an interactive bash in a raw PTY.
pub fn ctrl_c(home: &Path, trials: usize) -> anyhow::Result<Vec<Duration>> {
    let mut pty = RawPty::bash(home, &["--noprofile", "--norc", "-i"])?;
    let mut prompt = Finder::new(PROMPT);
    pty.read_until(|chunk| prompt.found_in(chunk))?;
    let mut samples = Vec::with_capacity(trials);
    for _ in 0..trials {
        pty.type_text("yes\r")?;
        let mut flooded = 0u64;
        pty.read_until(|chunk| {
            flooded += chunk.len() as u64;
            flooded >= FLOOD_BEFORE_CTRL_C
        })?;
        let started = Instant::now();
        pty.type_text("\x03")?;
        let mut prompt = Finder::new(PROMPT);
        let (_, ended) = pty.read_until(|chunk| prompt.found_in(chunk))?;
        if ended {
            bail!("bash ended instead of showing its prompt after Ctrl-C");
        }
        samples.push(started.elapsed());
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::Finder;

    #[test]
    fn finds_needles_in_order_across_chunks() {
        let mut finder = Finder::in_order(&["OK\r\n", "$ "]);
        assert!(!finder.found_in(b"$ echo O"));
        assert!(!finder.found_in(b"K\r"));
        assert!(!finder.found_in(b"\n\x1b[?2004h"));
        assert!(finder.found_in(b"$ "));
    }
}
