//! What the control socket's calls carry, where both ends use one type: the server reads it, the
//! client ([`super::Client`]) writes it.

use serde::{Deserialize, Serialize};

use super::Verdict;
use crate::engine::grants::Grant;

/// `approvals/answer`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct AnswerParams {
    /// The card's tool call id.
    pub id: String,
    pub answer: Verdict,
}

/// `approvals/answer`'s answer: the card answered, and its chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answered {
    pub id: String,
    pub session_id: String,
    pub answer: Verdict,
}

/// `activity`'s params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ActivityParams {
    /// How many of the newest lines (50 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub n: Option<usize>,
    /// Each line as a sentence (`{ at_ms, kind, text }`) rather than as logged; at most 1,000.
    #[serde(default)]
    pub described: bool,
}

/// The streams a subscriber asks for besides status and events (`subscribe`'s params); unknown
/// fields are ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Streams {
    /// Every session's updates (the window's timelines and chats).
    pub sessions: bool,
    /// The remote terminals' output.
    pub terminals: bool,
}

/// The `sessions/*` calls that name one chat (`sessions/timeline`, `sessions/stop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct SessionParams {
    pub session_id: String,
}

/// `sessions/undo`'s params: put back the files of this turn and every later one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct UndoParams {
    pub session_id: String,
    pub turn_id: String,
}

/// `sessions/revoke`'s params: an "Allow for this chat" taken back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct RevokeParams {
    pub session_id: String,
    pub grant: Grant,
}

/// The `terminals/*` calls that name one terminal (`terminals/replay`, `terminals/hang_up`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TerminalParams {
    pub id: String,
}

/// `terminals/write`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TerminalWriteParams {
    pub id: String,
    /// What was typed, as text (the window's xterm.js gives its keys as a string).
    pub data: String,
}

/// `shown/list`'s params: one session's shown files, or every session's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ShownListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// `shown/read`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ShownReadParams {
    pub id: String,
}
