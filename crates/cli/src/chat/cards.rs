//! The cards a turn puts to the person at the terminal: an approval (the device's headline, its
//! reason and the keys d · o · a, as the window words them), a question (options by number, or an
//! answer typed), a plan (approve, or revise with feedback). Each reads keys and gives back the
//! answer the link's own shapes carry ([`CardAnswer`]).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_protocol::Mode;
use lembas_protocol::ask::{Answered, PlanAnswer, Question, QuestionAnswer};
use lembas_protocol::card::{CardAnswer, CardRequest};
use lembas_protocol::permission::{ApprovalOption, PermissionAnswer, PermissionOutcome};

use super::input::InputLine;
use super::screen::{detail_of, diff_of};

/// A card takes no key this soon after it appeared: a key meant for the input line, pressed as
/// the card arrived, must not answer it.
pub const SETTLE: Duration = Duration::from_millis(300);

#[derive(Debug, Clone)]
pub struct Card {
    pub tool_call_id: String,
    pub kind: CardKind,
    pub shown_at: Instant,
}

#[derive(Debug, Clone)]
pub enum CardKind {
    Approval {
        /// The device's words for the call (`toolCall.title`), never the model's.
        headline: String,
        reason: String,
        /// The model's own words, when it gave them.
        purpose: Option<String>,
        /// What "Allow for this chat" covers.
        always: String,
        /// The command or the change.
        detail: Vec<String>,
    },
    Question {
        why: Option<String>,
        questions: Vec<Question>,
        answers: Vec<Answered>,
        /// The options ticked on a question that takes several.
        ticked: Vec<bool>,
        /// An answer typed instead of an option.
        typed: InputLine,
    },
    Plan {
        path: String,
        text: String,
        /// Feedback being typed after `r`.
        revising: Option<InputLine>,
    },
}

/// What a key did to a card.
#[derive(Debug, Clone, PartialEq)]
pub enum Keyed {
    /// Not a key of this card.
    Ignored,
    /// Taken (typing, ticking): the card waits on.
    Taken,
    Answer(CardAnswer),
}

impl Card {
    pub fn of(request: &CardRequest, now: Instant) -> Card {
        let kind = match request {
            CardRequest::Permission(card) => {
                let mut detail = detail_of(&card.tool_call.raw_input);
                for content in &card.tool_call.content {
                    detail.extend(diff_of(content));
                }
                CardKind::Approval {
                    headline: card.tool_call.title.clone(),
                    reason: card.meta.lembas.reason.clone(),
                    purpose: card.meta.lembas.purpose.clone(),
                    always: card.meta.lembas.always.clone(),
                    detail,
                }
            }
            CardRequest::Question(card) => CardKind::Question {
                why: card.why.clone(),
                ticked: vec![false; card.questions.first().map_or(0, |q| q.options.len())],
                questions: card.questions.clone(),
                answers: Vec::new(),
                typed: InputLine::default(),
            },
            CardRequest::Plan(card) => CardKind::Plan {
                path: card.path.clone(),
                text: card.text.clone(),
                revising: None,
            },
        };
        Card {
            tool_call_id: request.tool_call_id().to_string(),
            kind,
            shown_at: now,
        }
    }

    /// The question being asked now, on a question card.
    pub fn question(&self) -> Option<&Question> {
        match &self.kind {
            CardKind::Question {
                questions, answers, ..
            } => questions.get(answers.len()),
            _ => None,
        }
    }

