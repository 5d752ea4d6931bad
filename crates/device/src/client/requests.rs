//! The client at the other end of one link, as the engine sees it: where to send notifications, how
//! to send a request and await its answer (approval cards), and what the client said about itself
//! in initialize (only a client that said `_meta.lembas` gets `_lembas/event`, and only one that said
//! protocol 2 or later gets question and plan cards).

use lembas_protocol::LinkMethod;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use super::outbound::{Closed, Outbound};
use crate::poison::Recover;
use crate::rpc::{self, RpcError};

/// Requests the device sent on this link and is waiting to hear back on, by id.
#[derive(Default, Debug)]
pub struct PendingRequests {
    next: AtomicU64,
    waiting: Mutex<HashMap<String, oneshot::Sender<Result<Value, RpcError>>>>,
}

impl PendingRequests {
    fn waiting(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Result<Value, RpcError>>>> {
        self.waiting.lock().recover()
    }

    /// Hands an answer from the link to whoever sent the request; `false` for an id we never used.
    pub fn resolve(&self, id: &Value, result: Result<Value, RpcError>) -> bool {
        let key = id_key(id);
        match self.waiting().remove(&key) {
            Some(tx) => {
                let _ = tx.send(result);
                true
            }
            None => false,
        }
    }

    /// Everyone still waiting hears that the link is gone (their senders are dropped).
    pub fn fail_all(&self) {
        self.waiting().clear();
    }
}

fn id_key(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One link's client. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ClientLink {
    /// Tells links apart, so a link that ended does not detach the one after it.
    pub serial: u64,
    pub out: Outbound,
    pub pending: Arc<PendingRequests>,
    /// The client said `clientCapabilities._meta.lembas`: it is LLeMbas and gets `_lembas/*`.
    pub lembas: bool,
    /// `_meta.lembas.protocol` (absent: 1).
    pub protocol: u64,
    /// The client said `_meta.lembas.show: true`: its sessions get the show tool (`_lembas/show`).
    pub show: bool,
    /// The client said `_meta.terminal_output: true` (Zed's convention): a command's output is
    /// told as it comes.
    pub terminal_output: bool,
    /// The client renders ACP's forms (`elicitation.form`): an editor is asked its question and
    /// plan cards with `elicitation/create`.
    pub elicitation_form: bool,
    /// The client answered a question or plan card with method-not-found: it is treated as
    /// protocol 1 for the rest of the link (shared by every clone of this link).
    cards_refused: Arc<AtomicBool>,
}

impl ClientLink {
    pub fn new(
        serial: u64,
        out: Outbound,
        pending: Arc<PendingRequests>,
        lembas: bool,
        protocol: u64,
        show: bool,
    ) -> Self {
        Self {
            serial,
            out,
            pending,
            lembas,
            protocol,
            show: lembas && show,
            terminal_output: false,
            elicitation_form: false,
            cards_refused: Arc::default(),
        }
    }

    /// A client that renders ACP's forms.
    pub fn with_elicitation_form(mut self, elicitation_form: bool) -> Self {
        self.elicitation_form = elicitation_form;
        self
    }

    /// Question and plan cards are asked as forms (`elicitation/create`): a client that renders
    /// them and does not take `_lembas/question` and `_lembas/plan`.
    pub fn elicits_cards(&self) -> bool {
        self.elicitation_form && !self.lembas
    }

    /// A client that draws a command's output as it comes.
    pub fn with_terminal_output(mut self, terminal_output: bool) -> Self {
        self.terminal_output = terminal_output;
        self
    }

    /// Whether `_lembas/question` and `_lembas/plan` may be sent (docs/protocol.md "Versions and discovery").
    pub fn takes_cards(&self) -> bool {
        (self.lembas && self.protocol >= 2 || self.elicits_cards())
            && !self.cards_refused.load(Ordering::SeqCst)
    }

    /// The client does not know question and plan cards after all.
    pub fn refuse_cards(&self) {
        self.cards_refused.store(true, Ordering::SeqCst);
    }

    pub async fn notify(&self, method: LinkMethod, params: Value) -> Result<(), Closed> {
        self.out.notify(method, params).await
    }

    /// Sends a request and waits for its answer. `Err(Closed)` when the link ends first.
    pub async fn request(
        &self,
        method: LinkMethod,
        params: Value,
    ) -> Result<Result<Value, RpcError>, Closed> {
        self.request_as(self.next_id(), method, params).await
    }

    /// A fresh id for a request of ours, for a caller that needs to know it before sending.
    pub fn next_id(&self) -> Value {
        let n = self.pending.next.fetch_add(1, Ordering::Relaxed);
        Value::String(format!("dev-{n}"))
    }

    /// [`ClientLink::request`] with an id from [`ClientLink::next_id`].
    pub async fn request_as(
        &self,
        id: Value,
        method: LinkMethod,
        params: Value,
    ) -> Result<Result<Value, RpcError>, Closed> {
        let (tx, rx) = oneshot::channel();
        self.pending.waiting().insert(id_key(&id), tx);
        if self
            .out
            .control(rpc::request(&id, method.name(), params))
            .await
            .is_err()
        {
            self.pending.waiting().remove(&id_key(&id));
            return Err(Closed);
        }
        rx.await.map_err(|_| Closed)
    }
}
