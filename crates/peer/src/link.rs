//! One device's link, seen from the instance: the [`LinkHandle`] a test drives it with, and what
//! it shares with the task that owns the WebSocket (`link_task.rs`).

use lembas_protocol::LinkMethod;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use axum::extract::ws::{CloseFrame, Message};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::config::DEFAULT_MODEL;
use crate::lock;

/// How long `close` waits for the device's half of the closing handshake before dropping the link.
const CLOSE_HANDSHAKE_WAIT: Duration = Duration::from_secs(2);

/// What the link accepts in a hello, fixed when the device links.
#[derive(Debug, Clone)]
pub(crate) struct HelloRules {
    pub protocols: Vec<u64>,
    pub refusal_reason: String,
}

/// A frame to send, and where to say whether it went.
pub(crate) struct Outgoing {
    pub message: Message,
    pub sent: oneshot::Sender<Result<(), String>>,
}

/// What the link task hands the handle, in the order it happened.
pub(crate) enum Incoming {
    Message(Value),
    /// A frame that is not a JSON-RPC message (not JSON, or binary): the sentence saying so.
    Unreadable(String),
    /// The device's close frame: its code and reason.
    Closed((u16, String)),
    /// The connection ended without a close frame.
    Abrupt(String),
}

/// How the link ended, once the handle has seen it.
#[derive(Debug, Clone)]
enum LinkEnd {
    Closed((u16, String)),
    Abrupt(String),
}

impl LinkEnd {
    fn describe(&self) -> String {
        match self {
            LinkEnd::Closed((code, reason)) => format!("the device closed the link ({code} \"{reason}\")"),
            LinkEnd::Abrupt(why) => format!("the link ended without a close frame ({why})"),
        }
    }
}

/// Everything recorded on one link, shared between the task and the handle.
#[derive(Debug, Default)]
pub(crate) struct LinkRecord {
    pub received: Vec<Value>,
    pub sent: Vec<Value>,
    pub faults: Vec<String>,
    pub peer_close: Option<(u16, String)>,
    pub hello_refused: Option<String>,
}

/// One device's link. Dropping it drops the connection without a close frame, like
/// [`LinkHandle::drop_tcp`].
pub struct LinkHandle {
    /// The upgrade request's headers (`Authorization`, `User-Agent`, ...).
    pub headers: HeaderMap,
    outgoing: mpsc::Sender<Outgoing>,
    incoming: mpsc::UnboundedReceiver<Incoming>,
    /// Messages read while waiting for something else, kept for `recv`.
    pending: VecDeque<Value>,
    record: Arc<Mutex<LinkRecord>>,
    next_id: u64,
    ended: Option<LinkEnd>,
}

/// What one read from the link gave.
enum Pulled {
    Message(Value),
    Unreadable(String),
    Ended,
    TimedOut,
}

impl LinkHandle {
    /// The handle of a link whose task (`link_task.rs`) sends `outgoing` and hands
    /// over what it reads through `incoming`, recording both in `record`.
    pub(crate) fn new(
        headers: HeaderMap,
        outgoing: mpsc::Sender<Outgoing>,
        incoming: mpsc::UnboundedReceiver<Incoming>,
        record: Arc<Mutex<LinkRecord>>,
    ) -> LinkHandle {
        LinkHandle {
            headers,
            outgoing,
            incoming,
            pending: VecDeque::new(),
            record,
            next_id: 1,
            ended: None,
        }
    }

    /// The first message of the link, which must be the `_lembas/hello` notification with a
    /// protocol this peer speaks; returns its params. An error says what the device did instead
    /// (and, when the hello's protocol was refused, that the peer closed the link with 4400).
    pub async fn hello(&mut self, within: Duration) -> anyhow::Result<Value> {
        let message = self.recv_described(within, LinkMethod::Hello.name()).await?;
        let first = lock(&self.record).received.first().cloned();
        if first.as_ref() != Some(&message) {
            bail!(
                "the hello must be the first message on the link, but this handle already took \
                 other messages; the first was {}",
                first.unwrap_or(Value::Null)
            );
        }
        if !is_notification(&message, LinkMethod::Hello.name()) {
            bail!("the device's first message must be the _lembas/hello notification; it sent {message}");
        }
        if message.get("jsonrpc") != Some(&json!("2.0")) {
            bail!("the device's hello lacks \"jsonrpc\": \"2.0\": {message}");
        }
        if let Some(refusal) = lock(&self.record).hello_refused.clone() {
            bail!(refusal);
        }
        Ok(message.get("params").cloned().unwrap_or(Value::Null))
    }

