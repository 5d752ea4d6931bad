//! Question and plan cards as an editor's forms (ACP's `elicitation/create`, form mode), for an
//! editor that renders them and does not speak `_lembas/*`: the same cards, drawn by the editor.
//! A question's options are a choice (several, for a question that takes several) with a text
//! field for an answer in the person's own words; a plan is approved into edit or manual mode,
//! revised with what to change, or dismissed. A declined or cancelled form, or an answer of
//! another shape, is the card dismissed; a choice the form did not offer is not taken.

use std::collections::BTreeMap;

use lembas_protocol::Mode;
use lembas_protocol::ask::{Answered, PlanAnswer, PlanRequest, QuestionAnswer, QuestionRequest};
use lembas_protocol::card::{CardAnswer, CardRequest};
use lembas_protocol::elicitation::{
    Choice, Choices, ElicitationAnswer, ElicitationRequest, FormField, FormMode, FormSchema, FormValue,
    ObjectType,
};

const DECISION: &str = "decision";
const FEEDBACK: &str = "feedback";
const APPROVE_EDIT: &str = "approve_edit";
const APPROVE_MANUAL: &str = "approve_manual";
const REVISE: &str = "revise";
const DISMISS: &str = "dismiss";

/// The form a question or plan card is asked as; `None` for an approval (ACP's own
/// `session/request_permission` asks those).
pub(super) fn form_of(card: &CardRequest) -> Option<ElicitationRequest> {
    match card {
        CardRequest::Permission(_) => None,
        CardRequest::Question(question) => Some(question_form(question)),
        CardRequest::Plan(plan) => Some(plan_form(plan)),
    }
}

/// The card's answer from the form's; `None` for an approval.
pub(super) fn answer_of(card: &CardRequest, result: serde_json::Value) -> Option<CardAnswer> {
    let answer = serde_json::from_value(result).unwrap_or(ElicitationAnswer::Cancel);
    let content = match answer {
        ElicitationAnswer::Accept { content } => Some(content.unwrap_or_default()),
        ElicitationAnswer::Decline | ElicitationAnswer::Cancel => None,
    };
    match card {
        CardRequest::Permission(_) => None,
        CardRequest::Question(question) => Some(CardAnswer::Question(match content {
            Some(content) => question_answer(question, &content),
            None => QuestionAnswer::Dismissed,
        })),
        CardRequest::Plan(_) => Some(CardAnswer::Plan(match content {
            Some(content) => plan_answer(&content),
            None => PlanAnswer::Dismissed,
        })),
    }
}

/// The fields of question `n`: its choice, and its own words (`q01`, `q01_other`).
fn question_field(n: usize) -> (String, String) {
    let choice = format!("q{:02}", n + 1);
    let other = format!("{choice}_other");
    (choice, other)
}

fn question_form(card: &QuestionRequest) -> ElicitationRequest {
    let mut properties = BTreeMap::new();
    for (n, question) in card.questions.iter().enumerate() {
        let (choice, other) = question_field(n);
        let choices: Vec<Choice> = question
            .options
            .iter()
            .map(|option| Choice {
                value: option.label.clone(),
                title: match option.recommended {
                    true => format!("{} (recommended)", option.label),
                    false => option.label.clone(),
                },
                description: option.description.clone(),
            })
            .collect();
        let title = match question.header.as_str() {
            "" => question.question.clone(),
            header => format!("{header}: {}", question.question),
        };
        let field = match question.multiple {
            true => FormField::Array {
                title,
                description: Some("Pick any that apply.".into()),
                items: Choices { any_of: choices },
            },
            false => FormField::String {
                title,
                description: None,
                one_of: choices,
            },
        };
        properties.insert(choice, field);
        properties.insert(
            other,
            FormField::String {
                title: "Or in your own words".into(),
                description: Some("Said instead of the choice above when filled in.".into()),
                one_of: Vec::new(),
            },
        );
    }
    let message = match card.why.as_deref() {
        Some(why) if !why.trim().is_empty() => format!("The agent asks: {why}"),
        _ => "The agent asks before it goes on.".to_string(),
    };
    ElicitationRequest {
        session_id: card.session_id.clone(),
        tool_call_id: card.tool_call_id.clone(),
        message,
        mode: FormMode::Form,
        requested_schema: FormSchema {
            kind: ObjectType::Object,
            properties,
            required: Vec::new(),
        },
    }
}

fn question_answer(card: &QuestionRequest, content: &BTreeMap<String, FormValue>) -> QuestionAnswer {
    let answers = card
        .questions
        .iter()
        .enumerate()
        .map(|(n, question)| {
            let (choice, other) = question_field(n);
            if let Some(FormValue::Text(text)) = content.get(&other)
                && !text.trim().is_empty()
            {
                return Answered::Custom {
                    text: text.trim().to_string(),
                };
            }
            let picked: Vec<String> = match content.get(&choice) {
                Some(FormValue::Text(label)) => vec![label.clone()],
                Some(FormValue::Texts(labels)) if question.multiple => labels.clone(),
                _ => Vec::new(),
            };
            // Only what the form offered: anything else the client sent is not an answer.
            let mut labels: Vec<String> = Vec::new();
            for label in picked {
                if question.options.iter().any(|o| o.label == label) && !labels.contains(&label) {
                    labels.push(label);
                }
            }
            match labels.is_empty() {
                true => Answered::Skipped,
                false => Answered::Options { labels },
            }
        })
        .collect();
    QuestionAnswer::Answered { answers }
}

