//! `session/request_permission` (ACP's, device → client): an approval card for one tool call, and
//! the client's answer (docs/protocol.md "Approval cards").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::LembasMeta;
use crate::scheduled::ScheduledCard;
use crate::update::{ToolCallStatus, ToolKind};

/// `session/request_permission`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    pub session_id: String,
    pub tool_call: AskedCall,
    pub options: Vec<PermissionOption>,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<CardSays>,
}

/// The call asked about, as its `tool_call` update told it (`pending`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskedCall {
    pub tool_call_id: String,
    pub title: String,
    pub kind: ToolKind,
    pub status: ToolCallStatus,
    /// The call's arguments as the model wrote them (passed through).
    pub raw_input: Value,
}

/// ACP's `PermissionOption`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    pub option_id: String,
    pub kind: PermissionOptionKind,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

impl PermissionOption {
    /// The device's three: `once`, `session` and `deny`.
    pub fn offered() -> Vec<PermissionOption> {
        let option = |option_id: &str, kind, name: &str| PermissionOption {
            option_id: option_id.to_string(),
            kind,
            name: name.to_string(),
        };
        vec![
            option("once", PermissionOptionKind::AllowOnce, "Allow"),
            option(
                "session",
                PermissionOptionKind::AllowAlways,
                "Always allow in this session",
            ),
            option("deny", PermissionOptionKind::RejectOnce, "Deny"),
        ]
    }
}

/// `_meta.lembas` of a card: why the device asks, what "always" would cover, and a scheduled
/// run's card its run and how long it waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardSays {
    pub reason: String,
    pub always: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<ScheduledCard>,
}

/// `session/request_permission`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionAnswer {
    pub outcome: PermissionOutcome,
    #[serde(rename = "_meta", default)]
    pub meta: Option<AnswerMeta>,
}

/// An answer's `_meta`: other keys than `lembas` are a client's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerMeta {
    #[serde(default)]
    pub lembas: Option<AnswerSays>,
}

/// ACP's `RequestPermissionOutcome`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum PermissionOutcome {
    Selected { option_id: String },
    Cancelled,
}

/// `_meta.lembas` of an answer: the corrected command line (once only), or why it was denied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerSays {
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub feedback: Option<String>,
}
