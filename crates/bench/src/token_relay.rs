//! Token relay: a chunk of the model's stream, from the moment the bench's model writes it to the
//! moment its `agent_message_chunk` is read on the link, against a bare relay in the bench (reqwest
//! reads the same stream, each `delta.content` goes out as a WebSocket text frame to a loopback
//! client) timed the same way. Turns and relay streams alternate in blocks so load hits both alike.

use lembas_protocol::LinkMethod;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::agent::{self, REQUEST_WAIT};
use crate::instance::{LeanInstance, RawLink};
use crate::model_server::TOKEN;
use crate::model_server::{MODEL, Reply};
use crate::report::{Row, ms, ms_added};
use crate::stats::percentile;

pub const ROWS: [&str; 2] = ["Token relay p50", "Token relay p99"];
/// Between two chunks: long enough that a chunk is never queued behind the one before.
const GAP: Duration = Duration::from_millis(2);
const BLOCK: u64 = 100;
const GOAL_ADDED: Duration = Duration::from_millis(1);
/// What the bare relay sends when a stream is over.
const RELAY_END: &str = "end";

/// When each numbered chunk was written by the model, and when it was read at the far end.
type Stamps = HashMap<u64, Instant>;

pub async fn run(instance: &mut LeanInstance, chunks: u64) -> anyhow::Result<Vec<Row>> {
    let home = agent::home(&instance.url())?;
    let (_device, mut link) = home.link(instance).await?;
    let session = agent::new_session(&mut link, &home.work()).await?;
    let mut relay = BareRelay::start(&instance.url()).await?;
    let (sent, mut written_rx) = mpsc::unbounded_channel();
    let mut written = Stamps::new();
    let (mut through_device, mut through_relay) = (Vec::new(), Vec::new());
    let mut next = 0u64;
    // The first block of each is not counted: connections open, the token read, caches warm.
    let mut blocks = vec![BLOCK.min(chunks)];
    let mut left = chunks;
    while left > 0 {
        blocks.push(BLOCK.min(left));
        left -= BLOCK.min(left);
    }
    for (index, count) in blocks.into_iter().enumerate() {
        let numbered = |first| Reply::Numbered {
            first,
            count,
            gap: GAP,
            written: sent.clone(),
        };
        instance.model().set(numbered(next));
        let read = device_turn(&mut link, &session).await?;
        let device_range = next..next + count;
        next += count;
        instance.model().set(numbered(next));
        let relayed = relay.stream().await?;
        let relay_range = next..next + count;
        next += count;
        while let Ok((seq, at)) = written_rx.try_recv() {
            written.insert(seq, at);
        }
        if index > 0 {
            through_device.extend(latencies(device_range, &written, &read, "the link")?);
            through_relay.extend(latencies(relay_range, &written, &relayed, "the bare relay")?);
        }
    }
    let row = |name: &str, q: f64| {
        let (figure, baseline) = (percentile(&through_device, q), percentile(&through_relay, q));
        let added = figure.saturating_sub(baseline);
        Row::new(name, ms(figure), format!("bare relay {}", ms(baseline)))
            .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
            .goal("<= 1 ms added", added <= GOAL_ADDED)
            .note(format!(
                "{} added; model write -> agent_message_chunk read, {chunks} chunks {GAP:?} apart",
                ms_added(figure, baseline)
            ))
    };
    Ok(vec![row(ROWS[0], 50.0), row(ROWS[1], 99.0)])
}

/// Each chunk's time from written to read; every chunk must have been both.
fn latencies(
    range: std::ops::Range<u64>,
    written: &Stamps,
    read: &Stamps,
    through: &str,
) -> anyhow::Result<Vec<Duration>> {
    range
        .map(|seq| match (written.get(&seq), read.get(&seq)) {
            (Some(w), Some(r)) => Ok(r.saturating_duration_since(*w)),
            (None, _) => Err(anyhow!("the model never wrote chunk {seq}")),
            (Some(_), None) => Err(anyhow!("chunk {seq} never came through {through}")),
        })
        .collect()
}

