//! One message read from a client, whatever carries it (the link's WebSocket, an editor's stdin):
//! a request runs as its own task so the reader never waits on a handler, except one answered from
//! memory, which the reader answers itself (written straight onto the socket when the writer is
//! idle: no hand-off at all); a notification is handled in order, in the reader; an answer goes to
//! the request of ours that waits for it.

use futures_util::FutureExt;
use lembas_protocol::LinkMethod;
use serde_json::Value;
use std::sync::Arc;
use tokio::task::JoinSet;

use crate::client::Outbound;
use crate::dispatcher::Dispatcher;
use crate::rpc::{self, Incoming, RpcError};

/// Where the reader writes an answer it has at once, without waiting: the link's socket, when
/// nothing else is writing and no control message waits to be written. `Err` gives the text back.
pub trait WriteNow: Sync {
    fn write_now(&self, text: String, tasks: &mut JoinSet<()>) -> Result<(), String>;
}

pub async fn receive(
    text: &str,
    dispatcher: &Arc<Dispatcher>,
    out: &Outbound,
    socket: Option<&dyn WriteNow>,
    tasks: &mut JoinSet<()>,
) {
    match rpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            let at_once = dispatcher.answers_at_once(&method);
            let mut handling = {
                let dispatcher = dispatcher.clone();
                let method = method.clone();
                let running = dispatcher.start_running(&id);
                Box::pin(async move { dispatcher.request_cancellable(running, &method, params).await })
            };
            // Polled once here: a handler that must wait goes on in its own task below.
            if at_once && let Some(result) = (&mut handling).now_or_never() {
                send_now(rpc::answer(&id, result), out, socket, tasks);
                return;
            }
            let dispatcher = dispatcher.clone();
            let out = out.clone();
            tasks.spawn(async move {
                let result = handling.await;
                let new_session = match &result {
                    Ok(answer) if LinkMethod::served(&method) == Some(LinkMethod::SessionNew) => {
                        answer["sessionId"].as_str().map(str::to_string)
                    }
                    _ => None,
                };
                let _ = out.answer(&id, result).await;
                dispatcher.answered(&method, new_session).await;
            });
        }
        // In order, in the reader: keystrokes must not overtake each other.
        Ok(Incoming::Notification { method, params }) => dispatcher.notification(&method, params).await,
        Ok(Incoming::Response { id, result }) => {
            if !dispatcher.pending.resolve(&id, result) {
                tracing::debug!(%id, "an answer to no request of ours");
            }
        }
        Err(rejected) => spawn_answer(tasks, out, rejected.id, Err(rejected.error)),
    }
}

/// An answer the reader has in hand: onto the socket when it is free, else to the writer's queue,
/// else (the queue full) from a task of its own. Never waits.
fn send_now(text: String, out: &Outbound, socket: Option<&dyn WriteNow>, tasks: &mut JoinSet<()>) {
    let text = match socket {
        Some(socket) => match socket.write_now(text, tasks) {
            Ok(()) => return,
            Err(text) => text,
        },
        None => text,
    };
    if let Err(text) = out.try_control(text) {
        let out = out.clone();
        tasks.spawn(async move {
            let _ = out.control(text).await;
        });
    }
}

/// An answer sent from its own task, so a full queue never stalls the reader.
pub fn spawn_answer(tasks: &mut JoinSet<()>, out: &Outbound, id: Value, result: Result<Value, RpcError>) {
    let out = out.clone();
    tasks.spawn(async move {
        let _ = out.answer(&id, result).await;
    });
}
