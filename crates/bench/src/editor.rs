//! `lembas serve --stdio` as an editor runs it, against the reference peer: an editor's MCP tool
//! call through the agent (from the call's `in_progress` update to its `completed` one) beside the
//! same call made straight to the same server with the official SDK; and `session/load` of a stored
//! 5,000-message session (its history replayed as updates before the answer) beside a 50-message
//! one.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use lembas_device::store::Store;
use lembas_peer::{ModelReply, Peer, PeerConfig};
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::serve_client;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::{Instant, timeout};

use crate::agent::REQUEST_WAIT;
use crate::device::{DeviceHome, beside_the_bench, lembas_binary};
use crate::model_server::TOKEN;
use crate::report::{Row, ms, ms_added};
use crate::stats::{max, percentile};
use crate::stored_sessions::write_session;

pub const ROWS: [&str; 2] = [
    "MCP tool call through serve --stdio",
    "session/load, 5,000 messages",
];
const GOAL_MCP_ADDED: Duration = Duration::from_millis(2);
const GOAL_LOAD: Duration = Duration::from_millis(100);
const BIG: usize = 5_000;
const SMALL: usize = 50;

/// The agent on a pipe, read line by line; every line read is kept with when it came.
struct StdioAgent {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl StdioAgent {
    fn start(home: &DeviceHome) -> anyhow::Result<Self> {
        let mut child = Command::new(lembas_binary()?)
            .args(["serve", "--stdio"])
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .env("XDG_STATE_HOME", home.path().join(".local/state"))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("cannot start lembas serve --stdio")?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = child.stdout.take().context("no stdout")?;
        Ok(StdioAgent {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 1,
        })
    }

    /// Sends a request and reads to its answer: the answer, how long it took, and every message
    /// before it with the moment it was read.
    async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> anyhow::Result<(Value, Duration, Vec<(Instant, Value)>)> {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string();
        line.push('\n');
        let sent = Instant::now();
        self.stdin.write_all(line.as_bytes()).await?;
        let mut before = Vec::new();
        loop {
            let read = timeout(REQUEST_WAIT, self.lines.next_line())
                .await
                .map_err(|_| anyhow!("{method}: no answer within {REQUEST_WAIT:?}"))??
                .ok_or_else(|| anyhow!("{method}: the agent closed its output"))?;
            let at = Instant::now();
            let message: Value = serde_json::from_str(&read)?;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return Ok((message, at - sent, before));
            }
            before.push((at, message));
        }
    }

    async fn initialize(&mut self) -> anyhow::Result<()> {
        let (answer, _, _) = self
            .request(
                "initialize",
                json!({ "protocolVersion": 1, "clientCapabilities": { "fs": { "readTextFile": false, "writeTextFile": false } } }),
            )
            .await?;
        if answer.get("error").is_some() {
            bail!("initialize failed: {answer}");
        }
        Ok(())
    }
}

