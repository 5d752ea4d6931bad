//! The runtime's side of the control endpoint: accepts connections of its own user, answers their
//! requests once they presented the control cookie ([`super::cookie`]) and streams events to those
//! that subscribe. A bad line gets an error answer and the connection goes on; nothing a client
//! sends can stop the runtime.

use lembas_protocol::session::Empty;
use lembas_protocol::{ControlMethod, Reason};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{broadcast, mpsc, watch};
use tokio::task::JoinHandle;

use super::calls::{self, call, notification, push, serve_call};
use super::cookie::{self, Cookie};
use super::credentials;
use super::endpoint::{self, Listener, Stream};
use super::params::{
    AnswerParams, Answered, Count, RemoteStopped, ShownReadParams, ShownText, StatusAnswer, Streams,
};
use super::runtime_handles::RuntimeHandles;
use crate::desktop_view::pending::open_cards;
use crate::rpc::{self, Incoming, RpcError};
use crate::settings::edit::Change;
use crate::status;
use crate::terminal::board::Shown;

/// The longest line a client may send; a longer one is answered with an error and skipped.
const MAX_LINE: usize = 64 * 1024;
/// Lines waiting for a slow client before its requests wait too.
const OUTBOX: usize = 256;
/// How long a refused connection is read from before it is closed.
const REFUSED_LINGER: std::time::Duration = std::time::Duration::from_secs(1);
/// How often a client that terminal frames were skipped for is checked for room to hear it.
const SKIPPED_RETRY: std::time::Duration = std::time::Duration::from_millis(200);
/// How long Stop all remote work waits for the cancelled turns to end before ending the link.
const TURNS_END_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Each connection's serial in this runtime: the chats it holds are held by it.
static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

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
    /// Writes a fresh control cookie, binds the socket and serves; an error says why there is no
    /// control endpoint (the runtime runs on without one). The cookie is written before the socket
    /// is bound, so a client that reaches this runtime finds its cookie.
    pub fn start(parts: RuntimeHandles) -> std::io::Result<Server> {
        let dirs = &parts.engine.setup().dirs;
        let cookie_path = cookie::path(dirs);
        let cookie = Cookie::fresh()?;
        cookie.write(&cookie_path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot write the control cookie {}: {e}", cookie_path.display()),
            )
        })?;
        let gate = Arc::new(CookieCheck {
            cookie,
            path: cookie_path,
        });
        let path = super::socket_path(dirs);
        let listener = Listener::bind(&path)?;
        let (closing, closed) = watch::channel(false);
        let own = endpoint::own_uid();
        let accept = tokio::spawn(async move {
            let parts = Arc::new(parts);
            loop {
                match listener.accept().await {
                    Ok((stream, peer)) => {
                        let parts = parts.clone();
                        let gate = gate.clone();
                        let mut closed = closed.clone();
                        tokio::spawn(async move {
                            tokio::select! {
                                _ = serve(stream, peer, own, gate, parts) => {}
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

/// What a connection must present before anything else is answered: this runtime's cookie.
struct CookieCheck {
    cookie: Cookie,
    /// Where it was written, for the refusal's sentence.
    path: PathBuf,
}

impl CookieCheck {
    /// Answers `hello`: `{}` when its cookie is this runtime's.
    fn hello(&self, params: Value) -> Result<Value, RpcError> {
        match calls::read(call::Hello, params) {
            Ok(hello) if self.cookie.matches(&hello.cookie) => lembas_protocol::request::answer(Empty {}),
            _ => Err(cookie::wrong(&self.path)),
        }
    }
}

async fn serve(
    stream: Stream,
    peer: Option<u32>,
    own: u32,
    gate: Arc<CookieCheck>,
    parts: Arc<RuntimeHandles>,
) {
    let (read, mut write) = tokio::io::split(stream);
    if let Err(why) = credentials::admit(peer, own) {
        tracing::warn!("control socket: refused a connection: {why}");
        let error = RpcError::with_reason(rpc::INVALID_REQUEST, Reason::OtherUser, why.to_string());
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
    let connection = CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut reader = BufReader::new(read);
    let mut subscription: Option<JoinHandle<()>> = None;
    // Whether this connection presented the cookie; until it has, only `hello` is answered.
    let mut admitted = false;
    let mut warned = false;
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
        let known = ControlMethod::from_name(&method);
        if known == Some(ControlMethod::Hello) {
            let result = gate.hello(params);
            // Once a connection: one that tries again and again does not fill the log.
            if result.is_err() && !std::mem::replace(&mut warned, true) {
                tracing::warn!(
                    "control socket: a connection presented a control cookie that is not this runtime's"
                );
            }
            admitted |= result.is_ok();
            if outbox.send(rpc::answer(&id, result)).await.is_err() {
                break;
            }
            continue;
        }
        if !admitted {
            if !std::mem::replace(&mut warned, true) {
                tracing::warn!(
                    "control socket: refused {method:?}: the connection did not present the control cookie"
                );
            }
            if outbox
                .send(rpc::answer(&id, Err(cookie::missing(&gate.path))))
                .await
                .is_err()
            {
                break;
            }
            continue;
        }
        let Some(known) = known else {
            if outbox
                .send(rpc::answer(&id, Err(RpcError::method_not_found(&method))))
                .await
                .is_err()
            {
                break;
            }
            continue;
        };
        if known == ControlMethod::Subscribe {
            let wants = match calls::read(call::Subscribe, params) {
                Ok(wants) => wants,
                Err(e) => {
                    if outbox.send(rpc::answer(&id, Err(e))).await.is_err() {
                        break;
                    }
                    continue;
                }
            };
            // The answer goes first, so the stream's first line (the status) follows it.
            if outbox.send(rpc::answer(&id, Ok(json!({})))).await.is_err() {
                break;
            }
            if subscription.is_none() {
                subscription = Some(subscribe(&parts, outbox.clone(), wants));
            }
            continue;
        }
        let result = request(&parts, connection, known, params).await;
        if outbox.send(rpc::answer(&id, result)).await.is_err() {
            break;
        }
    }
    if let Some(subscription) = subscription {
        subscription.abort();
    }
    // The chats it held are let go of (a front end that crashed too).
    parts.engine.let_go_all(connection).await;
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

/// The next item of a stream the subscriber asked for; never, for one it did not.
async fn next_of<T: Clone>(
    receiver: &mut Option<broadcast::Receiver<T>>,
) -> Result<T, broadcast::error::RecvError> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// Streams the status (now and on each change) and every event to one client, with the sessions'
/// updates and the terminals' output when asked.
fn subscribe(parts: &RuntimeHandles, outbox: mpsc::Sender<String>, wants: Streams) -> JoinHandle<()> {
    let mut status = parts.status.clone();
    let mut events = parts.events.subscribe();
    let mut updates = wants.sessions.then(|| parts.engine.updates());
    let mut news = wants.sessions.then(|| parts.engine.chat_news());
    let mut shown = wants.terminals.then(|| parts.board.subscribe());
    tokio::spawn(async move {
        let snapshot = status.borrow_and_update().clone();
        if outbox.send(notification(push::Status, &snapshot)).await.is_err() {
            return;
        }
        // Terminal frames skipped since the last one sent.
        let mut skipped: u64 = 0;
        loop {
            let text = tokio::select! {
                event = events.recv() => match event {
                    Ok(event) => notification(push::Event, &event),
                    Err(broadcast::error::RecvError::Lagged(count)) => {
                        notification(push::Missed, &Count { count })
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                update = next_of(&mut updates) => match update {
                    Ok(update) => super::sessions::push(update),
                    Err(broadcast::error::RecvError::Lagged(count)) => {
                        notification(push::SessionMissed, &Count { count })
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                news = next_of(&mut news) => match news {
                    Ok(news) => super::chat::push(news),
                    Err(broadcast::error::RecvError::Lagged(count)) => {
                        notification(push::SessionMissed, &Count { count })
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                output = next_of(&mut shown) => match output {
                    // Output waiting in this client's outbox is bounded too: past a quarter of it,
                    // frames are skipped (the client re-reads the ring when told). Never an exit.
                    Ok(Shown::Output { .. }) if outbox.capacity() < OUTBOX / 4 => {
                        skipped += 1;
                        continue;
                    }
                    Ok(output) if skipped > 0 => {
                        let missed = notification(push::TerminalMissed, &Count { count: skipped });
                        skipped = 0;
                        if outbox.send(missed).await.is_err() {
                            return;
                        }
                        super::terminals::push(output)
                    }
                    Ok(output) => super::terminals::push(output),
                    Err(broadcast::error::RecvError::Lagged(count)) => {
                        notification(push::TerminalMissed, &Count { count: count + std::mem::take(&mut skipped) })
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                // Frames were skipped and no more come: the client still hears it, once it has room.
                () = tokio::time::sleep(SKIPPED_RETRY), if skipped > 0 => {
                    if outbox.capacity() < OUTBOX / 4 {
                        continue;
                    }
                    notification(push::TerminalMissed, &Count { count: std::mem::take(&mut skipped) })
                }
                changed = status.changed() => match changed {
                    Ok(()) => {
                        let snapshot = status.borrow_and_update().clone();
                        notification(push::Status, &snapshot)
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

async fn request(
    parts: &RuntimeHandles,
    connection: u64,
    method: ControlMethod,
    params: Value,
) -> Result<Value, RpcError> {
    use ControlMethod as M;
    match method {
        // Answered in `serve`, before a request reaches here.
        M::Hello | M::Subscribe => Err(RpcError::method_not_found(method.name())),
        M::Status => {
            serve_call(call::Status, params, |_| async {
                Ok(StatusAnswer {
                    running: true,
                    status: parts.status.borrow().clone(),
                })
            })
            .await
        }
        M::ApprovalsList => {
            serve_call(call::ApprovalsList, params, |_| async {
                Ok(open_cards(&parts.engine.cards(), status::now_ms()))
            })
            .await
        }
        M::ApprovalsAnswer => serve_call(call::ApprovalsAnswer, params, |asked| answer(parts, asked)).await,
        M::Activity => {
            serve_call(call::Activity, params, |asked| {
                super::activity::read(parts, asked)
            })
            .await
        }
        M::WindowState => {
            serve_call(call::WindowState, params, |_| {
                super::window_state::snapshot(parts)
            })
            .await
        }
        M::SettingsChange => {
            serve_call(call::SettingsChange, params, |change| {
                super::settings::change(parts, change)
            })
            .await
        }
        M::Login => super::login::login(parts, params).await,
        M::Logout => serve_call(call::Logout, params, |_| super::login::logout(parts)).await,
        M::RemoteStop => serve_call(call::RemoteStop, params, |_| stop_remote_work(parts)).await,
        M::SessionsList | M::SessionsTimeline | M::SessionsStop | M::SessionsUndo | M::SessionsRevoke => {
            super::sessions::request(&parts.engine, method, params).await
        }
        M::TerminalsList | M::TerminalsReplay | M::TerminalsHangUp | M::TerminalsWrite => {
            super::terminals::request(&parts.board, method, params).await
        }
        M::ChatOpen
        | M::ChatPrompt
        | M::ChatSteer
        | M::ChatShare
        | M::ChatClose
        | M::ChatConfigure
        | M::ChatModels
        | M::ChatAnswer
        | M::ChatFiles
        | M::ChatCommands => super::chat::request(parts, connection, method, params).await,
        M::ShownList => {
            serve_call(call::ShownList, params, |asked| async move {
                Ok(parts.engine.shown_list(asked.session_id.as_deref()))
            })
            .await
        }
        M::ShownRead => {
            serve_call(call::ShownRead, params, |asked| async move {
                shown_read(parts, asked)
            })
            .await
        }
    }
}

/// `approvals/answer`: the same path as the desktop's answer. Only approval and plan cards:
/// questions are answered in LLeMbas.
async fn answer(parts: &RuntimeHandles, asked: AnswerParams) -> Result<Answered, RpcError> {
    let card = parts
        .engine
        .cards()
        .into_iter()
        .find(|c| c.tool_call_id() == asked.id);
    let answered = match &card {
        Some(_) => parts.engine.answer_card(&asked.id, asked.answer).await,
        None => false,
    };
    match card {
        Some(card) if answered => Ok(Answered {
            id: asked.id,
            session_id: card.session_id().to_string(),
            answer: asked.answer,
        }),
        _ => Err(RpcError::refused(
            format!(
                "No approval {} waits for an answer: it was already answered, timed out or withdrawn (lembas approvals lists those that wait).",
                asked.id
            ),
            Reason::NotOpen,
        )),
    }
}

/// `remote/stop`: remote work off in the config, every turn stopped, the link ended.
async fn stop_remote_work(parts: &RuntimeHandles) -> Result<RemoteStopped, RpcError> {
    // Turns and jobs are the engine's, not the link's: they are stopped here, before the config
    // says remote work is off, so a job's note says Stop all rather than remote work turned off.
    // Shells and watches end with the link; the runtime dials again with remote work off.
    let stopped = parts.engine.stop_all();
    let dirs = parts.engine.setup().dirs.clone();
    tokio::task::spawn_blocking(move || crate::settings::edit::apply(&dirs, &[Change::RemoteEnabled(false)]))
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
        .map_err(|e| RpcError::internal(format!("remote work is still on: {e}")))?;
    // Their answers (`cancelled`) go out on this link before it ends.
    parts.engine.cancel_all(TURNS_END_WAIT).await;
    let _ = parts.wake.send(());
    Ok(RemoteStopped {
        remote_enabled: false,
        stopped_turns: stopped,
    })
}

fn shown_read(parts: &RuntimeHandles, asked: ShownReadParams) -> Result<ShownText, RpcError> {
    match parts.engine.shown_read(&asked.id) {
        Some((file, text)) => Ok(ShownText {
            file,
            text: text.to_string(),
        }),
        None => Err(RpcError::refused(
            format!(
                "No shown file {} is kept: the runtime keeps the last {} of each session while it runs (shown/list lists them).",
                asked.id,
                parts.engine.setup().decisions.show.kept_per_session
            ),
            Reason::NotKept,
        )),
    }
}