    /// A key pressed while the card has the keys, at `now`.
    pub fn key(&mut self, key: KeyEvent, now: Instant) -> Keyed {
        if now.duration_since(self.shown_at) < SETTLE {
            return Keyed::Ignored;
        }
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match &mut self.kind {
            CardKind::Approval { .. } => {
                let option = match key.code {
                    KeyCode::Char('d') if plain => ApprovalOption::Deny,
                    KeyCode::Char('a') if plain => ApprovalOption::Once,
                    KeyCode::Char('A') if plain => ApprovalOption::Session,
                    _ => return Keyed::Ignored,
                };
                Keyed::Answer(CardAnswer::Permission(PermissionAnswer {
                    outcome: PermissionOutcome::Selected {
                        option_id: option.option_id().to_string(),
                    },
                    meta: None,
                }))
            }
            CardKind::Plan { revising, .. } => match (revising, key.code) {
                (None, KeyCode::Char('a')) if plain => {
                    Keyed::Answer(CardAnswer::Plan(PlanAnswer::Approve { mode: Mode::Edit }))
                }
                (revising @ None, KeyCode::Char('r')) if plain => {
                    *revising = Some(InputLine::default());
                    Keyed::Taken
                }
                (Some(feedback), KeyCode::Enter) => Keyed::Answer(CardAnswer::Plan(PlanAnswer::Revise {
                    feedback: feedback.text().to_string(),
                })),
                (Some(feedback), code) => edit(feedback, code, plain),
                (None, _) => Keyed::Ignored,
            },
            CardKind::Question {
                questions,
                answers,
                ticked,
                typed,
                ..
            } => {
                let Some(question) = questions.get(answers.len()) else {
                    return Keyed::Ignored;
                };
                let picked = match key.code {
                    KeyCode::Char(c) if plain && typed.is_empty() && c.is_ascii_digit() => {
                        let n = c.to_digit(10).unwrap_or(0) as usize;
                        match n
                            .checked_sub(1)
                            .and_then(|i| question.options.get(i).map(|o| (i, o)))
                        {
                            Some((i, _)) if question.multiple => {
                                if let Some(tick) = ticked.get_mut(i) {
                                    *tick = !*tick;
                                }
                                return Keyed::Taken;
                            }
                            Some((_, option)) => Answered::Options {
                                labels: vec![option.label.clone()],
                            },
                            None => return Keyed::Ignored,
                        }
                    }
                    KeyCode::Enter if !typed.is_empty() => Answered::Custom { text: typed.take() },
                    KeyCode::Enter if ticked.iter().any(|t| *t) => Answered::Options {
                        labels: question
                            .options
                            .iter()
                            .zip(ticked.iter())
                            .filter(|(_, t)| **t)
                            .map(|(o, _)| o.label.clone())
                            .collect(),
                    },
                    KeyCode::Enter => Answered::Skipped,
                    code => return edit(typed, code, plain),
                };
                answers.push(picked);
                match questions.get(answers.len()) {
                    Some(next) => {
                        *ticked = vec![false; next.options.len()];
                        Keyed::Taken
                    }
                    None => Keyed::Answer(CardAnswer::Question(QuestionAnswer::Answered {
                        answers: std::mem::take(answers),
                    })),
                }
            }
        }
    }

    /// Pasted text, on a card that takes typing.
    pub fn paste(&mut self, text: &str) -> bool {
        match &mut self.kind {
            CardKind::Question { typed, .. } => typed.paste(text),
            CardKind::Plan {
                revising: Some(feedback),
                ..
            } => feedback.paste(text),
            _ => return false,
        }
        true
    }

    /// The keys the card takes, as its last line says them.
    pub fn keys(&self) -> String {
        match &self.kind {
            CardKind::Approval { .. } => "d: Deny · a: Allow once · A: Allow for this chat".to_string(),
            CardKind::Plan { revising: None, .. } => "a: Approve · r: Revise with feedback".to_string(),
            CardKind::Plan { .. } => "Type your feedback · Enter: send it".to_string(),
            CardKind::Question { .. } => match self.question() {
                Some(q) if q.multiple => {
                    "1-9: tick · Enter: send the ticked · or type an answer and Enter".to_string()
                }
                _ => "1-9: pick · or type an answer and Enter · Enter alone: skip".to_string(),
            },
        }
    }
}

