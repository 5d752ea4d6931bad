//! The runtime's side of the control endpoint: accepts connections of its own user, answers their
//! requests and streams events to those that subscribe. A bad line gets an error answer and the
//! connection goes on; nothing a client sends can stop the runtime.

use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;

use super::endpoint::{self, Listener, Stream};
use super::{PendingApproval, Verdict, credentials};
use crate::activity_log::{self, Limits};
use crate::engine::Engine;
use crate::events::DeviceEvent;
use crate::rpc::{self, Incoming, RpcError};
use crate::settings::edit::Change;
use crate::status::{self, Status};
use crate::store::Store;

/// The longest line a client may send; a longer one is answered with an error and skipped.
const MAX_LINE: usize = 64 * 1024;
/// Lines waiting for a slow client before its requests wait too.
const OUTBOX: usize = 256;
/// How long a refused connection is read from before it is closed.
const REFUSED_LINGER: std::time::Duration = std::time::Duration::from_secs(1);
/// The activity lines `activity` gives when `n` is absent, as `lembas activity` shows.
const ACTIVITY_DEFAULT: usize = 50;

/// What a connection may reach in the runtime.
#[derive(Clone)]
pub(crate) struct Parts {
    pub status: watch::Receiver<Status>,
    pub events: broadcast::Sender<DeviceEvent>,
    pub engine: Engine,
    /// Ends the link at once (Stop all remote work).
    pub wake: broadcast::Sender<()>,
}

/// Serving; dropping it stops accepting, ends every connection and removes the socket.
pub(crate) struct Server {
    accept: JoinHandle<()>,
    path: std::path::PathBuf,
    _closing: watch::Sender<bool>,
}

