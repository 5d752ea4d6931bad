//! `ask_user`'s questions as the card shows them (cut to the decisions' numbers, the recommended
//! option first, long labels shortened), and the client's answer as the model reads it.

use lembas_protocol::ask::{Answered, Question, QuestionAnswer, QuestionOption};
use serde_json::{Map, Value};

use crate::decisions;
use crate::tools::{ToolDefinition, ToolName};
use schemars::JsonSchema;

/// The questions as asked: the card's `questions`, the whole labels behind the card's, and what
/// was cut, for the model.
#[derive(Debug)]
pub struct Asked {
    pub card: Vec<Question>,
    questions: Vec<Asking>,
    pub notes: Vec<String>,
}

#[derive(Debug)]
struct Asking {
    header: String,
    question: String,
    /// (label on the card, whole label), in the card's order.
    labels: Vec<(String, String)>,
}

/// What the model is told of `ask_user`.
pub fn definition(question: &decisions::Question) -> ToolDefinition {
    ToolDefinition::of::<AskUserArguments>(
        ToolName::AskUser,
        &format!(
            "Ask the person questions when you cannot go on without their choice. At most {} \
             questions of at most {} options each; the person may also answer in their own \
             words, skip a question or dismiss the card. Mark the option you would choose \
             `recommended`.",
            question.max_questions, question.max_options
        ),
    )
    .with("/properties/questions/maxItems", question.max_questions)
    .with(
        "/properties/questions/items/properties/options/maxItems",
        question.max_options,
    )
    .with(
        "/properties/questions/items/properties/options/items/properties/label/description",
        format!(
            "The choice, short (at most {} characters are shown).",
            question.label_chars
        ),
    )
}

