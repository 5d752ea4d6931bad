//! `session/prompt` (docs/protocol.md "Turn ids"): the person's blocks, the client's turn id and
//! Context in `_meta.lembas`, and the answer once the turn has ended: why, and what else the turn
//! has to say (the steers it did not take in, a command's outcome, a scheduled run's).

use crate::context::LembasAsks;
use serde::{Deserialize, Serialize};

use crate::content::ContentBlock;
use crate::scheduled::RunOutcome;
use crate::{LembasMeta, Mode, SessionId, TurnId};

/// `session/prompt`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    pub session_id: SessionId,
    pub prompt: Vec<ContentBlock>,
    #[serde(rename = "_meta", default)]
    pub meta: Option<PromptMeta>,
}

/// `session/prompt`'s `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PromptMeta {
    /// The Context, `turnId` (the client's id of the turn) and `scheduled` for a scheduled run.
    #[serde(default)]
    pub lembas: Option<LembasAsks>,
}

/// `session/prompt`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptAnswer {
    pub stop_reason: StopReason,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<TurnEnd>,
}

impl PromptAnswer {
    /// A turn that ended as `stop_reason` says, with nothing more to tell.
    pub fn ended(stop_reason: StopReason, turn_id: &str) -> PromptAnswer {
        PromptAnswer {
            stop_reason,
            meta: LembasMeta {
                lembas: TurnEnd {
                    turn_id: turn_id.into(),
                    ..TurnEnd::default()
                },
            },
        }
    }

    /// `_meta.lembas`.
    pub fn end(&mut self) -> &mut TurnEnd {
        &mut self.meta.lembas
    }
}

/// ACP's `StopReason`: why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
}

impl StopReason {
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `_meta.lembas` of `session/prompt`'s answer: the turn's id, and what else the turn has to say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    #[serde(default)]
    pub turn_id: TurnId,
    /// Steers the turn ended before taking in: send them next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsent: Vec<String>,
    /// A scheduled run's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<RunOutcome>,
    /// The prompt was this command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `/compact`'s summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// `/undo`'s: what was put back, or null when there was nothing to undo.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub undone: Option<Option<Undone>>,
    /// `/plan` without a task: the mode now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// A command that had nothing to do, said instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `/undo`'s turn: its prompt, and the files put back as they were before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Undone {
    pub prompt: String,
    pub files: Vec<String>,
}

/// A field that is there, null or not: `Some` of what it holds (absent is `None` by `default`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}
