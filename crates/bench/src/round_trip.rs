//! Row 1: a no-op request's round trip over the link (an unknown method: the device parses it,
//! dispatches it and answers -32601) against a raw WebSocket echo on loopback. All are timed on
//! the raw socket, request sent to answer parsed, in interleaved blocks so load hits them alike.
//!
//! The baseline is an echo server in a process of its own, on the same stack as the device
//! (tokio's default runtime, tokio-tungstenite): the device is a process of its own, and each
//! round trip wakes it, which an echo task inside the bench's own runtime never pays. The note
//! gives that in-process echo too, and how often the device's threads were switched per request
//! (a thread woken for a hand-off between tasks on different threads costs one or two).

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::instance::RawLink;
use crate::procfs;
use crate::report::{Row, ms};
use crate::stats::percentile;

pub const ROWS: [&str; 2] = ["No-op round trip p50", "No-op round trip p99"];
/// The hidden command line that runs the echo server in a process of its own.
pub const ECHO_FLAG: &str = "--ws-echo-server";
const BLOCK: usize = 100;
const WARMUP: usize = 100;
const GOAL_RATIO: f64 = 1.2;

pub async fn run(link: &mut RawLink, device_pid: u32, rounds: usize) -> anyhow::Result<Vec<Row>> {
    let (mut echo, _server) = EchoPair::in_own_process().await?;
    let mut in_process = EchoPair::in_this_process().await?;
    let (mut device, mut raw, mut raw_here) = (
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
        Vec::with_capacity(rounds),
    );
    let mut id = 1_000_000u64;
    for _ in 0..WARMUP {
        id += 1;
        device_round(link, id).await?;
        echo.round(id).await?;
        in_process.round(id).await?;
    }
    let switches_before = procfs::context_switches(device_pid);
    while device.len() < rounds {
        for _ in 0..BLOCK.min(rounds - device.len()) {
            id += 1;
            device.push(device_round(link, id).await?);
            raw.push(echo.round(id).await?);
            raw_here.push(in_process.round(id).await?);
        }
    }
    let switches = match (switches_before, procfs::context_switches(device_pid)) {
        (Some(before), Some(after)) => {
            format!(
                ", {:.1} device switches/request",
                after.saturating_sub(before) as f64 / rounds as f64
            )
        }
        _ => String::new(),
    };
    let row = |name: &str, q: f64| {
        let (figure, baseline) = (percentile(&device, q), percentile(&raw, q));
        let ratio = figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9);
        let here = percentile(&raw_here, q);
        let ratio_here = figure.as_secs_f64() / here.as_secs_f64().max(1e-9);
        Row::new(name, ms(figure), format!("ws echo {}", ms(baseline)))
            .ratio(ratio)
            .goal(format!("<= {GOAL_RATIO}x"), ratio <= GOAL_RATIO)
            .note(format!(
                "{rounds} rounds{switches}; echo in the bench's process {} ({ratio_here:.2}x)",
                ms(here)
            ))
    };
    Ok(vec![row(ROWS[0], 50.0), row(ROWS[1], 99.0)])
}

/// The child side of [`EchoPair::in_own_process`]: prints its address, echoes one client's text
/// frames until it leaves.
pub fn echo_server() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        println!("{}", listener.local_addr()?);
        echo_one(listener).await;
        Ok(())
    })
}

async fn echo_one(listener: TcpListener) {
    let Ok((stream, _)) = listener.accept().await else {
        return;
    };
    let _ = stream.set_nodelay(true);
    let Ok(mut socket) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    while let Some(Ok(message)) = socket.next().await {
        if message.is_text() && socket.send(message).await.is_err() {
            return;
        }
    }
}

/// Ends the echo server's process with the benchmark.
struct EchoProcess(Child);

impl Drop for EchoProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn noop(id: u64) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": "_bench/noop" }).to_string()
}

/// Whether `text` is the answer to request `id`; parsed the same way on both sides.
fn answers(text: &str, id: u64) -> bool {
    serde_json::from_str::<Value>(text).is_ok_and(|frame| frame["id"] == json!(id))
}

async fn device_round(link: &mut RawLink, id: u64) -> anyhow::Result<Duration> {
    let started = Instant::now();
    link.send_text(noop(id)).await?;
    loop {
        let text = link.recv_text().await?;
        if answers(&text, id) {
            return Ok(started.elapsed());
        }
    }
}

/// A client connected to a tokio-tungstenite echo server on loopback.
struct EchoPair {
    client: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl EchoPair {
    async fn in_own_process() -> anyhow::Result<(Self, EchoProcess)> {
        let me = std::env::current_exe().context("cannot find the bench's own binary")?;
        let mut child = Command::new(me)
            .arg(ECHO_FLAG)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .context("cannot start the echo server's process")?;
        let stdout = child.stdout.take().context("the echo server's output")?;
        let process = EchoProcess(child);
        let mut address = String::new();
        std::io::BufReader::new(stdout).read_line(&mut address)?;
        Ok((Self::connect(address.trim()).await?, process))
    }

    async fn in_this_process() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        tokio::spawn(echo_one(listener));
        Self::connect(&address.to_string()).await
    }

    async fn connect(address: &str) -> anyhow::Result<Self> {
        let (client, _) = tokio_tungstenite::connect_async(format!("ws://{address}/"))
            .await
            .context("cannot reach the echo server")?;
        if let MaybeTlsStream::Plain(stream) = client.get_ref() {
            stream.set_nodelay(true)?;
        }
        Ok(EchoPair { client })
    }

    async fn round(&mut self, id: u64) -> anyhow::Result<Duration> {
        let started = Instant::now();
        self.client.send(Message::text(noop(id))).await?;
        loop {
            match self.client.next().await {
                Some(Ok(Message::Text(text))) if answers(&text, id) => return Ok(started.elapsed()),
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(error.into()),
                None => bail!("the echo server closed"),
            }
        }
    }
}