/// `ask_user`'s arguments as the model is told of them. [`read`] takes this shape leniently (a
/// question past the most asked is left out and said, a long label shortened), so it reads the
/// JSON itself rather than refusing what a struct would.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct AskUserArguments {
    questions: Vec<AskedQuestion>,
    /// Why you ask, in a sentence.
    #[serde(default)]
    #[schemars(with = "String")]
    why: Option<String>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct AskedQuestion {
    /// A word or two naming the question.
    header: String,
    /// The question itself.
    question: String,
    /// More than one option may be chosen (default false).
    #[serde(default)]
    #[schemars(with = "bool")]
    multiple: Option<bool>,
    options: Vec<AskedOption>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct AskedOption {
    /// The choice, short.
    label: String,
    /// What choosing it means.
    #[serde(default)]
    #[schemars(with = "String")]
    description: Option<String>,
    /// The option you recommend.
    #[serde(default)]
    #[schemars(with = "bool")]
    recommended: Option<bool>,
}

const SHAPE: &str = "ask_user needs `questions`: a list of { header, question, multiple?, options: [{ label, description?, recommended? }] }.";

/// Reads the model's arguments; the error is a sentence for the model.
pub fn read(args: &Value, numbers: &decisions::Question) -> Result<Asked, String> {
    let all = args
        .get("questions")
        .and_then(Value::as_array)
        .filter(|q| !q.is_empty())
        .ok_or(SHAPE)?;
    let mut notes = Vec::new();
    if all.len() > numbers.max_questions {
        let left: Vec<String> = all[numbers.max_questions..]
            .iter()
            .map(|q| quoted(text_of(q, "question")))
            .collect();
        notes.push(format!(
            "Only the first {} of your {} questions were asked; these were left out: {}.",
            numbers.max_questions,
            all.len(),
            left.join(", ")
        ));
    }
    let mut card = Vec::new();
    let mut questions = Vec::new();
    for q in all.iter().take(numbers.max_questions) {
        let question = text_of(q, "question");
        if question.trim().is_empty() {
            return Err(SHAPE.to_string());
        }
        let header = text_of(q, "header");
        let mut options: Vec<&Map<String, Value>> = q
            .get("options")
            .and_then(Value::as_array)
            .map(|o| o.iter().filter_map(Value::as_object).collect())
            .unwrap_or_default();
        options.retain(|o| {
            o.get("label")
                .and_then(Value::as_str)
                .is_some_and(|l| !l.trim().is_empty())
        });
        // The recommended option first (a stable sort keeps the model's order otherwise), so a cut
        // never drops it.
        options.sort_by_key(|o| !o.get("recommended").and_then(Value::as_bool).unwrap_or(false));
        if options.len() > numbers.max_options {
            let left: Vec<String> = options[numbers.max_options..]
                .iter()
                .map(|o| quoted(o.get("label").and_then(Value::as_str).unwrap_or_default()))
                .collect();
            notes.push(format!(
                "The question {} had {} options; only {} were shown, and these were left out: {}.",
                quoted(question),
                options.len(),
                numbers.max_options,
                left.join(", ")
            ));
            options.truncate(numbers.max_options);
        }
        let mut labels = Vec::new();
        let mut shown = Vec::new();
        for o in options {
            let whole = o.get("label").and_then(Value::as_str).unwrap_or_default();
            let on_card = cut_label(whole, numbers.label_chars);
            shown.push(QuestionOption {
                label: on_card.clone(),
                description: o.get("description").and_then(Value::as_str).map(str::to_string),
                recommended: o.get("recommended").and_then(Value::as_bool) == Some(true),
            });
            labels.push((on_card, whole.to_string()));
        }
        card.push(Question {
            header: header.to_string(),
            question: question.to_string(),
            multiple: q.get("multiple").and_then(Value::as_bool).unwrap_or(false),
            options: shown,
        });
        questions.push(Asking {
            header: header.to_string(),
            question: question.to_string(),
            labels,
        });
    }
    Ok(Asked {
        card,
        questions,
        notes,
    })
}

fn text_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

/// At most `max` characters, the last an ellipsis when cut (LLeMbas shows no more).
fn cut_label(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        return label.to_string();
    }
    let mut cut: String = label.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// What the model reads of the client's result; `None` when it reads as dismissed (docs/protocol.md:
/// anything but a well-formed `answered` is).
pub fn answered(asked: &Asked, answer: QuestionAnswer) -> Option<String> {
    let QuestionAnswer::Answered { answers } = answer else {
        return None;
    };
    let mut lines = vec!["The person answered:".to_string()];
    for (i, q) in asked.questions.iter().enumerate() {
        // A question the client left out of its answers has no answer, as if skipped.
        let said = match answers.get(i).unwrap_or(&Answered::Skipped) {
            Answered::Options { labels } if labels.is_empty() => "no option chosen".to_string(),
            Answered::Options { labels } => labels
                .iter()
                .map(|l| quoted(&q.whole_label(l)))
                .collect::<Vec<_>>()
                .join(", "),
            Answered::Custom { text } => format!("in their own words: {}", quoted(text)),
            Answered::Back { text } => format!(
                "they asked you a question instead: {}. Answer it before you ask again.",
                quoted(text)
            ),
            Answered::Skipped => "no answer (they skipped it)".to_string(),
        };
        let header = if q.header.is_empty() {
            String::new()
        } else {
            format!("[{}] ", q.header)
        };
        lines.push(format!("- {header}{} → {said}", q.question));
    }
    Some(lines.join("\n"))
}

impl Asking {
    /// The whole label behind one the card showed cut; any other is given as the client sent it.
    fn whole_label(&self, label: &str) -> String {
        self.labels
            .iter()
            .find(|(card, whole)| card == label || whole == label)
            .map(|(_, whole)| whole.clone())
            .unwrap_or_else(|| label.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::LembasMeta;
    use lembas_protocol::ask::{Patience, QuestionRequest};
    use lembas_protocol::card::{CardAnswer, CardRequest};
    use serde_json::json;

    /// What the model reads of a client's result to the card these questions make.
    fn reply(asked: &Asked, result: Value) -> Option<String> {
        let card = CardRequest::Question(QuestionRequest {
            session_id: "ses_1".into(),
            tool_call_id: "call_1".into(),
            why: None,
            questions: asked.card.clone(),
            meta: LembasMeta {
                lembas: Patience { patient: false },
            },
        });
        match card.answer_of(result) {
            Some(CardAnswer::Question(answer)) => answered(asked, answer),
            other => panic!("a question card answered {other:?}"),
        }
    }

    /// The model's arguments read with the built-in numbers.
    fn read(args: &Value) -> Result<Asked, String> {
        super::read(args, &crate::decisions::Decisions::built_in().question)
    }

    fn options(n: usize) -> Vec<Value> {
        (1..=n).map(|i| json!({ "label": format!("opt{i}") })).collect()
    }

    #[test]
    fn seven_options_are_cut_to_six_and_the_model_told() {
        let asked = read(&json!({ "questions": [
            { "header": "H", "question": "Which?", "options": options(7) }
        ] }))
        .unwrap();
        assert_eq!(asked.card[0].options.len(), 6);
        assert_eq!(asked.notes.len(), 1);
        assert!(asked.notes[0].contains("\"opt7\""), "{:?}", asked.notes);
    }

    #[test]
    fn five_questions_are_cut_to_four() {
        let q = |i: usize| json!({ "header": "H", "question": format!("q{i}?"), "options": options(2) });
        let asked = read(&json!({ "questions": (1..=5).map(q).collect::<Vec<_>>() })).unwrap();
        assert_eq!(asked.card.len(), 4);
        assert!(asked.notes[0].contains("\"q5?\""), "{:?}", asked.notes);
    }

    #[test]
    fn the_recommended_option_comes_first_and_survives_the_cut() {
        let mut opts = options(7);
        opts[6]["recommended"] = json!(true);
        let asked = read(&json!({ "questions": [{ "header": "H", "question": "Which?", "options": opts }] }))
            .unwrap();
        assert_eq!(
            json!(asked.card[0].options[0]),
            json!({ "label": "opt7", "recommended": true })
        );
        assert_eq!(asked.card[0].options[1].label, "opt1");
        assert!(asked.notes[0].contains("\"opt6\""), "{:?}", asked.notes);
    }

    #[test]
    fn a_long_label_is_cut_on_the_card_and_given_whole() {
        let long = "x".repeat(300);
        let asked = read(&json!({ "questions": [
            { "header": "H", "question": "Which?", "options": [{ "label": long }, { "label": "short" }] }
        ] }))
        .unwrap();
        let on_card = asked.card[0].options[0].label.clone();
        assert_eq!(on_card.chars().count(), 240);
        let text = reply(
            &asked,
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": [on_card] }] }),
        )
        .unwrap();
        assert!(text.contains(&long), "{text}");
    }

    #[test]
    fn every_answer_kind_reads() {
        let q = |i: usize| json!({ "header": format!("H{i}"), "question": format!("q{i}?"), "options": options(2) });
        let asked = read(&json!({ "questions": (1..=4).map(q).collect::<Vec<_>>() })).unwrap();
        let text = reply(
            &asked,
            json!({ "outcome": "answered", "answers": [
                { "kind": "options", "labels": ["opt1", "opt2"] },
                { "kind": "custom", "text": "mine" },
                { "kind": "back", "text": "why?" },
                { "kind": "skipped" },
            ] }),
        )
        .unwrap();
        assert!(text.contains("[H1] q1? → \"opt1\", \"opt2\""), "{text}");
        assert!(text.contains("own words: \"mine\""), "{text}");
        assert!(text.contains("instead: \"why?\""), "{text}");
        assert!(text.contains("[H4] q4? → no answer"), "{text}");
    }

    #[test]
    fn anything_else_is_dismissed() {
        let asked =
            read(&json!({ "questions": [{ "header": "H", "question": "q?", "options": options(2) }] }))
                .unwrap();
        for result in [
            json!({ "outcome": "dismissed" }),
            json!({ "outcome": "answered" }),
            json!({ "outcome": "answered", "answers": [{ "kind": "what" }] }),
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": [1] }] }),
            json!("nonsense"),
        ] {
            assert_eq!(reply(&asked, result.clone()), None, "{result}");
        }
    }

    #[test]
    fn bad_questions_are_the_models_error() {
        for args in [
            json!({}),
            json!({ "questions": [] }),
            json!({ "questions": [{ "header": "H" }] }),
        ] {
            assert!(read(&args).is_err(), "{args}");
        }
    }
}