impl Drop for Server {
    /// The socket goes at once, so a client finds no runtime rather than a dying one.
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Server {
    /// Binds the socket and serves; an error says why there is no control endpoint (the runtime
    /// runs on without one).
    pub fn start(parts: Parts) -> std::io::Result<Server> {
        let path = super::socket_path();
        let listener = Listener::bind(&path)?;
        let (closing, closed) = watch::channel(false);
        let own = endpoint::own_uid();
        let accept = tokio::spawn(async move {
            let parts = Arc::new(parts);
            loop {
                match listener.accept().await {
                    Ok((stream, peer)) => {
                        let parts = parts.clone();
                        let mut closed = closed.clone();
                        tokio::spawn(async move {
                            tokio::select! {
                                _ = serve(stream, peer, own, parts) => {}
                                _ = closed.changed() => {}
                            }
                        });
                    }
                    Err(e) => {
                        tracing::warn!("control socket: cannot accept: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                }
            }
        });
        Ok(Server {
            accept,
            path,
            _closing: closing,
        })
    }
}

async fn serve(stream: Stream, peer: Option<u32>, own: u32, parts: Arc<Parts>) {
    let (read, mut write) = tokio::io::split(stream);
    if let Err(why) = credentials::admit(peer, own) {
        tracing::warn!("control socket: refused a connection: {why}");
        let error = RpcError {
            code: rpc::INVALID_REQUEST,
            message: why,
            data: Some(json!({ "reason": "other_user" })),
        };
        let _ = write
            .write_all(line(rpc::answer(&Value::Null, Err(error))).as_bytes())
            .await;
        let _ = write.shutdown().await;
        // Lingers a moment reading what the client sends, so its first request does not meet a
        // closed socket before it reads why.
        let mut read = read;
        let mut sink = [0u8; 1024];
        let _ = tokio::time::timeout(REFUSED_LINGER, async {
            while matches!(tokio::io::AsyncReadExt::read(&mut read, &mut sink).await, Ok(n) if n > 0) {}
        })
        .await;
        return;
    }
    let (outbox, mut lines) = mpsc::channel::<String>(OUTBOX);
    let writer = tokio::spawn(async move {
        while let Some(text) = lines.recv().await {
            if write.write_all(line(text).as_bytes()).await.is_err() {
                return;
            }
        }
    });
    let mut reader = BufReader::new(read);
    let mut subscription: Option<JoinHandle<()>> = None;
    loop {
        let text = match read_line(&mut reader).await {
            Ok(Some(Ok(text))) => text,
            Ok(Some(Err(too_long))) => {
                let error = RpcError::new(rpc::INVALID_REQUEST, too_long);
                let _ = outbox.send(rpc::answer(&Value::Null, Err(error))).await;
                continue;
            }
            Ok(None) | Err(_) => break,
        };
        if text.trim().is_empty() {
            continue;
        }
        let (id, method, params) = match rpc::parse(&text) {
            Ok(Incoming::Request { id, method, params }) => (id, method, params),
            // Nothing here asks a client anything, and a notification needs no answer.
            Ok(Incoming::Notification { .. } | Incoming::Response { .. }) => continue,
            Err(rejected) => {
                let _ = outbox.send(rpc::answer(&rejected.id, Err(rejected.error))).await;
                continue;
            }
        };
        if method == super::SUBSCRIBE {
            // The answer goes first, so the stream's first line (the status) follows it.
            if outbox.send(rpc::answer(&id, Ok(json!({})))).await.is_err() {
                break;
            }
            if subscription.is_none() {
                subscription = Some(subscribe(&parts, outbox.clone()));
            }
            continue;
        }
        let result = request(&parts, &method, params).await;
        if outbox.send(rpc::answer(&id, result)).await.is_err() {
            break;
        }
    }
    if let Some(subscription) = subscription {
        subscription.abort();
    }
    drop(outbox);
    let _ = writer.await;
}

fn line(mut text: String) -> String {
    text.push('\n');
    text
}

/// The next line: `None` at the end, `Some(Err)` for one past [`MAX_LINE`] (read to its end and
/// dropped) or one that is not UTF-8.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<Result<String, String>>> {
    let mut bytes = Vec::new();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok((!bytes.is_empty() || too_long).then(|| finish(bytes, too_long)));
        }
        let (taken, done) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        if !too_long {
            bytes.extend_from_slice(&available[..taken]);
            if bytes.len() > MAX_LINE {
                too_long = true;
                bytes = Vec::new();
            }
        }
        reader.consume(taken);
        if done {
            return Ok(Some(finish(bytes, too_long)));
        }
    }
}

fn finish(bytes: Vec<u8>, too_long: bool) -> Result<String, String> {
    if too_long {
        return Err(format!(
            "The message is longer than {MAX_LINE} bytes: it was skipped."
        ));
    }
    String::from_utf8(bytes).map_err(|_| "The message is not UTF-8: it was skipped.".to_string())
}

/// Streams the status (now and on each change) and every event to one client.
fn subscribe(parts: &Parts, outbox: mpsc::Sender<String>) -> JoinHandle<()> {
    let mut status = parts.status.clone();
    let mut events = parts.events.subscribe();
    tokio::spawn(async move {
        let snapshot = status.borrow_and_update().clone();
        if outbox
            .send(rpc::notification("status", json!(snapshot)))
            .await
            .is_err()
        {
            return;
        }
        loop {
            let text = tokio::select! {
                event = events.recv() => match event {
                    Ok(event) => rpc::notification("event", json!(event)),
                    Err(broadcast::error::RecvError::Lagged(count)) => {
                        rpc::notification("missed", json!({ "count": count }))
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                changed = status.changed() => match changed {
                    Ok(()) => {
                        let snapshot = status.borrow_and_update().clone();
                        rpc::notification("status", json!(snapshot))
                    }
                    Err(_) => return,
                },
            };
            if outbox.send(text).await.is_err() {
                return;
            }
        }
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerParams {
    id: String,
    answer: Verdict,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActivityParams {
    n: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShownListParams {
    session_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShownReadParams {
    id: String,
}

async fn request(parts: &Parts, method: &str, params: Value) -> Result<Value, RpcError> {
    match method {
        super::STATUS => {
            let snapshot = parts.status.borrow().clone();
            Ok(json!({ "running": true, "status": snapshot }))
        }
        super::APPROVALS_LIST => {
            let now = status::now_ms();
            let mut pending: Vec<PendingApproval> = parts
                .engine
                .cards()
                .iter()
                .map(|c| PendingApproval::of(c, now))
                .collect();
            pending.sort_by_key(|p| (p.asked_ms, p.id.clone()));
            Ok(json!(pending))
        }
        super::APPROVALS_ANSWER => {
            let asked: AnswerParams = rpc::params(method, params)?;
            // Only approval cards: questions and plans are answered in LLeMbas.
            let card = parts
                .engine
                .cards()
                .into_iter()
                .find(|c| c.tool_call_id == asked.id);
            let answered = match &card {
                Some(_) => {
                    parts
                        .engine
                        .answer_card(&asked.id, asked.answer.option_id())
                        .await
                }
                None => false,
            };
            match card {
                Some(card) if answered => Ok(json!({
                    "id": asked.id, "session_id": card.session_id, "answer": asked.answer,
                })),
                _ => Err(RpcError::refused(
                    format!(
                        "No approval {} waits for an answer: it was already answered, timed out or withdrawn (lembas approvals lists those that wait).",
                        asked.id
                    ),
                    "not_open",
                )),
            }
        }
        super::ACTIVITY => {
            let asked: ActivityParams = rpc::params(method, params)?;
            let n = asked.n.unwrap_or(ACTIVITY_DEFAULT).max(1);
            let path = activity_log::path();
            let newest = tokio::task::spawn_blocking(move || {
                activity_log::newest(&path, Limits::decided().kept_files, n)
            })
            .await
            .map_err(|e| RpcError::internal(e.to_string()))?
            .map_err(|e| RpcError::internal(format!("cannot read the activity log: {e}")))?;
            Ok(json!({ "lines": newest.lines, "unreadable": newest.unreadable }))
        }
        super::SESSIONS_LIST => {
            let sessions = tokio::task::spawn_blocking(|| Store::open_default().list())
                .await
                .map_err(|e| RpcError::internal(e.to_string()))?
                .map_err(|e| RpcError::internal(format!("cannot read the sessions: {e}")))?;
            Ok(json!(sessions))
        }
        super::REMOTE_STOP => {
            tokio::task::spawn_blocking(|| crate::settings::edit::apply(&[Change::RemoteEnabled(false)]))
                .await
                .map_err(|e| RpcError::internal(e.to_string()))?
                .map_err(|e| RpcError::internal(format!("remote work is still on: {e}")))?;
            // Shells and watches end with the link; the runtime dials again with remote work off.
            let _ = parts.wake.send(());
            Ok(json!({ "remote_enabled": false }))
        }
        super::SHOWN_LIST => {
            let asked: ShownListParams = rpc::params(method, params)?;
            Ok(json!(parts.engine.shown_list(asked.session_id.as_deref())))
        }
        super::SHOWN_READ => {
            let asked: ShownReadParams = rpc::params(method, params)?;
            match parts.engine.shown_read(&asked.id) {
                Some((file, text)) => Ok(json!({ "file": file, "text": &*text })),
                None => Err(RpcError::refused(
                    format!(
                        "No shown file {} is kept: the runtime keeps the last {} of each session while it runs (shown/list lists them).",
                        asked.id,
                        crate::decisions::decisions().show.kept_per_session
                    ),
                    "not_kept",
                )),
            }
        }
        other => Err(RpcError::method_not_found(other)),
    }
}
