//! `$/cancel_request` from a client: a request still being answered is answered as cancelled,
//! with nothing of it left half done. ACP lets the answer be the method's own cancellation marker
//! or -32800. A prompt's turn is cancelled as `session/cancel` does, and its answer says
//! `stopReason: cancelled`; a `session/load` or `session/resume` finishes and the session it opened
//! is let go of again; a `session/new` finishes and the session it made is removed; -32800 for
//! those three. Any other request is short and whole: it is answered as it would have been. A
//! cancel for an id not running is ignored.

use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use crate::engine::Engine;
use crate::poison::Recover;
use crate::rpc::{self, RpcError};
use lembas_protocol::LinkMethod;
use lembas_protocol::session::SessionRef;

/// The requests of one client being answered now, by id, each with the way to cancel it.
#[derive(Default)]
pub struct RunningRequests {
    running: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
}

/// Held while a request runs: told when the client cancels it; taken out of the list when dropped.
pub struct Running {
    requests: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
    key: String,
    cancelled: oneshot::Receiver<()>,
}

impl RunningRequests {
    /// `id` runs from now on (a cancel read after this finds it) until the returned [`Running`]
    /// is dropped.
    pub fn start(&self, id: &Value) -> Running {
        let (tx, cancelled) = oneshot::channel();
        let key = id.to_string();
        self.running.lock().recover().insert(key.clone(), tx);
        Running {
            requests: self.running.clone(),
            key,
            cancelled,
        }
    }

    /// `$/cancel_request { requestId }`: the request told, if it runs.
    pub fn cancel(&self, id: &Value) {
        if let Some(tx) = self.running.lock().recover().remove(&id.to_string()) {
            let _ = tx.send(());
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.requests.lock().recover().remove(&self.key);
    }
}

/// What a cancelled request undoes, read from its params before it runs.
pub enum Undo {
    /// A prompt: its session's turn is cancelled; the answer is the prompt's own.
    Turn(String),
    /// A load or resume of a session not open before: let go of again.
    Opened(String),
    /// A new session: removed again.
    Made,
    /// Short and whole: answered as it would have been.
    Nothing,
}

pub fn undo_of(engine: &Engine, method: &str, params: &Value) -> Undo {
    let method = LinkMethod::served(method);
    let session = || {
        SessionRef::deserialize(params)
            .ok()
            .map(|r| r.session_id.to_string())
    };
    match method {
        Some(LinkMethod::SessionPrompt) => session().map_or(Undo::Nothing, Undo::Turn),
        Some(LinkMethod::SessionLoad | LinkMethod::SessionResume) => match session() {
            Some(id) if !engine.is_open(&id) => Undo::Opened(id),
            _ => Undo::Nothing,
        },
        Some(LinkMethod::SessionNew) => Undo::Made,
        _ => Undo::Nothing,
    }
}

fn cancelled(method: &str) -> RpcError {
    RpcError::new(
        rpc::REQUEST_CANCELLED,
        format!(
            "{method} was cancelled ($/cancel_request): nothing of it was kept. Send it again to have it done."
        ),
    )
}

/// Answers `handling` (the request `method`, `undo` read from its params), or, once `running` is cancelled, as
/// the module says.
pub async fn answer(
    engine: &Engine,
    method: &str,
    undo: Undo,
    running: Running,
    handling: impl Future<Output = Result<Value, RpcError>>,
) -> Result<Value, RpcError> {
    let mut handling = std::pin::pin!(handling);
    let mut running = running;
    tokio::select! {
        result = &mut handling => result,
        Ok(()) = &mut running.cancelled => match undo {
            Undo::Turn(id) => {
                engine.cancel_turn_of(&id);
                handling.await
            }
            Undo::Opened(id) => {
                if handling.await.is_ok() {
                    engine.let_go(&id);
                }
                Err(self::cancelled(method))
            }
            Undo::Made => {
                if let Ok(made) = handling.await
                    && let Ok(made) = SessionRef::deserialize(&made)
                {
                    engine.unmake(&made.session_id).await;
                }
                Err(self::cancelled(method))
            }
            Undo::Nothing => handling.await,
        },
    }
}
