//! Compaction (docs/protocol.md "Context"): the model summarizes the conversation and the summary
//! replaces it in what the model is sent, with the plan kept verbatim after it and, in the middle
//! of work, the person's last request, so the task survives. Asked for (`/compact`,
//! `_lembas/session/compact`) or automatic: a step whose prompt took more than
//! `engine.compact_at_percent` of the model's context window makes the next step compact first.
//! The history, the record of turns, is not changed.

use super::Engine;
use super::model::{self, Streamed};
use super::prompt;
use super::session::Session;
use super::step_request::{ApiMessage, StepRequest};
use crate::decisions::EngineNumbers;
use crate::store::Record;
use lembas_protocol::event::Event;

/// The model's context window: its `/v1/models` entry's `context_length` (or `context_window`),
/// else `engine.context_window_default`. Kept with the session for its model, read once.
pub async fn window(session: &Session, instance: &model::Instance, numbers: &EngineNumbers) -> u64 {
    let (model, kept) = session.window_kept();
    if let Some(size) = kept {
        return size;
    }
    let size = instance
        .context_window(&model)
        .await
        .unwrap_or(numbers.context_window_default);
    session.set_window(model, size);
    size
}

/// Whether a prompt of `used` tokens fills enough of `size` for the next step to compact first.
pub fn full(used: u64, size: u64, at_percent: u64) -> bool {
    used.saturating_mul(100) > size.saturating_mul(at_percent)
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
    let compacted = session.compact(&summary, moment == Moment::BeforeStep);
    session.record(Record::Compact(compacted));
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

/// Asks the session's model for a summary of the conversation so far, with no tools, nothing
/// streamed to the client.
async fn summarize(engine: &Engine, session: &Session) -> Result<String, model::ModelError> {
    let instance = engine
        .instance()
        .await
        .map_err(|why| model::ModelError::Unreachable {
            model: session.settings().model,
            why,
        })?;
    let body = {
        let view = session.model_view(None);
        let mut messages = view.messages;
        messages.push(ApiMessage::user(prompt::COMPACT_REQUEST));
        StepRequest::new(&view.settings.model, messages, Vec::new(), view.settings.effort)
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
    fn full(used: u64, size: u64) -> bool {
        super::full(
            used,
            size,
            crate::decisions::Decisions::built_in().engine.compact_at_percent,
        )
    }

    #[test]
    fn eighty_percent_is_not_yet_full() {
        assert!(!full(80, 100));
        assert!(full(81, 100));
        assert!(!full(0, 0));
        assert!(full(u64::MAX, 128_000));
    }
}
