//! The task that owns one device's WebSocket: it reads every frame, records it, judges the hello
//! (refusing a protocol this peer does not speak with 4400) and sends what the handle asks.

use lembas_protocol::LinkMethod;
use std::sync::{Arc, Mutex};

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use axum::http::HeaderMap;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::config::REFUSAL_CLOSE_CODE;
use crate::link::{HelloRules, Incoming, LinkHandle, LinkRecord, Outgoing, is_notification};
use crate::lock;

/// The close code a close frame without a payload stands for (RFC 6455 §7.1.5).
const NO_STATUS_CODE: u16 = 1005;

/// What the peer makes of the link's first message.
enum FirstMessage {
    Accepted,
    /// Not a hello: a fault, but the link stays open (the spec says nothing of closing it).
    NotHello(String),
    /// A hello naming a protocol this server does not speak: closed with 4400.
    Refused(String),
}

fn judge_first(message: &Value, rules: &HelloRules) -> FirstMessage {
    if !is_notification(message, LinkMethod::Hello.name()) {
        return FirstMessage::NotHello(format!(
            "the device's first message was not the _lembas/hello notification: {message}"
        ));
    }
    let protocol = message.pointer("/params/protocol");
    match protocol.and_then(Value::as_u64) {
        Some(protocol) if rules.protocols.contains(&protocol) => FirstMessage::Accepted,
        _ => FirstMessage::Refused(format!(
            "the device's hello says protocol {}, which this server does not speak ({:?}); the peer \
             closed the link with {REFUSAL_CLOSE_CODE} \"{}\"",
            protocol
                .map(Value::to_string)
                .unwrap_or_else(|| "nothing".to_string()),
            rules.protocols,
            rules.refusal_reason
        )),
    }
}

/// Makes the handle for a freshly upgraded link, and the future that runs the link until it ends.
pub(crate) fn open(
    socket: WebSocket,
    headers: HeaderMap,
    rules: HelloRules,
    shutdown: watch::Receiver<bool>,
) -> (LinkHandle, impl Future<Output = ()> + Send + 'static) {
    // Room for a few frames: a sender waits on its own `sent` answer anyway.
    let (outgoing_tx, outgoing_rx) = mpsc::channel(16);
    let (incoming_tx, incoming_rx) = mpsc::unbounded_channel();
    let record = Arc::new(Mutex::new(LinkRecord::default()));
    let handle = LinkHandle::new(headers, outgoing_tx, incoming_rx, record.clone());
    let task = LinkTask {
        socket,
        record,
        incoming: incoming_tx,
        rules,
        first: true,
        close_seen: false,
    };
    (handle, task.run(outgoing_rx, shutdown))
}

struct LinkTask {
    socket: WebSocket,
    record: Arc<Mutex<LinkRecord>>,
    // Unbounded on purpose: the peer is an examiner that keeps every message for the test, and
    // the device's output must never be slowed by a test that reads late.
    incoming: mpsc::UnboundedSender<Incoming>,
    rules: HelloRules,
    first: bool,
    close_seen: bool,
}

impl LinkTask {
    async fn run(mut self, mut outgoing: mpsc::Receiver<Outgoing>, mut shutdown: watch::Receiver<bool>) {
        loop {
            tokio::select! {
                frame = self.socket.recv() => {
                    let Some(frame) = frame else {
                        self.end_abruptly("the connection ended without a close frame".to_string());
                        break;
                    };
                    match frame {
                        Ok(frame) => self.on_frame(frame).await,
                        Err(error) => {
                            self.end_abruptly(error.to_string());
                            break;
                        }
                    }
                }
                next = outgoing.recv() => {
                    // The handle is gone: drop the connection without a close frame.
                    let Some(Outgoing { message, sent }) = next else { break };
                    let _ = sent.send(self.socket.send(message).await.map_err(|error| error.to_string()));
                }
                // The peer stopped, or was dropped (the sender gone): cut the link.
                () = stopped(&mut shutdown) => break,
            }
        }
    }

    fn end_abruptly(&mut self, why: String) {
        if !self.close_seen {
            let _ = self.incoming.send(Incoming::Abrupt(why));
        }
    }

    fn fault(&mut self, fault: String) {
        lock(&self.record).faults.push(fault.clone());
        let _ = self.incoming.send(Incoming::Unreadable(fault));
    }

    async fn on_frame(&mut self, frame: Message) {
        if self.close_seen {
            return;
        }
        match frame {
            Message::Text(text) => match serde_json::from_str::<Value>(text.as_str()) {
                Ok(message) => self.on_message(message).await,
                Err(error) => {
                    let shown: String = text.as_str().chars().take(200).collect();
                    self.fault(format!("the device sent a text frame that is not JSON ({error}): {shown}"));
                }
            },
            Message::Binary(bytes) => self.fault(format!(
                "the device sent a binary frame ({} bytes); the link carries one JSON-RPC message per text frame",
                bytes.len()
            )),
            // axum answers pings itself.
            Message::Ping(_) | Message::Pong(_) => {}
            Message::Close(frame) => {
                self.close_seen = true;
                let close = frame
                    .map(|frame| (frame.code, frame.reason.to_string()))
                    .unwrap_or((NO_STATUS_CODE, String::new()));
                let _ = self.incoming.send(Incoming::Closed(close));
            }
        }
    }

    async fn on_message(&mut self, message: Value) {
        tracing::debug!(%message, "device → peer");
        let verdict = if std::mem::take(&mut self.first) {
            judge_first(&message, &self.rules)
        } else {
            FirstMessage::Accepted
        };
        let mut refusal = None;
        {
            let mut record = lock(&self.record);
            record.received.push(message.clone());
            // A terminal's shared chat announced or left not as the spec says.
            if let Some(fault) = crate::terminal_sessions::fault_of(&message) {
                record.faults.push(fault);
            }
            match verdict {
                FirstMessage::Accepted => {}
                FirstMessage::NotHello(fault) => record.faults.push(fault),
                FirstMessage::Refused(fault) => {
                    record.faults.push(fault.clone());
                    record.hello_refused = Some(fault);
                    let close = (REFUSAL_CLOSE_CODE, self.rules.refusal_reason.clone());
                    record.peer_close = Some(close.clone());
                    refusal = Some(close);
                }
            }
        }
        let _ = self.incoming.send(Incoming::Message(message));
        if let Some((code, reason)) = refusal {
            tracing::info!(code, reason, "refusing the device's hello");
            let frame = CloseFrame {
                code,
                reason: reason.into(),
            };
            if let Err(error) = self.socket.send(Message::Close(Some(frame))).await {
                lock(&self.record)
                    .faults
                    .push(format!("could not send the 4400 close frame: {error}"));
            }
        }
    }
}

/// Resolves when the peer stops (or is dropped, which ends the sender).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stopped| *stopped).await;
}
