//! What changes a session's conversation between turns, or the running one: steer, rewind and
//! compact (docs/protocol.md `_lembas/steer`, `_lembas/session/rewind`, `_lembas/session/compact`).

use std::sync::Arc;

use super::Engine;
use super::session::Session;
use super::session_access::held;
use crate::rpc::{self, RpcError};
use crate::store::Record;
use lembas_protocol::Reason;
use lembas_protocol::session::{Compacted, RewindParams, Rewound, SessionRef, SteerParams, Steered};

/// `_lembas/steer`: a message for the running turn, taken in at its next step.
pub(super) async fn steer(engine: &Engine, params: SteerParams) -> Result<Steered, RpcError> {
    let SteerParams {
        session_id: id,
        text,
        message_id,
    } = params;
    if text.trim().is_empty() {
        return Err(RpcError::invalid_params(
            "text is empty: the message for the running turn.",
        ));
    }
    let session = engine
        .sessions()
        .get(&id)
        .cloned()
        .ok_or_else(|| nothing_runs(&id))?;
    super::session_access::judge_again(engine, &session)?;
    let steered = session.steer(message_id, text);
    steered.ok_or_else(|| nothing_runs(&id))
}

fn nothing_runs(id: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "Nothing is running in {id}: send the message as a prompt instead."
    ))
}

/// A session at rest, or -32602 saying it works (rewind and compact wait for quiet).
fn at_rest(engine: &Engine, id: &str) -> Result<Arc<Session>, RpcError> {
    let session = held(engine, id)?;
    if session.busy() {
        return Err(RpcError::invalid_params(format!(
            "{id} is working now: wait for its turn to end (or cancel it) first."
        )));
    }
    Ok(session)
}

/// `_lembas/session/rewind`: the turn and every later one leave the conversation and the history;
/// files stay as they are.
pub(super) async fn rewind(engine: &Engine, params: RewindParams) -> Result<Rewound, RpcError> {
    let RewindParams {
        session_id: id,
        turn_id,
    } = params;
    let session = at_rest(engine, &id)?;
    let reverted = session.rewind(&turn_id);
    if reverted == 0 {
        return Err(RpcError::invalid_params(format!(
            "{id} has no turn {turn_id} to rewind to (a turn folded into a compaction stays in its summary)."
        )));
    }
    session.record(Record::Rewind {
        turn_id: turn_id.into_string(),
    });
    session.flush();
    Ok(Rewound { reverted })
}

/// `_lembas/session/compact`: the model summarizes the conversation, and the summary replaces it.
pub(super) async fn compact(engine: &Engine, params: SessionRef) -> Result<Compacted, RpcError> {
    let id = params.session_id;
    let session = at_rest(engine, &id)?;
    // Holding the gate keeps a prompt from starting while the summary is written.
    let Ok(_gate) = session.gate.try_lock() else {
        return Err(RpcError::invalid_params(format!(
            "{id} is working now: compact it when its turn has ended."
        )));
    };
    let summary = compact_now(engine, &session).await?;
    Ok(Compacted { summary })
}

/// The summary replaces the conversation (`_lembas/session/compact` and `/compact`, the session's
/// gate held).
pub(super) async fn compact_now(engine: &Engine, session: &Session) -> Result<String, RpcError> {
    super::compaction::compact(engine, session, super::compaction::Moment::AtRest)
        .await
        .map_err(|e| RpcError::with_reason(rpc::INTERNAL_ERROR, Reason::Model, e.to_string()))
}
