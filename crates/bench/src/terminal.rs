//! Row 4 (issue 4): terminals over the link against a raw PTY in the same run: output throughput,
//! keystroke echo, and Ctrl-C to the prompt during a flood. The client side is the bench on the
//! raw link socket: it decodes every output frame, as a web terminal would.

use lembas_protocol::LinkMethod;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use base64::Engine;
use serde::Deserialize;
use serde_json::json;

use crate::device::{DeviceHome, LINK_WAIT, PROMPT};
use crate::instance::{LeanInstance, RawLink};
use crate::raw_pty::{self, ECHOED_LINE, FLOOD_BEFORE_CTRL_C, Finder, THROUGHPUT_END};
use crate::report::{Row, ms};
use crate::stats::{max, mib_per_s, percentile};

pub const ROWS: [&str; 3] = [
    "Terminal output throughput",
    "Keystroke echo p99",
    "Ctrl-C under flood",
];
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;
const GOAL_THROUGHPUT: f64 = 0.7;
const GOAL_ECHO_ABOVE_RAW: Duration = Duration::from_millis(1);
const GOAL_CTRL_C: Duration = Duration::from_millis(200);
const ECHO_WARMUP: usize = 10;

pub struct Sizes {
    pub output_bytes: u64,
    pub echo_rounds: usize,
    pub ctrl_c_trials: usize,
}

pub async fn run(instance: &mut LeanInstance, sizes: &Sizes) -> anyhow::Result<Vec<Row>> {
    let home = DeviceHome::new(&instance.url(), |work| {
        format!(
            "remote:\n  enabled: true\n  terminal: true\n  terminal_integration: false\n  require_trust: false\n  roots:\n    - {}\n",
            work.display()
        )
    })?;
    let (_device, mut link) = home.link(instance).await?;
    let work = home.work();
    let raw_home = home.path().to_path_buf();

    let bytes = sizes.output_bytes;
    let linked = output_throughput(&mut link, &work, bytes).await?;
    let raw = blocking(move || raw_pty::throughput(&raw_home, bytes)).await?;
    let (linked_rate, raw_rate) = (mib_per_s(bytes, linked), mib_per_s(bytes, raw));
    let throughput_ratio = linked_rate / raw_rate.max(1e-9);

    let rounds = sizes.echo_rounds;
    let linked_echo = echo(&mut link, &work, ECHO_WARMUP + rounds).await?;
    let raw_home = home.path().to_path_buf();
    let raw_echo = blocking(move || raw_pty::echo(&raw_home, ECHO_WARMUP + rounds)).await?;
    let (linked_echo, raw_echo) = (&linked_echo[ECHO_WARMUP..], &raw_echo[ECHO_WARMUP..]);
    let (echo_p99, raw_p99) = (percentile(linked_echo, 99.0), percentile(raw_echo, 99.0));

    let trials = sizes.ctrl_c_trials;
    let linked_ctrl_c = ctrl_c(&mut link, &work, trials).await?;
    let raw_home = home.path().to_path_buf();
    let raw_ctrl_c = blocking(move || raw_pty::ctrl_c(&raw_home, trials)).await?;
    let worst = max(&linked_ctrl_c);

    Ok(vec![
        Row::new(
            ROWS[0],
            format!("{linked_rate:.0} MiB/s"),
            format!("raw PTY {raw_rate:.0} MiB/s"),
        )
        .ratio(throughput_ratio)
        .goal(
            format!(">= {GOAL_THROUGHPUT}x"),
            throughput_ratio >= GOAL_THROUGHPUT,
        )
        .note(format!("head -c {} MiB /dev/zero", bytes >> 20)),
        Row::new(ROWS[1], ms(echo_p99), format!("raw PTY {}", ms(raw_p99)))
            .ratio(echo_p99.as_secs_f64() / raw_p99.as_secs_f64().max(1e-9))
            .goal("<= raw + 1 ms", echo_p99 <= raw_p99 + GOAL_ECHO_ABOVE_RAW)
            .note(format!(
                "p50 {} vs {}; {rounds} keys to cat",
                ms(percentile(linked_echo, 50.0)),
                ms(percentile(raw_echo, 50.0))
            )),
        Row::new(ROWS[2], ms(worst), format!("raw PTY {}", ms(max(&raw_ctrl_c))))
            .ratio(worst.as_secs_f64() / max(&raw_ctrl_c).as_secs_f64().max(1e-9))
            .goal("< 200 ms", worst < GOAL_CTRL_C)
            .note(format!("worst of {trials}, yes flood")),
    ])
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| anyhow!("a raw PTY baseline panicked: {e}"))?
}

#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(borrow)]
    method: Option<&'a str>,
    #[serde(borrow)]
    params: Option<OutputParams<'a>>,
}

#[derive(Deserialize)]
struct OutputParams<'a> {
    #[serde(rename = "terminalId", borrow)]
    terminal_id: Option<&'a str>,
    #[serde(borrow)]
    data: Option<&'a str>,
}

/// One terminal on the device, driven over the raw link.
struct RemoteTerminal<'a> {
    link: &'a mut RawLink,
    id: String,
    decoded: Vec<u8>,
}

