//! The device's own cards besides approvals (docs/protocol.md): `_lembas/question` (capability
//! `ask`, the model's `ask_user`) and `_lembas/plan` (capability `plan`, `plan_submit`), sent to a
//! client that said protocol 2 or later, and the answers it gives. Anything but a well-formed
//! answer reads as dismissed.

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::{LembasMeta, Mode, SessionId};

/// `_meta.lembas` of a card: whether a person may also answer at a terminal, so the client does
/// not time it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patience {
    pub patient: bool,
}

/// `_lembas/question`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    pub session_id: SessionId,
    pub tool_call_id: String,
    /// Why the model asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub questions: Vec<Question>,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<Patience>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub header: String,
    pub question: String,
    pub multiple: bool,
    /// The recommended one first.
    pub options: Vec<QuestionOption>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionOption {
    /// Cut to the decided length on the card.
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recommended: bool,
}

/// `_lembas/question`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum QuestionAnswer {
    /// One answer per question, in order; one left out is as if skipped.
    Answered {
        answers: Vec<Answered>,
    },
    Dismissed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
// Named apart from the approvals' `Answered` in the window's types (one namespace there).
#[cfg_attr(feature = "ts", ts(rename = "QuestionAnswered"))]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Answered {
    Options {
        labels: Vec<String>,
    },
    Custom {
        text: String,
    },
    /// A question of the person's own, which the model answers before asking again.
    Back {
        text: String,
    },
    Skipped,
}

/// `_lembas/plan`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanRequest {
    pub session_id: SessionId,
    pub tool_call_id: String,
    /// The plan's file, relative to the project; empty when it could not be written.
    pub path: String,
    /// The plan as markdown.
    pub text: String,
    /// The session's structured plan (capability `plan_state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<Patience>,
}

/// `_lembas/plan`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum PlanAnswer {
    /// Go on in `mode` (lowered to `max_mode`).
    Approve {
        mode: Mode,
    },
    Revise {
        #[serde(default)]
        feedback: String,
    },
    Dismissed,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_read_as_the_spec_writes_them_and_nothing_else_does() {
        let read = |v: serde_json::Value| serde_json::from_value::<QuestionAnswer>(v).ok();
        assert_eq!(
            read(json!({ "outcome": "answered", "answers": [
                { "kind": "options", "labels": ["SQLite"] }, { "kind": "custom", "text": "none" },
                { "kind": "back", "text": "why?" }, { "kind": "skipped" }
            ] })),
            Some(QuestionAnswer::Answered {
                answers: vec![
                    Answered::Options {
                        labels: vec!["SQLite".into()]
                    },
                    Answered::Custom { text: "none".into() },
                    Answered::Back { text: "why?".into() },
                    Answered::Skipped,
                ]
            })
        );
        assert_eq!(
            read(json!({ "outcome": "dismissed" })),
            Some(QuestionAnswer::Dismissed)
        );
        for wrong in [
            json!({ "outcome": "answered", "answers": [{ "kind": "maybe" }] }),
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": [1] }] }),
            json!({ "outcome": "later" }),
            json!(null),
        ] {
            assert_eq!(read(wrong.clone()), None, "{wrong}");
        }
        let plan = |v: serde_json::Value| serde_json::from_value::<PlanAnswer>(v).ok();
        assert_eq!(
            plan(json!({ "outcome": "approve", "mode": "edit" })),
            Some(PlanAnswer::Approve { mode: Mode::Edit })
        );
        assert_eq!(
            plan(json!({ "outcome": "revise" })),
            Some(PlanAnswer::Revise {
                feedback: String::new()
            })
        );
        assert_eq!(plan(json!({ "outcome": "approve", "mode": "yolo" })), None);
    }
}
