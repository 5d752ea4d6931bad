//! The bench's own model, served by the lean instance on its address (the device reaches the
//! instance's API on the server's URL): `GET /v1/models` and a streamed `POST /v1/chat/completions`,
//! HTTP/1.1 with keep-alive straight on the socket. Serving it here is what lets the token relay
//! know the moment each chunk was written.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The token the bench's devices present; the lean instance's link does not check it, its model does.
pub const TOKEN: &str = "lembas-bench-token";

/// The one chat model the bench's instance serves.
pub const MODEL: &str = "bench/chat";
/// The longest request (head and body) the model reads; a device's conversation stays far below.
const REQUEST_MAX: usize = 64 << 20;

/// How the model answers the next chat completions, set by the benchmark running.
#[derive(Clone)]
pub enum Reply {
    /// One short text chunk, the finish and `[DONE]`, all in one write.
    Instant,
    /// `count` text chunks `gap` apart, the text of each its sequence number (from `first`); the
    /// moment each is written goes to `written`.
    Numbered {
        first: u64,
        count: u64,
        gap: Duration,
        written: mpsc::UnboundedSender<(u64, Instant)>,
    },
}

/// The reply every connection reads at each request; cheap to clone, every clone the same.
#[derive(Clone)]
pub struct ModelScript(Arc<Mutex<Reply>>);

impl Default for ModelScript {
    fn default() -> Self {
        ModelScript(Arc::new(Mutex::new(Reply::Instant)))
    }
}

impl ModelScript {
    pub fn set(&self, reply: Reply) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = reply;
    }

    fn current(&self) -> Reply {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// What the model needs of a request.
struct Request {
    method: String,
    path: String,
    authorized: bool,
}

/// Answers the requests of one connection in turn until the client closes it.
pub async fn serve_connection(mut stream: TcpStream, script: ModelScript) -> anyhow::Result<()> {
    let mut buffer = Vec::new();
    while let Some(request) = read_request(&mut stream, &mut buffer).await? {
        if !request.authorized {
            let body = json!({ "error": { "message": "the bench's token is wanted as Bearer" } });
            write_json(&mut stream, "401 Unauthorized", &body).await?;
            continue;
        }
        match (request.method.as_str(), request.path.as_str()) {
            ("GET", "/v1/models") => write_json(&mut stream, "200 OK", &models()).await?,
            ("POST", "/v1/chat/completions") => stream_reply(&mut stream, script.current()).await?,
            _ => {
                let body = json!({ "detail": "not found" });
                write_json(&mut stream, "404 Not Found", &body).await?;
            }
        }
    }
    Ok(())
}

fn models() -> Value {
    json!({
        "object": "list",
        "data": [{ "id": MODEL, "object": "model", "owned_by": "bench", "kind": "chat" }],
    })
}

/// The next request on the connection, its body read and dropped; `None` once the client closed
/// between requests.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> anyhow::Result<Option<Request>> {
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if buffer.len() > REQUEST_MAX {
            bail!("a request head longer than {REQUEST_MAX} bytes");
        }
        if stream.read_buf(buffer).await? == 0 {
            if buffer.is_empty() {
                return Ok(None);
            }
            bail!("the connection closed inside a request head");
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or_default().split_whitespace();
    let method = first.next().unwrap_or_default().to_owned();
    let path = first
        .next()
        .unwrap_or("/")
        .split('?')
        .next()
        .unwrap_or("/")
        .to_owned();
    let (mut body_len, mut authorized) = (0usize, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            body_len = value.parse().context("a content-length that is not a number")?;
        } else if name.eq_ignore_ascii_case("authorization") {
            authorized = value == format!("Bearer {TOKEN}");
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            bail!("a chunked request body, which the bench's model does not read");
        }
    }
    if body_len > REQUEST_MAX {
        bail!("a request body of {body_len} bytes");
    }
    while buffer.len() < head_end + body_len {
        if stream.read_buf(buffer).await? == 0 {
            bail!("the connection closed inside a request body");
        }
    }
    buffer.drain(..head_end + body_len);
    Ok(Some(Request {
        method,
        path,
        authorized,
    }))
}

async fn write_json(stream: &mut TcpStream, status: &str, body: &Value) -> anyhow::Result<()> {
    let body = body.to_string();
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(answer.as_bytes()).await?;
    Ok(())
}

const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";

/// One server-sent event as a piece of the chunked body.
fn event_piece(data: &str) -> Vec<u8> {
    let event = format!("data: {data}\n\n");
    format!("{:x}\r\n{event}\r\n", event.len()).into_bytes()
}

fn text_chunk(text: &str) -> String {
    json!({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
        "choices": [{ "index": 0, "delta": { "content": text }, "finish_reason": null }],
    })
    .to_string()
}

/// The finish chunk, `[DONE]` and the end of the chunked body.
fn stream_end() -> Vec<u8> {
    let finish = json!({
        "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
        "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }],
    });
    let mut end = event_piece(&finish.to_string());
    end.extend(event_piece("[DONE]"));
    end.extend_from_slice(b"0\r\n\r\n");
    end
}

async fn stream_reply(stream: &mut TcpStream, reply: Reply) -> anyhow::Result<()> {
    match reply {
        Reply::Instant => {
            let mut all = STREAM_HEAD.as_bytes().to_vec();
            all.extend(event_piece(&text_chunk("Done.")));
            all.extend(stream_end());
            stream.write_all(&all).await?;
        }
        Reply::Numbered {
            first,
            count,
            gap,
            written,
        } => {
            stream.write_all(STREAM_HEAD.as_bytes()).await?;
            for seq in first..first + count {
                tokio::time::sleep(gap).await;
                let piece = event_piece(&text_chunk(&format!("{seq} ")));
                // Stamped before the write, so a reader can never see the chunk before its stamp.
                let at = Instant::now();
                stream.write_all(&piece).await?;
                let _ = written.send((seq, at));
            }
            stream.write_all(&stream_end()).await?;
        }
    }
    Ok(())
}
