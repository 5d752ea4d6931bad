//! `lembas chat`'s screen, in a real PTY against a linked device: a keystroke to its echo (beside a
//! raw PTY's own echo, the terminal's floor, with `cat` reading), a streamed token from the moment the bench's model writes it to the
//! moment the chat's screen draws it, and a 5,000-message chat opened with `-c` to its first screen
//! (beside a 50-message one: the process's start, the connection and the chat's opening are in both).

use std::io::{Read, Write};
use std::path::Path;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use lembas_device::store::Store;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::mpsc;

use crate::agent;
use crate::device::lembas_binary;
use crate::instance::LeanInstance;
use crate::model_server::{MODEL, Reply};
use crate::raw_pty::RawPty;
use crate::report::{Row, ms};
use crate::stats::{max, percentile};
use crate::stored_sessions::write_session;

pub const ROWS: [&str; 3] = [
    "Chat keystroke to echo p99",
    "Chat streamed token drawn p99",
    "Open a 5,000-message chat",
];
const GOAL_ECHO: Duration = Duration::from_millis(16);
const GOAL_TOKEN: Duration = Duration::from_millis(16);
const GOAL_OPEN: Duration = Duration::from_millis(200);
/// Waiting for anything the screen should show.
const SHOWN_WITHIN: Duration = Duration::from_secs(30);
/// Between two streamed chunks: each is drawn on its own.
const TOKEN_GAP: Duration = Duration::from_millis(20);
/// The first streamed chunk's number: every chunk's text is five digits, so none contains another.
const FIRST_TOKEN: u64 = 10_000;
/// The last stored message's last word, on the first screen of a stored chat (one word: a frame
/// skips the blank cells between words, so words come apart in the output).
const LAST_WORDS: &str = "sizes.";

pub async fn run(instance: &mut LeanInstance, rounds: usize, tokens: u64) -> anyhow::Result<Vec<Row>> {
    let home = agent::home(&instance.url())?;
    let store = Store::at(
        home.path().join(".local/state/lembas"),
        &lembas_device::decisions::Decisions::built_in().turns,
    );
    let (big, small, fresh) = (
        home.work().join("big"),
        home.work().join("small"),
        home.work().join("new"),
    );
    for folder in [&big, &small, &fresh] {
        std::fs::create_dir_all(folder)?;
    }
    write_session(&store, &big, 0, 5_000)?;
    write_session(&store, &small, 1, 50)?;
    let (_device, _link) = home.link(instance).await?;

    let (mut big_took, mut small_took) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        big_took.push(open(home.path(), &big)?);
        small_took.push(open(home.path(), &small)?);
    }

    // The bench's instance serves no default model: the chat names its one.
    let mut chat = ChatPty::start(home.path(), &fresh, &["--model", MODEL])?;
    chat.wait_for("· ready", SHOWN_WITHIN)?;
    let echoed = chat.echo(rounds)?;
    let raw = raw_echo(home.path(), rounds)?;

    let (written, mut stamps) = mpsc::unbounded_channel();
    instance.model().set(Reply::Numbered {
        first: FIRST_TOKEN,
        count: tokens,
        gap: TOKEN_GAP,
        written,
    });
    chat.type_text("stream\r")?;
    let drawn = chat.tokens_drawn(FIRST_TOKEN, tokens)?;
    instance.model().set(Reply::Instant);
    let mut token_took = Vec::new();
    while let Ok((seq, at)) = stamps.try_recv() {
        if let Some(seen) = drawn.get(&seq) {
            token_took.push(seen.saturating_duration_since(at.into_std()));
        }
    }
    if token_took.is_empty() {
        bail!("no streamed token was seen drawn");
    }

    let (echo_p99, raw_p99) = (percentile(&echoed, 99.0), percentile(&raw, 99.0));
    let token_p99 = percentile(&token_took, 99.0);
    let (big_open, small_open) = (percentile(&big_took, 50.0), percentile(&small_took, 50.0));
    Ok(vec![
        Row::new(ROWS[0], ms(echo_p99), format!("raw PTY echo {}", ms(raw_p99)))
            .ratio(echo_p99.as_secs_f64() / raw_p99.as_secs_f64().max(1e-9))
            .goal("<= 16 ms", echo_p99 <= GOAL_ECHO)
            .note(format!("p50 {}; {rounds} keys typed into the input line", ms(percentile(&echoed, 50.0)))),
        Row::new(ROWS[1], ms(token_p99), "-".to_string())
            .goal("<= 16 ms", token_p99 <= GOAL_TOKEN)
            .note(format!(
                "from the model's write to the screen's, through the device; p50 {}; {} of {tokens} chunks seen whole",
                ms(percentile(&token_took, 50.0)),
                token_took.len()
            )),
        Row::new(ROWS[2], ms(big_open), format!("50 messages {}", ms(small_open)))
            .ratio(big_open.as_secs_f64() / small_open.as_secs_f64().max(1e-9))
            .goal("<= 200 ms", big_open <= GOAL_OPEN)
            .note(format!(
                "lembas chat -c started to its first screen, median of {}, worst {}",
                big_took.len(),
                ms(max(&big_took))
            )),
    ])
}

/// `lembas chat -c` in `folder`, from its start to the stored chat's last words on the screen.
fn open(home: &Path, folder: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut chat = ChatPty::start(home, folder, &["-c"])?;
    chat.wait_for(LAST_WORDS, SHOWN_WITHIN)?;
    Ok(started.elapsed())
}

