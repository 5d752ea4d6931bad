//! A card the device puts to a person, as the request that shows it: an approval
//! (`session/request_permission`), a question (`_lembas/question`) or a plan (`_lembas/plan`),
//! and the answer each takes back.

use serde::{Deserialize, Serialize};

use crate::LinkMethod;
use crate::ask::{PlanAnswer, PlanRequest, QuestionAnswer, QuestionRequest};
use crate::permission::PermissionRequest;

/// The request that shows a card; its params are the variant's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CardRequest {
    Permission(PermissionRequest),
    Question(QuestionRequest),
    Plan(PlanRequest),
}

impl CardRequest {
    pub fn method(&self) -> LinkMethod {
        match self {
            CardRequest::Permission(_) => LinkMethod::RequestPermission,
            CardRequest::Question(_) => LinkMethod::Question,
            CardRequest::Plan(_) => LinkMethod::Plan,
        }
    }

    pub fn session_id(&self) -> &str {
        match self {
            CardRequest::Permission(card) => &card.session_id,
            CardRequest::Question(card) => &card.session_id,
            CardRequest::Plan(card) => &card.session_id,
        }
    }

    pub fn tool_call_id(&self) -> &str {
        match self {
            CardRequest::Permission(card) => &card.tool_call.tool_call_id,
            CardRequest::Question(card) => &card.tool_call_id,
            CardRequest::Plan(card) => &card.tool_call_id,
        }
    }

    /// The card as the link gets it for a chat a terminal shares (`patient`: the person may
    /// answer at the terminal too, so the client does not time it out).
    pub fn patient(mut self, patient: bool) -> CardRequest {
        match &mut self {
            CardRequest::Permission(card) => card.meta.lembas.patient = patient,
            CardRequest::Question(card) => card.meta.lembas.patient = patient,
            CardRequest::Plan(card) => card.meta.lembas.patient = patient,
        }
        self
    }

    /// The client's result read as this card's answer. A question or plan answer that is not
    /// well-formed reads as dismissed (docs/protocol.md); an approval's is `None`, which the
    /// device takes as a denial: nothing runs on an answer it cannot read.
    pub fn answer_of(&self, result: serde_json::Value) -> Option<CardAnswer> {
        Some(match self {
            CardRequest::Permission(_) => CardAnswer::Permission(serde_json::from_value(result).ok()?),
            CardRequest::Question(_) => {
                CardAnswer::Question(serde_json::from_value(result).unwrap_or(QuestionAnswer::Dismissed))
            }
            CardRequest::Plan(_) => {
                CardAnswer::Plan(serde_json::from_value(result).unwrap_or(PlanAnswer::Dismissed))
            }
        })
    }
}

/// A card's answer from the client. Written as the link writes it; read untagged, so a
/// `{ "outcome": "dismissed" }` reads as a question's: [`CardRequest::answer_of`] reads it again
/// as the answer of the card it is for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum CardAnswer {
    Permission(crate::permission::PermissionAnswer),
    Question(QuestionAnswer),
    Plan(PlanAnswer),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_card_reads_back_as_its_own_kind_and_answers_as_its_own() {
        let plan: CardRequest = serde_json::from_value(json!({
            "sessionId": "ses_1", "toolCallId": "call_1", "path": ".agent/plans/p.md", "text": "1. Tidy",
            "_meta": { "lembas": { "patient": false } }
        }))
        .unwrap();
        assert_eq!(plan.method(), LinkMethod::Plan);
        assert_eq!((plan.session_id(), plan.tool_call_id()), ("ses_1", "call_1"));
        let question: CardRequest = serde_json::from_value(json!({
            "sessionId": "ses_1", "toolCallId": "call_2",
            "questions": [{ "header": "h", "question": "Which?", "multiple": false, "options": [] }],
            "_meta": { "lembas": { "patient": false } }
        }))
        .unwrap();
        assert_eq!(question.method(), LinkMethod::Question);
        assert_eq!(
            question.answer_of(json!({ "outcome": "answered" })),
            Some(CardAnswer::Question(QuestionAnswer::Dismissed)),
            "an answer that is not well-formed is dismissed"
        );
        assert_eq!(
            plan.answer_of(json!({ "outcome": "approve", "mode": "yolo" })),
            Some(CardAnswer::Plan(PlanAnswer::Dismissed))
        );
        let approval: CardRequest = serde_json::from_value(json!({
            "sessionId": "ses_1",
            "toolCall": { "toolCallId": "call_3", "title": "List", "kind": "execute", "status": "pending", "rawInput": { "command": "ls" } },
            "options": [], "_meta": { "lembas": { "reason": "r", "always": "a" } }
        }))
        .unwrap();
        assert_eq!(
            (approval.method(), approval.tool_call_id()),
            (LinkMethod::RequestPermission, "call_3")
        );
        assert_eq!(approval.answer_of(json!("nonsense")), None);
    }
}
