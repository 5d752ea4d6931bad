//! What a shown file is (docs/protocol.md `_lembas/show`, the window's viewer): the `kind` the device gives
//! each file from its name, which says how a client draws it (HTML only in a sandboxed frame).

use serde::{Deserialize, Serialize};

use crate::SessionId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ShownKind {
    Markdown,
    Code,
    Text,
    Html,
}

/// `_lembas/show`'s params: a file of the session's folder, sent whole (the client cannot reach
/// the device's disk).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShowRequest {
    pub session_id: SessionId,
    pub tool_call_id: String,
    /// Relative to the session's working folder.
    pub path: String,
    pub kind: ShownKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The line to show first, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub text: String,
}

/// `_lembas/show`'s answer: shown, or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShowAnswer {
    pub shown: bool,
    #[serde(default)]
    pub reason: Option<String>,
}