    /// Sends `initialize` as LLeMbas 2.0 does and returns the result; an error answer is an error.
    pub async fn initialize(&mut self, within: Duration) -> anyhow::Result<Value> {
        let params = json!({
            "protocolVersion": 1,
            "clientCapabilities": { "_meta": { "lembas": { "protocol": 3, "show": true } } },
        });
        let answer = self.request("initialize", params, within).await?;
        if let Some(error) = answer.get("error") {
            bail!("the device answered initialize with an error: {error}");
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| anyhow!("the device's initialize answer has no result: {answer}"))
    }

    /// Sends a request (the peer picks the id: 1, 2, 3, ...) and returns the device's whole answer,
    /// `result` or `error`. Messages arriving meanwhile are kept for `recv`; a frame that is not a
    /// JSON-RPC message arriving meanwhile fails the call (it is in `faults`).
    pub async fn request(&mut self, method: &str, params: Value, within: Duration) -> anyhow::Result<Value> {
        let id = self.send_request(method, params).await?;
        let deadline = Instant::now() + within;
        loop {
            match self.pull(deadline).await {
                Pulled::Message(message) if is_answer_to(&message, id) => return Ok(message),
                Pulled::Message(message) => self.pending.push_back(message),
                Pulled::Unreadable(fault) => bail!("while waiting for the answer to {method}: {fault}"),
                Pulled::Ended => bail!("no answer to {method} (id {id}): {}", self.end_description()),
                Pulled::TimedOut => bail!("no answer to {method} (id {id}) within {within:?}"),
            }
        }
    }

    /// Sends a request without waiting for its answer (a prompt that runs while the test answers the
    /// device's own requests); returns its id for [`LinkHandle::recv_answer`].
    pub async fn send_request(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        self.send_value(message).await?;
        Ok(id)
    }

