//! One link: hello first, then JSON-RPC both ways until it ends. The reader never awaits a
//! request's handler (each runs as its own task, but for one answered from memory); one writer
//! drains the bounded outbound queue, control first, and sends the pings that tell a dead link from
//! a quiet one. The socket's send half is shared: the reader writes an answer it has at once
//! itself when the writer is idle, so a quick request crosses no task at all.

use futures_util::stream::SplitSink;
use futures_util::{FutureExt, SinkExt, StreamExt};
use lembas_protocol::LinkMethod;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{Mutex, broadcast, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::incoming;
use crate::client::outbound;
use crate::dispatcher::{Announced, Dispatcher};
use crate::events::DeviceEvent;
use crate::rpc::{self, RpcError};
use crate::settings::Settings;

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;
type WsSink = SplitSink<Ws, Message>;

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
    let sink = Arc::new(Mutex::new(sink));
    let socket = Socket {
        sink: sink.clone(),
        out: out.clone(),
    };
    let announced = Announced::of(&ctx.settings.borrow());
    // hello goes first: nothing else can be queued before it.
    let _ = out
        .notify(
            LinkMethod::Hello,
            serde_json::json!(announced.hello(ctx.engine.setup().decisions)),
        )
        .await;
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
                    Some(Ok(Message::Text(text))) => incoming::receive(text.as_str(), &dispatcher, &out, Some(&socket), &mut tasks).await,
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

/// The socket's send half as the reader sees it.
struct Socket<S> {
    sink: Arc<Mutex<S>>,
    out: outbound::Outbound,
}

impl<S> incoming::WriteNow for Socket<S>
where
    S: futures_util::Sink<Message> + Unpin + Send + 'static,
{
    fn write_now(&self, text: String, tasks: &mut JoinSet<()>) -> Result<(), String> {
        let Ok(mut sink) = self.sink.clone().try_lock_owned() else {
            return Err(text);
        };
        // Checked holding the lock, so the writer is not between taking a message and writing it.
        if !self.out.control_written() {
            return Err(text);
        }
        let mut sending = Box::pin(async move {
            let _ = sink.send(Message::text(text)).await;
        });
        if (&mut sending).now_or_never().is_none() {
            // The socket is behind: the rest goes from a task that keeps the lock, so nothing
            // overtakes it, and the reader reads on.
            tasks.spawn(sending);
        }
        Ok(())
    }
}

/// The writer: takes the send half for each frame, and says a control message is written only
/// once it is (see [`Socket`]).
async fn write_frames(
    sink: Arc<Mutex<WsSink>>,
    mut queue: outbound::OutboundQueue,
    mut close: oneshot::Receiver<CloseFrame>,
    ping_interval: Duration,
) {
    let mut ping = tokio::time::interval_at(Instant::now() + ping_interval, ping_interval);
    loop {
        tokio::select! {
            biased;
            frame = &mut close => {
                let mut sink = sink.lock().await;
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
            frame = queue.next_frame() => match frame {
                Some((lane, text)) => {
                    let mut sink = sink.lock().await;
                    let sent = sink.send(Message::text(text)).await;
                    queue.written(lane);
                    if sent.is_err() {
                        return;
                    }
                }
                None => return,
            },
            _ = ping.tick() => {
                if sink.lock().await.send(Message::Ping(Default::default())).await.is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use incoming::WriteNow;

    fn socket() -> (Socket<Vec<Message>>, outbound::OutboundQueue) {
        let (out, queue) = outbound::channel();
        let sink = Arc::new(Mutex::new(Vec::new()));
        (Socket { sink, out }, queue)
    }

    fn written(socket: &Socket<Vec<Message>>) -> Vec<String> {
        let sink = socket.sink.try_lock().unwrap();
        sink.iter().map(|m| m.to_text().unwrap().to_string()).collect()
    }

    #[tokio::test]
    async fn the_reader_writes_only_when_nothing_waits_to_be_written() {
        let (socket, mut queue) = socket();
        let mut tasks = JoinSet::new();
        assert_eq!(socket.write_now("first".into(), &mut tasks), Ok(()));
        assert_eq!(written(&socket), ["first"]);

        // Queued for the writer and not yet taken: a direct answer would overtake it.
        socket.out.control("queued".into()).await.unwrap();
        assert_eq!(
            socket.write_now("second".into(), &mut tasks),
            Err("second".into())
        );
        // Taken by the writer but not yet written: still not.
        let (lane, text) = queue.next_frame().await.unwrap();
        assert_eq!(text, "queued");
        assert_eq!(
            socket.write_now("second".into(), &mut tasks),
            Err("second".into())
        );
        socket.sink.lock().await.push(Message::text(text));
        queue.written(lane);
        assert_eq!(socket.write_now("second".into(), &mut tasks), Ok(()));

        // Bulk output waiting does not hold an answer back (control goes first anyway).
        socket.out.bulk("output".into()).await.unwrap();
        assert_eq!(socket.write_now("third".into(), &mut tasks), Ok(()));
        // The writer in the middle of a frame: the answer goes to the queue instead.
        let held = socket.sink.clone().try_lock_owned().unwrap();
        assert_eq!(
            socket.write_now("fourth".into(), &mut tasks),
            Err("fourth".into())
        );
        drop(held);
        assert_eq!(written(&socket), ["first", "queued", "second", "third"]);
        assert!(tasks.is_empty(), "every write finished at once");
    }
}
