//! A lean loopback instance: just enough of the instance's side of the link (discovery, the link
//! upgrade, `initialize`) for a real device to link, with the socket handed to the benchmark, and
//! the bench's model (`/v1/…`, see [`crate::model_server`]). The reference peer's high-level API
//! adds JSON and channel hops of its own; timing the raw socket here counts the device and the
//! WebSocket only.

use lembas_protocol::LinkMethod;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use lembas_peer::{DISCOVERY_PATH, LINK_PATH, default_discovery};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, timeout_at};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

use crate::model_server::{self, ModelScript};

/// The longest request head read before giving up on a connection.
const HEAD_MAX: usize = 16 * 1024;

pub struct LeanInstance {
    address: SocketAddr,
    links: mpsc::UnboundedReceiver<RawLink>,
    server: JoinHandle<()>,
    model: ModelScript,
}

impl LeanInstance {
    pub async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("could not listen on loopback")?;
        let address = listener.local_addr()?;
        let (found, links) = mpsc::unbounded_channel();
        let model = ModelScript::default();
        let script = model.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let found = found.clone();
                let script = script.clone();
                tokio::spawn(async move {
                    match serve(stream, script).await {
                        Ok(Some(link)) => {
                            let _ = found.send(link);
                        }
                        Ok(None) => {}
                        Err(error) => eprintln!("lean instance: {error:#}"),
                    }
                });
            }
        });
        Ok(LeanInstance {
            address,
            links,
            server,
            model,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// How the instance's model answers chat completions.
    pub fn model(&self) -> &ModelScript {
        &self.model
    }

    /// Forgets links that came before, so the next one is the next device's.
    pub fn forget_links(&mut self) {
        while self.links.try_recv().is_ok() {}
    }

    pub async fn next_link(&mut self, within: Duration) -> anyhow::Result<RawLink> {
        tokio::time::timeout(within, self.links.recv())
            .await
            .map_err(|_| anyhow!("no device dialled the lean instance within {within:?}"))?
            .ok_or_else(|| anyhow!("the lean instance stopped"))
    }
}

impl Drop for LeanInstance {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Answers discovery, upgrades the link, or hands the connection to the model; anything else is a
/// 404.
async fn serve(mut stream: TcpStream, model: ModelScript) -> anyhow::Result<Option<RawLink>> {
    stream.set_nodelay(true)?;
    let head_len = peek_head(&stream).await?;
    let mut head = vec![0u8; head_len];
    stream.peek(&mut head).await?;
    let head = String::from_utf8_lossy(&head).into_owned();
    let path = head
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .split('?')
        .next()
        .unwrap_or("/");
    if path == LINK_PATH {
        // The token is not checked: only the bench's own device knows this port.
        let socket = tokio_tungstenite::accept_async(stream)
            .await
            .context("link upgrade")?;
        return Ok(Some(RawLink { socket, next_id: 0 }));
    }
    if path.starts_with("/v1/") {
        // Nothing was taken off the socket: the model reads the request itself, and the next ones.
        model_server::serve_connection(stream, model).await?;
        return Ok(None);
    }
    // Take the request off the socket first: closing with unread bytes would reset the connection
    // before the client reads the answer.
    let mut consumed = vec![0u8; head_len];
    stream.read_exact(&mut consumed).await?;
    let (status, body) = if path == DISCOVERY_PATH {
        ("200 OK", default_discovery().to_string())
    } else {
        ("404 Not Found", json!({ "detail": "not found" }).to_string())
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(answer.as_bytes()).await?;
    stream.shutdown().await?;
    Ok(None)
}

/// The length of the request head (through the blank line), seen without taking it off the socket
/// so the WebSocket handshake can still read it.
async fn peek_head(stream: &TcpStream) -> anyhow::Result<usize> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = vec![0u8; HEAD_MAX];
    loop {
        let seen = timeout_at(deadline, stream.peek(&mut buf))
            .await
            .map_err(|_| anyhow!("a request head did not arrive"))??;
        if seen == 0 {
            bail!("the connection closed before a request");
        }
        if let Some(at) = buf[..seen].windows(4).position(|w| w == b"\r\n\r\n") {
            return Ok(at + 4);
        }
        if seen == HEAD_MAX {
            bail!("a request head longer than {HEAD_MAX} bytes");
        }
        // Peek returns at once while the bytes it saw are still there: wait for more briefly.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// The instance's end of one device link, on the raw socket.
pub struct RawLink {
    socket: WebSocketStream<TcpStream>,
    next_id: u64,
}

impl RawLink {
    pub async fn send_text(&mut self, text: String) -> anyhow::Result<()> {
        self.socket
            .send(Message::text(text))
            .await
            .context("the link closed")
    }

    /// The next text frame (pings are answered by the socket as it reads).
    pub async fn recv_text(&mut self) -> anyhow::Result<Utf8Bytes> {
        loop {
            match self.socket.next().await {
                Some(Ok(Message::Text(text))) => return Ok(text),
                Some(Ok(Message::Close(frame))) => bail!("the device closed the link: {frame:?}"),
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(error).context("reading the link"),
                None => bail!("the link ended"),
            }
        }
    }

    pub async fn recv_within(&mut self, within: Duration) -> anyhow::Result<Value> {
        let text = tokio::time::timeout(within, self.recv_text())
            .await
            .map_err(|_| anyhow!("nothing came from the device within {within:?}"))??;
        serde_json::from_str(&text).context("the device sent a frame that is not JSON")
    }

    pub async fn notify(&mut self, method: &str, params: Value) -> anyhow::Result<()> {
        self.send_text(json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string())
            .await
    }

    /// Sends a request without waiting for its answer; its id.
    pub async fn send_request(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        self.next_id += 1;
        let id = self.next_id;
        self.send_text(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string())
            .await?;
        Ok(id)
    }

    /// Sends a request and times it, sent to its answer's frame read; frames are parsed only after
    /// the clock stops, so a large answer's parsing in the bench is not counted. The answer too.
    pub async fn timed_request(
        &mut self,
        method: &str,
        params: Value,
        within: Duration,
    ) -> anyhow::Result<(Duration, Value)> {
        let started = Instant::now();
        let id = self.send_request(method, params).await?;
        let deadline = started + within;
        loop {
            let text = timeout_at(deadline, self.recv_text())
                .await
                .map_err(|_| anyhow!("no answer to {method} within {within:?}"))??;
            let took = started.elapsed();
            let frame: Value =
                serde_json::from_str(&text).context("the device sent a frame that is not JSON")?;
            if frame.get("method").is_none() && frame["id"] == json!(id) {
                return Ok((took, frame));
            }
        }
    }

    /// Sends a request and waits for its answer (error answers included), skipping notifications.
    pub async fn request(&mut self, method: &str, params: Value, within: Duration) -> anyhow::Result<Value> {
        let id = self.send_request(method, params).await?;
        let deadline = Instant::now() + within;
        loop {
            let frame = self
                .recv_within(deadline.saturating_duration_since(Instant::now()))
                .await?;
            if frame.get("method").is_none() && frame["id"] == json!(id) {
                return Ok(frame);
            }
        }
    }

    pub async fn hello(&mut self, within: Duration) -> anyhow::Result<Value> {
        let frame = self.recv_within(within).await?;
        if frame["method"] != LinkMethod::Hello.name() {
            bail!("the device's first frame was not _lembas/hello: {frame}");
        }
        Ok(frame)
    }

    /// `initialize` as LLeMbas 2.0 sends it; the result.
    pub async fn initialize(&mut self, within: Duration) -> anyhow::Result<Value> {
        let params = json!({
            "protocolVersion": 1,
            "clientCapabilities": { "_meta": { "lembas": { "protocol": 3 } } },
        });
        let answer = self.request("initialize", params, within).await?;
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| anyhow!("the device refused initialize: {answer}"))
    }
}
