//! `session/request_permission` (ACP's, device → client): an approval card for one tool call, and
//! the client's answer (docs/protocol.md "Approval cards").

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::scheduled::ScheduledCard;
use crate::update::{ToolCallContent, ToolCallStatus, ToolKind};
use crate::{LembasMeta, SessionId};

/// `session/request_permission`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRequest {
    pub session_id: SessionId,
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
    /// What the call would do, for a client that draws it: a change as ACP's `diff`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ToolCallContent>,
}

/// ACP's `PermissionOption`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    pub option_id: ApprovalOption,
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

/// What a person answers to an approval card: one of the device's three options, by its
/// `optionId` (ENGINE.md "Approvals"). The same answer wherever it is given (the client, the
/// desktop's notification and window, `lembas approvals`) and wherever it is kept (the session
/// file, the timeline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOption {
    /// Allowed once.
    Once,
    /// Allowed, and what "always" covers on the card allowed for the rest of the session.
    Session,
    Deny,
}

impl ApprovalOption {
    pub const ALL: [ApprovalOption; 3] = [
        ApprovalOption::Once,
        ApprovalOption::Session,
        ApprovalOption::Deny,
    ];

    /// Its `optionId`.
    pub fn option_id(self) -> &'static str {
        match self {
            ApprovalOption::Once => "once",
            ApprovalOption::Session => "session",
            ApprovalOption::Deny => "deny",
        }
    }

    /// The option a client selected; `None` for an id the device never offers.
    pub fn of_id(option_id: &str) -> Option<ApprovalOption> {
        ApprovalOption::ALL
            .into_iter()
            .find(|o| o.option_id() == option_id)
    }

    /// In words, as the activity log and `_lembas/permission/settled` say it.
    pub fn said(self) -> &'static str {
        match self {
            ApprovalOption::Once => "allowed once",
            ApprovalOption::Session => "allowed in this session",
            ApprovalOption::Deny => "denied",
        }
    }
}

impl PermissionOption {
    /// The device's three: `once`, `session` and `deny`.
    pub fn offered() -> Vec<PermissionOption> {
        ApprovalOption::ALL
            .into_iter()
            .map(|option_id| {
                let (kind, name) = match option_id {
                    ApprovalOption::Once => (PermissionOptionKind::AllowOnce, "Allow"),
                    ApprovalOption::Session => {
                        (PermissionOptionKind::AllowAlways, "Always allow in this session")
                    }
                    ApprovalOption::Deny => (PermissionOptionKind::RejectOnce, "Deny"),
                };
                PermissionOption {
                    option_id,
                    kind,
                    name: name.to_string(),
                }
            })
            .collect()
    }
}

/// `_meta.lembas` of a card: why the device asks, the model's purpose, what "always" would cover,
/// and a scheduled run's card its run and how long it waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardSays {
    pub reason: String,
    /// The model's own words for the call (the card's title is the device's), when it gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    pub always: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<ScheduledCard>,
    /// A person may also answer at the terminal (a shared chat): the client does not time it out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub patient: bool,
}

/// `session/request_permission`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PermissionAnswer {
    pub outcome: PermissionOutcome,
    #[serde(rename = "_meta", default)]
    pub meta: Option<AnswerMeta>,
}

/// An answer's `_meta`: other keys than `lembas` are a client's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnswerMeta {
    #[serde(default)]
    pub lembas: Option<AnswerSays>,
}

/// ACP's `RequestPermissionOutcome`. The id stays a string: a client may select one the device
/// never offered, which is read as a denial ([`ApprovalOption::of_id`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "outcome", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum PermissionOutcome {
    Selected { option_id: String },
    Cancelled,
}

/// `_meta.lembas` of an answer: the corrected command line (once only), or why it was denied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AnswerSays {
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub feedback: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_is_its_id_on_the_wire() {
        for option in ApprovalOption::ALL {
            let wire = serde_json::to_value(option).unwrap();
            assert_eq!(wire, option.option_id());
            assert_eq!(serde_json::from_value::<ApprovalOption>(wire).unwrap(), option);
            assert_eq!(ApprovalOption::of_id(option.option_id()), Some(option));
        }
        assert_eq!(ApprovalOption::of_id("allow_once"), None);
    }

    #[test]
    fn the_offered_options_are_the_specs_three() {
        let offered = serde_json::to_value(PermissionOption::offered()).unwrap();
        assert_eq!(
            offered,
            serde_json::json!([
                { "optionId": "once", "kind": "allow_once", "name": "Allow" },
                { "optionId": "session", "kind": "allow_always", "name": "Always allow in this session" },
                { "optionId": "deny", "kind": "reject_once", "name": "Deny" },
            ])
        );
    }
}
