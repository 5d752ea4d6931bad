//! One link: hello first, then JSON-RPC both ways until it ends. The reader never awaits a
//! request's handler (each runs as its own task); one writer drains the bounded outbound queue,
//! control first, and sends the pings that tell a dead link from a quiet one.

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::incoming;
use super::outbound;
use crate::dispatcher::{Announced, Dispatcher};
use crate::events::DeviceEvent;
use crate::rpc::{self, RpcError};
use crate::settings::Settings;

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The close code a 2.0 server uses for a device of the wrong protocol.
pub const CLOSE_UPDATE: u16 = 4400;
/// How long a closing link waits for the instance's close reply.
const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// How often the reader looks at liveness and pending limits.
const CHECK_EVERY: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, PartialEq)]
pub enum LinkEnd {
    /// We were asked to stop; closed with 1000.
    Shutdown,
    /// The instance closed with 4400: it will not talk to this device's protocol.
    Refused { reason: String },
    /// The connection went away (closed by the instance, or lost).
    Dropped(String),
    /// Nothing arrived for too long, pings included.
    Dead,
    /// The limits changed and nothing was working: closed so the instance hears the new ones.
    LimitsChanged,
    /// The machine woke from sleep.
    Woke,
}

pub struct LinkContext {
    pub settings: watch::Receiver<Arc<Settings>>,
    pub connection: Option<String>,
    pub events: broadcast::Sender<DeviceEvent>,
    pub engine: crate::engine::Engine,
    /// The runtime's list of terminals, for its own window.
    pub board: crate::terminal::board::Board,
    pub shutdown: watch::Receiver<bool>,
    pub wake: broadcast::Receiver<()>,
    pub ping_interval: Duration,
    pub dead_after: Duration,
}

pub async fn run(ws: Ws, mut ctx: LinkContext) -> LinkEnd {
    let (sink, mut stream) = ws.split();
    let (out, queue) = outbound::channel();
    let announced = Announced::of(&ctx.settings.borrow());
    // hello goes first: nothing else can be queued before it.
    let _ = out.notify("_lembas/hello", announced.hello()).await;
    let _ = ctx.events.send(DeviceEvent::LimitsSent {
        limits: announced.hello_limits(),
    });
    let (close_tx, close_rx) = oneshot::channel();
    let writer = tokio::spawn(write_frames(sink, queue, close_rx, ctx.ping_interval));
    let dispatcher = Arc::new(Dispatcher::new(
        ctx.settings.clone(),
        announced.clone(),
        ctx.connection.clone(),
        out.clone(),
        ctx.events.clone(),
        ctx.engine.clone(),
        ctx.board.clone(),
    ));
    let mut tasks = JoinSet::new();
    let mut last_seen = Instant::now();
    let mut check = tokio::time::interval(CHECK_EVERY);
    let mut close_tx = Some(close_tx);
    let mut close = |code: u16, reason: &str| {
        if let Some(tx) = close_tx.take() {
            let _ = tx.send(CloseFrame {
                code: code.into(),
                reason: reason.to_string().into(),
            });
        }
    };

    let end = loop {
        tokio::select! {
            msg = stream.next() => {
                last_seen = Instant::now();
                match msg {
                    Some(Ok(Message::Text(text))) => incoming::receive(text.as_str(), &dispatcher, &out, &mut tasks).await,
                    Some(Ok(Message::Binary(_))) => {
                        let error = RpcError::new(rpc::PARSE_ERROR, "Binary frames are not JSON-RPC: send each message as one text frame.");
                        incoming::spawn_answer(&mut tasks, &out, Value::Null, Err(error));
                    }
                    Some(Ok(Message::Close(frame))) => {
                        break match frame {
                            Some(f) if u16::from(f.code) == CLOSE_UPDATE => LinkEnd::Refused { reason: f.reason.to_string() },
                            Some(f) => LinkEnd::Dropped(format!("the instance closed the link ({} {})", u16::from(f.code), f.reason)),
                            None => LinkEnd::Dropped("the instance closed the link".into()),
                        };
                    }
                    Some(Ok(_)) => {} // ping, pong: liveness only
                    Some(Err(e)) => break LinkEnd::Dropped(format!("the connection failed: {e}")),
                    None => break LinkEnd::Dropped("the connection ended".into()),
                }
            }
            Some(_) = tasks.join_next() => {}
            _ = ctx.shutdown.changed() => {
                close(1000, "device stopping");
                break LinkEnd::Shutdown;
            }
            Ok(()) = ctx.wake.recv() => {
                close(1001, "device woke from sleep");
                break LinkEnd::Woke;
            }
            _ = check.tick() => {
                if last_seen.elapsed() > ctx.dead_after {
                    break LinkEnd::Dead;
                }
                dispatcher.enforce();
                let idle = tasks.is_empty() && !dispatcher.busy();
                if idle && Announced::of(&ctx.settings.borrow()) != announced {
                    close(1000, "limits changed");
                    break LinkEnd::LimitsChanged;
                }
            }
        }
    };

    // Everything this link started ends with it: no shell outlives the link.
    dispatcher.close_all();
    tasks.abort_all();
    drop(dispatcher);
    drop(out);
    if matches!(end, LinkEnd::Shutdown | LinkEnd::LimitsChanged | LinkEnd::Woke) {
        // Let the close frame go out and the instance answer it, briefly.
        let _ = tokio::time::timeout(CLOSE_WAIT, async {
            while let Some(Ok(_)) = stream.next().await {}
        })
        .await;
    }
    writer.abort();
    end
}

async fn write_frames(
    mut sink: futures_util::stream::SplitSink<Ws, Message>,
    mut queue: outbound::OutboundQueue,
    mut close: oneshot::Receiver<CloseFrame>,
    ping_interval: Duration,
) {
    let mut ping = tokio::time::interval_at(Instant::now() + ping_interval, ping_interval);
    loop {
        tokio::select! {
            biased;
            frame = &mut close => {
                // What is already queued (answers, a shell's last output and exit) goes first.
                while let Some(text) = queue.try_next() {
                    if sink.send(Message::text(text)).await.is_err() {
                        return;
                    }
                }
                if let Ok(frame) = frame {
                    let _ = sink.send(Message::Close(Some(frame))).await;
                }
                return;
            }
            text = queue.next() => match text {
                Some(text) => {
                    if sink.send(Message::text(text)).await.is_err() {
                        return;
                    }
                }
                None => return,
            },
            _ = ping.tick() => {
                if sink.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
        }
    }
}