/// A key typed into a card's own line.
fn edit(line: &mut InputLine, code: KeyCode, plain: bool) -> Keyed {
    match code {
        KeyCode::Char(c) if plain => line.insert(c),
        KeyCode::Backspace => line.backspace(),
        KeyCode::Left => line.left(),
        KeyCode::Right => line.right(),
        _ => return Keyed::Ignored,
    }
    Keyed::Taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(request: serde_json::Value) -> (Card, Instant) {
        let request: CardRequest = serde_json::from_value(request).unwrap();
        let at = Instant::now();
        (Card::of(&request, at), at + SETTLE)
    }

    fn press(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    fn enter() -> KeyEvent {
        KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)
    }

    fn approval() -> (Card, Instant) {
        card(json!({
            "sessionId": "ses_1",
            "toolCall": { "toolCallId": "call_3", "title": "Run a command in ~/w", "kind": "execute",
                          "status": "pending", "rawInput": { "command": "rm -r build" } },
            "options": [], "_meta": { "lembas": { "reason": "It deletes files.", "always": "rm commands", "purpose": "Clean up" } }
        }))
    }

    #[test]
    fn an_approval_shows_the_devices_headline_and_answers_d_o_a() {
        let (mut card, later) = approval();
        let CardKind::Approval {
            headline,
            reason,
            detail,
            ..
        } = &card.kind
        else {
            panic!()
        };
        assert_eq!(
            (headline.as_str(), reason.as_str(), detail.as_slice()),
            (
                "Run a command in ~/w",
                "It deletes files.",
                ["$ rm -r build".to_string()].as_slice()
            )
        );
        assert_eq!(card.keys(), "d: Deny · a: Allow once · A: Allow for this chat");
        assert_eq!(card.key(press('x'), later), Keyed::Ignored);
        let Keyed::Answer(CardAnswer::Permission(answer)) = card.key(press('a'), later) else {
            panic!()
        };
        assert_eq!(
            answer.outcome,
            PermissionOutcome::Selected {
                option_id: "once".into()
            }
        );
        let Keyed::Answer(CardAnswer::Permission(answer)) = card.key(press('A'), later) else {
            panic!()
        };
        assert_eq!(
            answer.outcome,
            PermissionOutcome::Selected {
                option_id: "session".into()
            }
        );
    }

    #[test]
    fn a_key_pressed_as_the_card_arrives_answers_nothing() {
        let (mut card, _) = approval();
        let at = card.shown_at;
        assert_eq!(
            card.key(press('d'), at + Duration::from_millis(50)),
            Keyed::Ignored
        );
    }

    #[test]
    fn questions_are_answered_by_number_by_ticks_or_in_words() {
        let (mut card, later) = card(json!({
            "sessionId": "ses_1", "toolCallId": "call_2",
            "questions": [
                { "header": "Db", "question": "Which?", "multiple": false,
                  "options": [{ "label": "Postgres" }, { "label": "SQLite" }] },
                { "header": "Os", "question": "Where?", "multiple": true,
                  "options": [{ "label": "Linux" }, { "label": "Mac" }] },
                { "header": "Name", "question": "Called?", "multiple": false, "options": [] }
            ],
            "_meta": { "lembas": { "patient": false } }
        }));
        assert_eq!(card.key(press('2'), later), Keyed::Taken);
        assert_eq!(card.question().unwrap().header, "Os");
        card.key(press('1'), later);
        card.key(press('2'), later);
        card.key(press('1'), later);
        assert_eq!(card.key(enter(), later), Keyed::Taken);
        for c in "demo".chars() {
            card.key(press(c), later);
        }
        let Keyed::Answer(CardAnswer::Question(QuestionAnswer::Answered { answers })) =
            card.key(enter(), later)
        else {
            panic!()
        };
        assert_eq!(
            answers,
            [
                Answered::Options {
                    labels: vec!["SQLite".into()]
                },
                Answered::Options {
                    labels: vec!["Mac".into()]
                },
                Answered::Custom { text: "demo".into() }
            ]
        );
    }

    #[test]
    fn a_plan_is_approved_or_revised_with_feedback() {
        let plan = json!({ "sessionId": "ses_1", "toolCallId": "call_1", "path": ".agent/plans/p.md",
                           "text": "1. Tidy", "_meta": { "lembas": { "patient": false } } });
        let (mut approved, later) = card(plan.clone());
        assert_eq!(
            approved.key(press('a'), later),
            Keyed::Answer(CardAnswer::Plan(PlanAnswer::Approve { mode: Mode::Edit }))
        );
        let (mut revised, later) = card(plan);
        assert_eq!(revised.key(press('r'), later), Keyed::Taken);
        for c in "smaller".chars() {
            revised.key(press(c), later);
        }
        assert_eq!(
            revised.key(enter(), later),
            Keyed::Answer(CardAnswer::Plan(PlanAnswer::Revise {
                feedback: "smaller".into()
            }))
        );
    }
}