/// A raw PTY's own echo (`cat` reading): one key, its echo, `rounds` times.
fn raw_echo(home: &Path, rounds: usize) -> anyhow::Result<Vec<Duration>> {
    let mut pty = RawPty::bash(home, &["--norc", "--noprofile", "-c", "echo READY; exec cat"])?;
    pty.read_until(|chunk| chunk.windows(5).any(|w| w == b"READY"))?;
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        pty.type_text("x")?;
        pty.read_until(|chunk| chunk.contains(&b'x'))?;
        samples.push(started.elapsed());
    }
    Ok(samples)
}

/// `lembas chat` in a PTY of its own (160 × 48), its output read on a thread and stamped.
struct ChatPty {
    output: std_mpsc::Receiver<(Instant, Vec<u8>)>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    _master: Box<dyn MasterPty + Send>,
}

impl ChatPty {
    fn start(home: &Path, folder: &Path, args: &[&str]) -> anyhow::Result<ChatPty> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 48,
                cols: 160,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| anyhow!("cannot open a PTY: {e}"))?;
        let mut command = CommandBuilder::new(lembas_binary()?);
        command.args(["chat", "--no-share", "-C"]);
        command.arg(folder);
        command.args(args);
        command.env("HOME", home);
        command.env("XDG_CONFIG_HOME", home.join(".config"));
        command.env("XDG_STATE_HOME", home.join(".local/state"));
        command.env("TERM", "xterm-256color");
        let child = pair
            .slave
            .spawn_command(command)
            .map_err(|e| anyhow!("cannot start lembas chat in a PTY: {e}"))?;
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().map_err(|e| anyhow!("{e}"))?;
        let writer = pair.master.take_writer().map_err(|e| anyhow!("{e}"))?;
        let (sent, output) = std_mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || sent.send((Instant::now(), buf[..n].to_vec())).is_err() {
                    return;
                }
            }
        });
        Ok(ChatPty {
            output,
            writer,
            child,
            _master: pair.master,
        })
    }

    fn type_text(&mut self, text: &str) -> anyhow::Result<()> {
        self.writer.write_all(text.as_bytes())?;
        self.writer.flush()?;
        Ok(())
    }

    /// Reads until the output so far holds `text`.
    fn wait_for(&mut self, text: &str, within: Duration) -> anyhow::Result<()> {
        let end = Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let Ok((_, chunk)) = self.output.recv_timeout(left) else {
                bail!(
                    "lembas chat never showed {text:?}; it wrote: {:?}",
                    printed(&seen)
                );
            };
            seen.extend_from_slice(&chunk);
            if seen.windows(text.len()).any(|w| w == text.as_bytes()) {
                return Ok(());
            }
        }
    }

    /// A key typed, until the screen writes it: `rounds` times, the first ten not counted.
    fn echo(&mut self, rounds: usize) -> anyhow::Result<Vec<Duration>> {
        let mut samples = Vec::with_capacity(rounds);
        for round in 0..rounds + 10 {
            while self.output.try_recv().is_ok() {}
            let key = b'a' + (round % 26) as u8;
            let started = Instant::now();
            self.type_text(&(key as char).to_string())?;
            loop {
                let (at, chunk) = self
                    .output
                    .recv_timeout(SHOWN_WITHIN)
                    .context("a key typed into lembas chat was never drawn")?;
                if chunk.contains(&key) {
                    if round >= 10 {
                        samples.push(at.duration_since(started));
                    }
                    break;
                }
            }
            // The line never grows past the screen's width.
            if round % 100 == 99 {
                self.type_text("\x15")?;
            }
        }
        self.type_text("\x15")?;
        Ok(samples)
    }

    /// When each numbered chunk's text was first written to the screen, until the last one.
    fn tokens_drawn(
        &mut self,
        first: u64,
        count: u64,
    ) -> anyhow::Result<std::collections::HashMap<u64, Instant>> {
        let mut drawn = std::collections::HashMap::new();
        let mut tail = String::new();
        let last = first + count - 1;
        let end = Instant::now() + SHOWN_WITHIN;
        while !drawn.contains_key(&last) {
            let left = end.saturating_duration_since(Instant::now());
            let Ok((at, chunk)) = self.output.recv_timeout(left) else {
                break;
            };
            tail.push_str(&String::from_utf8_lossy(&chunk));
            for seq in first..=last {
                if !drawn.contains_key(&seq) && tail.contains(&seq.to_string()) {
                    drawn.insert(seq, at);
                }
            }
            // Keep enough for a number cut between two reads.
            let keep = tail.len().saturating_sub(8);
            let mut cut = keep;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail.replace_range(..cut, "");
        }
        Ok(drawn)
    }
}

/// The printed characters of terminal output, its escape sequences left out (for an error).
fn printed(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let mut shown = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: up to its final byte; anything else: the one character after ESC.
            if chars.next_if_eq(&'[').is_some() {
                while chars.next().is_some_and(|c| !('@'..='~').contains(&c)) {}
            } else {
                chars.next();
            }
            shown.push(' ');
        } else if !c.is_control() {
            shown.push(c);
        }
    }
    let words: Vec<&str> = shown.split_whitespace().collect();
    words.join(" ").chars().take(2000).collect()
}

impl Drop for ChatPty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