/// The number a chunk's text carries.
fn sequence(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// One prompt; when each numbered `agent_message_chunk` was read, stamped before it is parsed.
async fn device_turn(link: &mut RawLink, session: &str) -> anyhow::Result<Stamps> {
    let id = link
        .send_request(LinkMethod::SessionPrompt.name(), agent::prompt(session, "count"))
        .await?;
    let deadline = Instant::now() + REQUEST_WAIT;
    let mut read = Stamps::new();
    loop {
        let text = tokio::time::timeout_at(deadline, link.recv_text())
            .await
            .map_err(|_| anyhow!("the turn did not end within {REQUEST_WAIT:?}"))??;
        let at = Instant::now();
        let frame: Value = serde_json::from_str(&text).context("the device sent a frame that is not JSON")?;
        let update = &frame["params"]["update"];
        if frame["method"] == LinkMethod::SessionUpdate.name()
            && update["sessionUpdate"] == "agent_message_chunk"
        {
            if let Some(seq) = update["content"]["text"].as_str().and_then(sequence) {
                read.insert(seq, at);
            }
        } else if frame.get("method").is_none() && frame["id"] == json!(id) {
            agent::ended(&frame)?;
            return Ok(read);
        }
    }
}

/// The baseline: a relay on a thread and runtime of its own (as the device has a process of its
/// own), and the bench's loopback client of it. A text frame from the client starts one stream.
struct BareRelay {
    client: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl BareRelay {
    async fn start(server: &str) -> anyhow::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").context("the relay cannot listen")?;
        listener.set_nonblocking(true)?;
        let address: SocketAddr = listener.local_addr()?;
        let url = format!("{server}/v1/chat/completions");
        std::thread::Builder::new()
            .name("bare-relay".into())
            .spawn(move || {
                let relayed = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(anyhow::Error::from)
                    .and_then(|runtime| runtime.block_on(relay(listener, url)));
                if let Err(error) = relayed {
                    eprintln!("bare relay: {error:#}");
                }
            })?;
        let (client, _) = tokio_tungstenite::connect_async(format!("ws://{address}/"))
            .await
            .context("cannot reach the bare relay")?;
        if let MaybeTlsStream::Plain(stream) = client.get_ref() {
            stream.set_nodelay(true)?;
        }
        Ok(BareRelay { client })
    }

    /// One stream through the relay; when each numbered frame was read.
    async fn stream(&mut self) -> anyhow::Result<Stamps> {
        self.client.send(Message::text("go")).await?;
        let mut read = Stamps::new();
        loop {
            let message = timeout(REQUEST_WAIT, self.client.next())
                .await
                .map_err(|_| anyhow!("the bare relay's stream did not end within {REQUEST_WAIT:?}"))?;
            let at = Instant::now();
            match message {
                Some(Ok(Message::Text(text))) if text.as_str() == RELAY_END => return Ok(read),
                Some(Ok(Message::Text(text))) => {
                    if let Some(seq) = sequence(&text) {
                        read.insert(seq, at);
                    }
                }
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(error).context("reading the bare relay"),
                None => bail!("the bare relay closed"),
            }
        }
    }
}

/// The relay's side: accepts the bench's client, then relays one model stream per frame it sends.
async fn relay(listener: std::net::TcpListener, url: String) -> anyhow::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let (stream, _) = listener.accept().await?;
    stream.set_nodelay(true)?;
    let mut socket = tokio_tungstenite::accept_async(stream).await?;
    let http = reqwest::Client::new();
    let body = json!({
        "model": MODEL, "stream": true,
        "messages": [{ "role": "user", "content": "count" }],
    });
    // The client going away, closed or not, is the end of the benchmark.
    while let Some(Ok(message)) = socket.next().await {
        if !message.is_text() {
            continue;
        }
        let response = http
            .post(&url)
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await?
            .error_for_status()?;
        let mut stream = response.bytes_stream();
        let mut buffer = Vec::new();
        // Read to the body's end (just after [DONE]) so the connection goes back to the pool.
        while let Some(bytes) = stream.next().await {
            buffer.extend_from_slice(&bytes?);
            while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = buffer.drain(..end + 2).collect();
                let Some(data) = event[..end].strip_prefix(b"data: ") else {
                    continue;
                };
                if data == b"[DONE]" {
                    continue;
                }
                let chunk: Value = serde_json::from_slice(data)?;
                if let Some(text) = chunk
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    socket.send(Message::text(text)).await?;
                }
            }
        }
        socket.send(Message::text(RELAY_END)).await?;
    }
    Ok(())
}