    /// `session/new` in `cwd` on the scripted model in `mode`, with no MCP servers: the session's
    /// id (an error answer is an error).
    pub async fn new_session(&mut self, cwd: &Path, mode: &str, within: Duration) -> anyhow::Result<String> {
        let params =
            json!({ "cwd": cwd, "mcpServers": [], "_meta": { "mode": mode, "lembas_model": DEFAULT_MODEL } });
        let opened = self
            .request(LinkMethod::SessionNew.name(), params, within)
            .await?;
        opened["result"]["sessionId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("session/new was not answered with a session: {opened}"))
    }

    /// `session/prompt` with one text block, not waited for: its id for
    /// [`LinkHandle::recv_answer`].
    pub async fn prompt(&mut self, session: &str, text: &str) -> anyhow::Result<u64> {
        let params = json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] });
        self.send_request(LinkMethod::SessionPrompt.name(), params).await
    }

    /// The device's answer to the request `id` sent with [`LinkHandle::send_request`]; other
    /// messages are kept for `recv`.
    pub async fn recv_answer(&mut self, id: u64, within: Duration) -> anyhow::Result<Value> {
        self.recv_matching(within, &format!("the answer to request {id}"), |m| {
            is_answer_to(m, id)
        })
        .await
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) -> anyhow::Result<()> {
        let mut message = json!({ "jsonrpc": "2.0", "method": method });
        if !params.is_null() {
            message["params"] = params;
        }
        self.send_value(message).await
    }

    /// Answers a request the device sent.
    pub async fn answer(&mut self, id: Value, result: Value) -> anyhow::Result<()> {
        self.send_value(json!({ "jsonrpc": "2.0", "id": id, "result": result }))
            .await
    }

    /// Answers a request the device sent with a JSON-RPC error.
    pub async fn answer_error(&mut self, id: Value, code: i64, message: &str) -> anyhow::Result<()> {
        self.send_value(json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }))
            .await
    }

    /// Sends any text frame, even one that is not JSON. Recorded in `sent` as its JSON value, or
    /// as a JSON string holding the text when it is not JSON.
    pub async fn send_raw(&mut self, text: String) -> anyhow::Result<()> {
        let recorded = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()));
        self.send_frame(Message::Text(text.into())).await?;
        lock(&self.record).sent.push(recorded);
        Ok(())
    }

    /// The next message from the device that `request` or `recv_*` did not take.
    pub async fn recv(&mut self, within: Duration) -> anyhow::Result<Value> {
        self.recv_described(within, "message").await
    }

    /// The next notification named `method`; other messages are kept for `recv`.
    pub async fn recv_notification(&mut self, method: &str, within: Duration) -> anyhow::Result<Value> {
        self.recv_matching(within, &format!("{method} notification"), |m| {
            is_notification(m, method)
        })
        .await
    }

    /// The next request the device sends named `method` (answer it with `answer`); other messages
    /// are kept for `recv`.
    pub async fn recv_request(&mut self, method: &str, within: Duration) -> anyhow::Result<Value> {
        self.recv_matching(within, &format!("{method} request"), |m| is_request(m, method))
            .await
    }

    /// Every message the device sent on this link, in order (unreadable frames are in `faults`).
    pub fn received(&self) -> Vec<Value> {
        lock(&self.record).received.clone()
    }

    /// The `_lembas/show` requests the device sent on this link, in order: the files a viewer was
    /// given (their params), whether or not they were answered yet.
    pub fn shows(&self) -> Vec<Value> {
        lock(&self.record)
            .received
            .iter()
            .filter(|m| is_request(m, LinkMethod::Show.name()))
            .map(|m| m.get("params").cloned().unwrap_or(Value::Null))
            .collect()
    }

    /// Answers a `_lembas/show` request as LLeMbas's viewer does (docs/protocol.md): `Ok(())` is
    /// `{ shown: true }`, `Err(reason)` is `{ shown: false, reason }`.
    pub async fn answer_show(&mut self, request: &Value, shown: Result<(), &str>) -> anyhow::Result<()> {
        let result = match shown {
            Ok(()) => json!({ "shown": true }),
            Err(reason) => json!({ "shown": false, "reason": reason }),
        };
        self.answer(request.get("id").cloned().unwrap_or(Value::Null), result)
            .await
    }

    /// The chats a terminal on the device shared on this link (`_lembas/session/announce`), in
    /// order; one not as the spec says is in `faults` instead.
    pub fn announced(&self) -> Vec<crate::Announced> {
        crate::terminal_sessions::announced(&lock(&self.record).received)
    }

    /// The shared chats the terminal let go of on this link (`_lembas/session/left`), in order.
    pub fn left(&self) -> Vec<crate::Left> {
        crate::terminal_sessions::left(&lock(&self.record).received)
    }

    /// Every message the peer sent on this link, in order.
    pub fn sent(&self) -> Vec<Value> {
        lock(&self.record).sent.clone()
    }

    /// What the device did that the spec does not allow, as the peer noticed it: a frame that is
    /// not JSON, a binary frame, a first message that is not the hello, a hello's protocol refused.
    pub fn faults(&self) -> Vec<String> {
        lock(&self.record).faults.clone()
    }

    /// The close frame the peer sent, if it did (by `close`, or 4400 for a refused hello).
    pub fn peer_close(&self) -> Option<(u16, String)> {
        lock(&self.record).peer_close.clone()
    }

    /// Sends a close frame with `code` and `reason`, waits briefly for the device's reply, then
    /// drops the connection.
    pub async fn close(mut self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        if let Err(error) = self.send_frame(Message::Close(Some(frame))).await {
            tracing::warn!("could not send the close frame: {error:#}");
            return;
        }
        lock(&self.record).peer_close = Some((code, reason.to_string()));
        let deadline = Instant::now() + CLOSE_HANDSHAKE_WAIT;
        while !matches!(self.pull(deadline).await, Pulled::Ended | Pulled::TimedOut) {}
    }

    /// Drops the TCP connection with no close frame.
    pub fn drop_tcp(self) {
        drop(self);
    }

    /// Waits until the link ends: `Some((code, reason))` for the device's close frame (1005 and ""
    /// for one without a payload), `None` when the connection ended without one. Messages arriving
    /// meanwhile are kept for `recv`.
    pub async fn closed(&mut self, within: Duration) -> anyhow::Result<Option<(u16, String)>> {
        let deadline = Instant::now() + within;
        loop {
            match self.pull(deadline).await {
                Pulled::Message(message) => self.pending.push_back(message),
                Pulled::Unreadable(_) => {}
                Pulled::TimedOut => bail!("the link was still open after {within:?}"),
                Pulled::Ended => {
                    return Ok(match &self.ended {
                        Some(LinkEnd::Closed(close)) => Some(close.clone()),
                        _ => None,
                    });
                }
            }
        }
    }

    async fn recv_described(&mut self, within: Duration, what: &str) -> anyhow::Result<Value> {
        if let Some(message) = self.pending.pop_front() {
            return Ok(message);
        }
        match self.pull(Instant::now() + within).await {
            Pulled::Message(message) => Ok(message),
            Pulled::Unreadable(fault) => bail!(fault),
            Pulled::Ended => bail!("no {what}: {}", self.end_description()),
            Pulled::TimedOut => bail!("no {what} from the device within {within:?}"),
        }
    }

    async fn recv_matching(
        &mut self,
        within: Duration,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Value> {
        if let Some(position) = self.pending.iter().position(&wanted) {
            return self.pending.remove(position).context("a kept message vanished");
        }
        let deadline = Instant::now() + within;
        loop {
            match self.pull(deadline).await {
                Pulled::Message(message) if wanted(&message) => return Ok(message),
                Pulled::Message(message) => self.pending.push_back(message),
                Pulled::Unreadable(_) => {}
                Pulled::Ended => bail!("no {what}: {}", self.end_description()),
                Pulled::TimedOut => bail!("no {what} from the device within {within:?}"),
            }
        }
    }

    /// One thing from the link task, noting the end of the link when that is what it was.
    async fn pull(&mut self, deadline: Instant) -> Pulled {
        if self.ended.is_some() {
            return Pulled::Ended;
        }
        let incoming = match tokio::time::timeout_at(deadline, self.incoming.recv()).await {
            Err(_) => return Pulled::TimedOut,
            Ok(incoming) => incoming,
        };
        match incoming {
            Some(Incoming::Message(message)) => Pulled::Message(message),
            Some(Incoming::Unreadable(fault)) => Pulled::Unreadable(fault),
            Some(Incoming::Closed(close)) => {
                self.ended = Some(LinkEnd::Closed(close));
                Pulled::Ended
            }
            Some(Incoming::Abrupt(why)) => {
                self.ended = Some(LinkEnd::Abrupt(why));
                Pulled::Ended
            }
            None => {
                self.ended = Some(LinkEnd::Abrupt("the peer's side of the link stopped".to_string()));
                Pulled::Ended
            }
        }
    }

    fn end_description(&self) -> String {
        self.ended
            .as_ref()
            .map(LinkEnd::describe)
            .unwrap_or_else(|| "the link is open".to_string())
    }

    async fn send_value(&mut self, message: Value) -> anyhow::Result<()> {
        self.send_frame(Message::Text(message.to_string().into())).await?;
        lock(&self.record).sent.push(message);
        Ok(())
    }

    async fn send_frame(&mut self, message: Message) -> anyhow::Result<()> {
        let (sent, outcome) = oneshot::channel();
        let gone = || anyhow!("cannot send: the link is gone ({})", self.end_description());
        self.outgoing
            .send(Outgoing { message, sent })
            .await
            .map_err(|_| gone())?;
        outcome
            .await
            .map_err(|_| gone())?
            .map_err(|error| anyhow!("sending to the device failed: {error}"))
    }
}

pub(crate) fn is_notification(message: &Value, method: &str) -> bool {
    message.get("method").and_then(Value::as_str) == Some(method) && message.get("id").is_none()
}

fn is_request(message: &Value, method: &str) -> bool {
    message.get("method").and_then(Value::as_str) == Some(method) && message.get("id").is_some()
}

fn is_answer_to(message: &Value, id: u64) -> bool {
    message.get("method").is_none()
        && message.get("id").and_then(Value::as_u64) == Some(id)
        && (message.get("result").is_some() || message.get("error").is_some())
}
