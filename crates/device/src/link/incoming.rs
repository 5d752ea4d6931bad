//! One message read from a client, whatever carries it (the link's WebSocket, an editor's stdin):
//! a request runs as its own task so the reader never waits on a handler; a notification is handled
//! in order, in the reader; an answer goes to the request of ours that waits for it.

use serde_json::Value;
use std::sync::Arc;
use tokio::task::JoinSet;

use super::outbound::Outbound;
use crate::dispatcher::Dispatcher;
use crate::rpc::{self, Incoming, RpcError};

pub async fn receive(text: &str, dispatcher: &Arc<Dispatcher>, out: &Outbound, tasks: &mut JoinSet<()>) {
    match rpc::parse(text) {
        Ok(Incoming::Request { id, method, params }) => {
            let dispatcher = dispatcher.clone();
            let out = out.clone();
            tasks.spawn(async move {
                let result = dispatcher.request(&method, params).await;
                let new_session = match &result {
                    Ok(answer) if method == "session/new" => answer["sessionId"].as_str().map(str::to_string),
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

/// An answer sent from its own task, so a full queue never stalls the reader.
pub fn spawn_answer(tasks: &mut JoinSet<()>, out: &Outbound, id: Value, result: Result<Value, RpcError>) {
    let out = out.clone();
    tasks.spawn(async move {
        let _ = out.answer(&id, result).await;
    });
}