impl Drop for StdioAgent {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

pub async fn run(calls: usize, loads: usize) -> anyhow::Result<Vec<Row>> {
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await?;
    let home = DeviceHome::new(&peer.url(), |_| String::new())?;
    // Each row on its own: one that fails says why without taking the other.
    let call = match beside_the_bench("example-mcp-server") {
        Ok(server) => mcp_call(&peer, &home, &server, calls).await,
        Err(e) => Err(e),
    };
    let load = load(&home, loads).await;
    Ok([call, load]
        .into_iter()
        .zip(ROWS)
        .map(|(row, name)| row.unwrap_or_else(|e| Row::failed(name, &e)))
        .collect())
}

async fn mcp_call(peer: &Peer, home: &DeviceHome, server: &Path, calls: usize) -> anyhow::Result<Row> {
    let mut agent = StdioAgent::start(home)?;
    agent.initialize().await?;
    let (opened, _, _) = agent
        .request(
            "session/new",
            json!({ "cwd": home.work(), "_meta": { "mode": "auto" },
                    "mcpServers": [{ "name": "example", "command": server, "args": [], "env": [] }] }),
        )
        .await?;
    let session = opened["result"]["sessionId"]
        .as_str()
        .context(format!("session/new failed: {opened}"))?
        .to_string();
    // As many turns as the calls need: a turn makes at most `max_turn_requests` model requests,
    // one a call and one for its closing text.
    let per_turn = lembas_device::decisions::Decisions::built_in()
        .engine
        .max_turn_requests
        .saturating_sub(1)
        .max(1);
    let mut seen = Vec::new();
    for first in (0..calls).step_by(per_turn) {
        for n in first..(first + per_turn).min(calls) {
            peer.model().push(ModelReply::tool_call(
                &format!("call_{n}"),
                "example__echo",
                json!({ "text": format!("echo {n}") }),
            ));
        }
        peer.model().push(ModelReply::text("Echoed."));
        let (answer, _, turn_seen) = agent
            .request(
                "session/prompt",
                json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "echo" }] }),
            )
            .await?;
        if answer["result"]["stopReason"] != "end_turn" {
            bail!("the turn did not end: {answer}");
        }
        seen.extend(turn_seen);
    }
    let mut through = Vec::new();
    for n in 0..calls {
        let id = format!("call_{n}");
        let at = |status: &str| {
            seen.iter()
                .find(|(_, m)| {
                    m["params"]["update"]["toolCallId"] == json!(id)
                        && m["params"]["update"]["status"] == status
                })
                .map(|(at, _)| *at)
        };
        match (at("in_progress"), at("completed")) {
            (Some(start), Some(end)) => through.push(end - start),
            _ => bail!("{id} was not run to completion"),
        }
    }

    // The same calls, straight to a server of its own.
    let transport = TokioChildProcess::new(Command::new(server))?;
    let client = serve_client(
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("lembas-bench", "1"),
        ),
        transport,
    )
    .await
    .map_err(|e| anyhow!("the example server did not start: {e}"))?;
    let mut direct = Vec::new();
    for n in 0..calls {
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = json!({ "text": format!("echo {n}") }).as_object().cloned();
        let started = Instant::now();
        client.peer().call_tool(params).await?;
        direct.push(started.elapsed());
    }
    let _ = client.cancel().await;

    let (figure, baseline) = (percentile(&through, 50.0), percentile(&direct, 50.0));
    Ok(Row::new(
        ROWS[0],
        ms_added(figure, baseline),
        format!("direct {}", ms(baseline)),
    )
    .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
    .goal("<= 2 ms added", figure.saturating_sub(baseline) <= GOAL_MCP_ADDED)
    .note(format!(
        "echo, median of {calls}: in_progress to completed as the editor reads them, p90 {}",
        ms(percentile(&through, 90.0))
    )))
}

async fn load(home: &DeviceHome, loads: usize) -> anyhow::Result<Row> {
    let store = Store::at(
        home.path().join(".local/state/lembas"),
        &lembas_device::decisions::Decisions::built_in().turns,
    );
    let work = home.work();
    let big = (0..loads)
        .map(|n| write_session(&store, &work, n, BIG))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let small = (0..loads)
        .map(|n| write_session(&store, &work, loads + n, SMALL))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // A fresh agent: every session is opened from the store.
    let mut agent = StdioAgent::start(home)?;
    agent.initialize().await?;
    let (mut big_took, mut small_took) = (Vec::new(), Vec::new());
    for (big, small) in big.iter().zip(&small) {
        big_took.push(load_one(&mut agent, big, &work).await?);
        small_took.push(load_one(&mut agent, small, &work).await?);
    }
    let (figure, baseline) = (percentile(&big_took, 50.0), percentile(&small_took, 50.0));
    Ok(
        Row::new(ROWS[1], ms(figure), format!("{SMALL} messages {}", ms(baseline)))
            .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
            .goal("<= 100 ms", figure <= GOAL_LOAD)
            .note(format!(
                "to the answer, after the last replayed update; median of {loads}, worst {}",
                ms(max(&big_took))
            )),
    )
}

async fn load_one(agent: &mut StdioAgent, session: &str, work: &Path) -> anyhow::Result<Duration> {
    let (answer, took, replayed) = agent
        .request(
            "session/load",
            json!({ "sessionId": session, "cwd": work, "mcpServers": [] }),
        )
        .await?;
    if answer.get("error").is_some() {
        bail!("session/load failed: {answer}");
    }
    if replayed.is_empty() {
        bail!("session/load of {session} replayed nothing");
    }
    Ok(took)
}