impl<'a> RemoteTerminal<'a> {
    /// Opens a terminal in `cwd` and waits until its shell answers at a prompt. A marker command
    /// rather than the first prompt: output sent before the open's answer is not looked at.
    async fn open(link: &'a mut RawLink, cwd: &Path) -> anyhow::Result<Self> {
        let answer = link
            .request(LinkMethod::TerminalOpen.name(), json!({ "cwd": cwd }), LINK_WAIT)
            .await?;
        let id = answer["result"]["terminalId"]
            .as_str()
            .ok_or_else(|| anyhow!("the device did not open a terminal: {answer}"))?
            .to_string();
        let mut terminal = RemoteTerminal {
            link,
            id,
            decoded: Vec::new(),
        };
        // The marker, then the prompt: readline may write escapes (bracketed paste) between them.
        let mut ready = Finder::in_order(&["OPENED_7\r\n", PROMPT]);
        terminal.type_text("echo OPENED_$((3+4))\r").await?;
        terminal.read_until(|chunk| ready.found_in(chunk)).await?;
        Ok(terminal)
    }

    async fn type_text(&mut self, text: &str) -> anyhow::Result<()> {
        let params = json!({ "terminalId": self.id, "data": B64.encode(text) });
        self.link.notify(LinkMethod::TerminalInput.name(), params).await
    }

    /// Decodes this terminal's output until `done` says so for a chunk; the bytes decoded.
    async fn read_until(&mut self, mut done: impl FnMut(&[u8]) -> bool) -> anyhow::Result<u64> {
        let mut total = 0u64;
        loop {
            let text = tokio::time::timeout(LINK_WAIT, self.link.recv_text())
                .await
                .map_err(|_| anyhow!("the terminal said nothing for {LINK_WAIT:?}"))??;
            let Ok(frame) = serde_json::from_str::<Frame>(&text) else {
                continue;
            };
            let Some(params) = frame.params else { continue };
            if params.terminal_id != Some(self.id.as_str()) {
                continue;
            }
            match (frame.method.and_then(LinkMethod::from_name), params.data) {
                (Some(LinkMethod::TerminalOutput), Some(data)) => {
                    self.decoded.clear();
                    B64.decode_vec(data, &mut self.decoded)?;
                    total += self.decoded.len() as u64;
                    if done(&self.decoded) {
                        return Ok(total);
                    }
                }
                (Some(LinkMethod::TerminalExit), _) => bail!("the terminal's shell ended"),
                _ => {}
            }
        }
    }

    async fn close(self) -> anyhow::Result<()> {
        let params = json!({ "terminalId": self.id });
        self.link.notify(LinkMethod::TerminalClose.name(), params).await
    }
}

async fn output_throughput(link: &mut RawLink, work: &Path, bytes: u64) -> anyhow::Result<Duration> {
    let mut terminal = RemoteTerminal::open(link, work).await?;
    let mut end = Finder::new(THROUGHPUT_END);
    let started = Instant::now();
    terminal
        .type_text(&format!("head -c {bytes} /dev/zero; echo BENCH_$((6*7))_END\r"))
        .await?;
    let received = terminal.read_until(|chunk| end.found_in(chunk)).await?;
    let took = started.elapsed();
    terminal.close().await?;
    if received < bytes {
        bail!("the client got {received} of {bytes} bytes");
    }
    Ok(took)
}

async fn echo(link: &mut RawLink, work: &Path, rounds: usize) -> anyhow::Result<Vec<Duration>> {
    let mut terminal = RemoteTerminal::open(link, work).await?;
    let mut ready = Finder::new("READY_5\r\n");
    terminal.type_text("echo READY_$((2+3)); cat\r").await?;
    terminal.read_until(|chunk| ready.found_in(chunk)).await?;
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let mut line = Finder::new(ECHOED_LINE);
        let mut whole_line = false;
        let started = Instant::now();
        terminal.type_text("x").await?;
        terminal
            .read_until(|chunk| {
                whole_line |= line.found_in(chunk);
                !chunk.is_empty()
            })
            .await?;
        samples.push(started.elapsed());
        terminal.type_text("\r").await?;
        if !whole_line {
            terminal.read_until(|chunk| line.found_in(chunk)).await?;
        }
    }
    terminal.close().await?;
    Ok(samples)
}

async fn ctrl_c(link: &mut RawLink, work: &Path, trials: usize) -> anyhow::Result<Vec<Duration>> {
    let mut terminal = RemoteTerminal::open(link, work).await?;
    let mut samples = Vec::with_capacity(trials);
    for _ in 0..trials {
        terminal.type_text("yes\r").await?;
        let mut flooded = 0u64;
        terminal
            .read_until(|chunk| {
                flooded += chunk.len() as u64;
                flooded >= FLOOD_BEFORE_CTRL_C
            })
            .await?;
        let started = Instant::now();
        terminal.type_text("\x03").await?;
        let mut prompt = Finder::new(PROMPT);
        terminal.read_until(|chunk| prompt.found_in(chunk)).await?;
        samples.push(started.elapsed());
    }
    terminal.close().await?;
    Ok(samples)
}
