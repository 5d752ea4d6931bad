//! Compaction (docs/protocol.md "Context"): the model summarizes the conversation and the summary
//! replaces it in what the model is sent, with the plan kept verbatim after it and, in the middle
//! of work, the person's last request, so the task survives. Asked for (`/compact`,
//! `_lembas/session/compact`) or automatic: a step whose prompt took more than
//! `engine.compact_at_percent` of the model's context window makes the next step compact first.
//! The history, the record of turns, is not changed.

use super::Engine;
use super::model::{self, Streamed};
use super::prompt;
use super::session::{Message, Session};
use super::step_request::{ApiMessage, StepRequest};
use crate::decisions::decisions;
use crate::store::Record;
use crate::store::record::{Compact, KeptMessage};
use lembas_protocol::event::Event;

/// The model's context window: its `/v1/models` entry's `context_length` (or `context_window`),
/// else `engine.context_window_default`. Kept with the session for its model, read once.
pub async fn window(session: &Session, instance: &model::Instance) -> u64 {
    let model = session.state().model.clone();
    if let Some(size) = session.state().conversation.window_of(&model) {
        return size;
    }
    let size = instance
        .context_window(&model)
        .await
        .unwrap_or(decisions().engine.context_window_default);
    session.state().conversation.set_window(model, size);
    size
}

/// Whether a prompt of `used` tokens fills enough of `size` for the next step to compact first.
pub fn full(used: u64, size: u64) -> bool {
    used.saturating_mul(100) > size.saturating_mul(decisions().engine.compact_at_percent)
}

/// How a compaction came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// Asked for between turns: the work asked for is done, so no request is kept to answer again.
    AtRest,
    /// Before a step: the person's last request is what the step works on, kept verbatim.
    BeforeStep,
}

/// Summarizes, and the summary (with the plan, and before a step the person's last request)
/// replaces the conversation; recorded, and the `compacted` event sent. The summary is the answer.
pub async fn compact(
    engine: &Engine,
    session: &Session,
    moment: Moment,
) -> Result<String, model::ModelError> {
    let summary = summarize(engine, session).await?;
    let (plan, kept) = {
        let state = session.state();
        let kept = match moment {
            Moment::BeforeStep => last_request(state.conversation.messages()),
            Moment::AtRest => None,
        };
        (state.plan.clone(), kept)
    };
    let record = Record::Compact(Compact {
        summary: summary.clone(),
        plan: plan.clone(),
        kept: kept.as_ref().map(|m| KeptMessage {
            turn_id: m.turn_id.clone(),
            message: m.body.clone(),
        }),
    });
    {
        let mut state = session.state();
        state.conversation.compact(&summary, plan.as_ref(), kept);
    }
    session.record(record);
    session.flush();
    engine
        .event(
            &session.id,
            Event::Compacted {
                summary: summary.clone(),
            },
        )
        .await;
    Ok(summary)
}

/// The person's last request: the last message they wrote (not a tool's result, a job's note, or
/// an earlier summary).
fn last_request(messages: &[Message]) -> Option<Message> {
    messages
        .iter()
        .rev()
        .find(|m| m.body.typed_by_the_person().is_some())
        .cloned()
}

/// Asks the session's model for a summary of the conversation so far, with no tools, nothing
/// streamed to the client.
async fn summarize(engine: &Engine, session: &Session) -> Result<String, model::ModelError> {
    let instance = engine
        .instance()
        .await
        .map_err(|why| model::ModelError::Unreachable {
            model: session.state().model.clone(),
            why,
        })?;
    let body = {
        let state = session.state();
        let mut messages: Vec<ApiMessage> = state
            .conversation
            .messages()
            .iter()
            .map(|m| ApiMessage::of(&m.body, None))
            .collect();
        messages.push(ApiMessage::user(prompt::COMPACT_REQUEST));
        StepRequest::new(&state.model, messages, Vec::new(), state.effort)
    };
    let mut stream = instance.open(&body).await?;
    loop {
        if let Streamed::Done(output) = stream.next().await? {
            return Ok(output.text.trim().to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::message::ChatMessage;
    use serde_json::json;

    fn message(body: serde_json::Value) -> Message {
        Message {
            turn_id: Some("t".into()),
            body: ChatMessage::read(body).expect("a message"),
        }
    }

    #[test]
    fn the_last_request_is_the_persons() {
        let messages = [
            message(json!({ "role": "user", "content": "fix it" })),
            message(json!({ "role": "assistant", "content": "", "tool_calls": [] })),
            message(json!({ "role": "tool", "tool_call_id": "c", "content": "ok" })),
            message(json!({ "role": "user", "content": "[job job_1 ended] x", "machine": true })),
        ];
        assert_eq!(last_request(&messages).unwrap().body, ChatMessage::user("fix it"));
        let compacted = crate::engine::session::compacted("s", None, None);
        assert!(last_request(&compacted).is_none());
    }

    #[test]
    fn eighty_percent_is_not_yet_full() {
        assert!(!full(80, 100));
        assert!(full(81, 100));
        assert!(!full(0, 0));
        assert!(full(u64::MAX, 128_000));
    }
}