fn plan_form(card: &PlanRequest) -> ElicitationRequest {
    let choice = |value: &str, title: &str, description: &str| Choice {
        value: value.to_string(),
        title: title.to_string(),
        description: Some(description.to_string()),
    };
    let mut properties = BTreeMap::new();
    properties.insert(
        DECISION.to_string(),
        FormField::String {
            title: "The plan".into(),
            description: None,
            one_of: vec![
                choice(
                    APPROVE_EDIT,
                    "Approve, edit mode",
                    "Go on, changing files in the project without asking.",
                ),
                choice(
                    APPROVE_MANUAL,
                    "Approve, manual mode",
                    "Go on, asking before each change.",
                ),
                choice(REVISE, "Revise", "Say what to change below."),
                choice(DISMISS, "Dismiss", "Stay in plan mode."),
            ],
        },
    );
    properties.insert(
        FEEDBACK.to_string(),
        FormField::String {
            title: "What to change".into(),
            description: Some("For Revise.".into()),
            one_of: Vec::new(),
        },
    );
    let file = match card.path.as_str() {
        "" => String::new(),
        path => format!(" (in {path})"),
    };
    ElicitationRequest {
        session_id: card.session_id.clone(),
        tool_call_id: card.tool_call_id.clone(),
        message: format!("The agent's plan{file}:\n\n{}", card.text),
        mode: FormMode::Form,
        requested_schema: FormSchema {
            kind: ObjectType::Object,
            properties,
            required: vec![DECISION.to_string()],
        },
    }
}

fn plan_answer(content: &BTreeMap<String, FormValue>) -> PlanAnswer {
    let text = |field: &str| match content.get(field) {
        Some(FormValue::Text(text)) => text.trim().to_string(),
        _ => String::new(),
    };
    match text(DECISION).as_str() {
        APPROVE_EDIT => PlanAnswer::Approve { mode: Mode::Edit },
        APPROVE_MANUAL => PlanAnswer::Approve { mode: Mode::Manual },
        REVISE => PlanAnswer::Revise {
            feedback: text(FEEDBACK),
        },
        _ => PlanAnswer::Dismissed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::LembasMeta;
    use lembas_protocol::ask::{Patience, Question, QuestionOption};
    use serde_json::json;

    fn question_card() -> CardRequest {
        let option = |label: &str| QuestionOption {
            label: label.into(),
            description: None,
            recommended: label == "SQLite",
        };
        let question = |multiple| Question {
            header: "Store".into(),
            question: "Which?".into(),
            multiple,
            options: vec![option("SQLite"), option("Postgres")],
        };
        CardRequest::Question(QuestionRequest {
            session_id: "ses_1".into(),
            tool_call_id: "call_ask".into(),
            why: Some("The schema depends on it.".into()),
            questions: vec![question(false), question(true), question(false)],
            meta: LembasMeta {
                lembas: Patience { patient: false },
            },
        })
    }

    #[test]
    fn a_question_form_is_answered_with_choices_own_words_or_nothing() {
        let card = question_card();
        let answer = answer_of(
            &card,
            json!({ "action": "accept", "content": {
                "q01": "SQLite", "q02": ["Postgres", "MySQL", "Postgres"], "q03_other": " neither "
            } }),
        );
        let expected = QuestionAnswer::Answered {
            answers: vec![
                Answered::Options {
                    labels: vec!["SQLite".into()],
                },
                // A choice the form did not offer is not taken, nor one twice.
                Answered::Options {
                    labels: vec!["Postgres".into()],
                },
                Answered::Custom {
                    text: "neither".into(),
                },
            ],
        };
        assert_eq!(answer, Some(CardAnswer::Question(expected)));
        let skipped = answer_of(
            &card,
            json!({ "action": "accept", "content": { "q01": 7, "q02": "MySQL" } }),
        );
        assert_eq!(
            skipped,
            Some(CardAnswer::Question(QuestionAnswer::Answered {
                answers: vec![Answered::Skipped, Answered::Skipped, Answered::Skipped]
            }))
        );
        for closed in [
            json!({ "action": "decline" }),
            json!({ "action": "cancel" }),
            json!({ "outcome": 1 }),
        ] {
            assert_eq!(
                answer_of(&card, closed),
                Some(CardAnswer::Question(QuestionAnswer::Dismissed))
            );
        }
    }

    #[test]
    fn a_plan_form_approves_revises_or_dismisses() {
        let card = CardRequest::Plan(PlanRequest {
            session_id: "ses_1".into(),
            tool_call_id: "call_plan".into(),
            path: ".agent/plans/p.md".into(),
            text: "# Plan".into(),
            plan: None,
            meta: LembasMeta {
                lembas: Patience { patient: false },
            },
        });
        let cases = [
            (
                json!({ "decision": "approve_manual" }),
                PlanAnswer::Approve { mode: Mode::Manual },
            ),
            (
                json!({ "decision": "approve_edit" }),
                PlanAnswer::Approve { mode: Mode::Edit },
            ),
            (
                json!({ "decision": "revise", "feedback": " smaller steps " }),
                PlanAnswer::Revise {
                    feedback: "smaller steps".into(),
                },
            ),
            (json!({ "decision": "approve_auto" }), PlanAnswer::Dismissed),
            (json!({}), PlanAnswer::Dismissed),
        ];
        for (content, expected) in cases {
            let answer = answer_of(&card, json!({ "action": "accept", "content": content }));
            assert_eq!(answer, Some(CardAnswer::Plan(expected)), "{content}");
        }
        let form = form_of(&card).unwrap();
        assert_eq!(form.requested_schema.required, ["decision"]);
        assert!(form.message.contains("(in .agent/plans/p.md)"));
    }
}
