//! An approval card waiting for a person: the one card the device makes of an open request, which
//! the control socket lists (`approvals/list`), the window draws (`window/state`), the tray turns
//! into a notification and `lembas approvals` prints; and how a person answers it from there.

use lembas_protocol::card::CardRequest;
use lembas_protocol::update::ToolKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Card, CardFacts};

/// An approval card waiting for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ApprovalCard {
    /// The tool call's id: what an answer names (`lembas approvals allow|deny <id>`).
    pub id: String,
    pub session_id: String,
    /// The card's title as the client got it: the device's headline where it has one (a plan's:
    /// "Approve the plan"); a face shows `headline`, and the model's words are `agent_says`.
    pub title: String,
    /// ACP's tool kind (`execute`, `edit`, …); none on a plan card.
    pub kind: Option<ToolKind>,
    /// Why it asks (the judge's sentence).
    pub reason: String,
    /// What the call would do, as a face draws it: the command, the change as a diff, the plan,
    /// or the arguments.
    pub detail: Detail,
    /// The command line, for bash.
    pub command: Option<String>,
    /// The change, for a file tool that writes.
    pub diff: Option<Diff>,
    /// When it was asked (Unix ms) and how long it has waited.
    pub asked_ms: u64,
    pub waiting_s: u64,
    /// Set when a scheduled run asks: nobody is at the chat.
    pub scheduled: Option<ScheduledRun>,
    /// A plan card's plan, for a face that shows it whole (the tray's window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Plan>,
    /// The call's arguments as the agent gave them, for a tool that neither runs a command nor
    /// changes a file (those are in `command` and `diff`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// What the device says of the call (its headline, folder, chat, deadline, risks), beside
    /// the model's own words. Absent from an older runtime's list.
    #[serde(default, flatten)]
    pub facts: CardFacts,
}

/// A plan waiting for approval: its file in the project and the plan as markdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Plan {
    pub path: String,
    pub text: String,
}

/// A file tool's change. `old_text` absent for `write`: the whole file is replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Diff {
    pub path: String,
    pub old_text: Option<String>,
    pub new_text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ScheduledRun {
    pub schedule_id: String,
    pub run_id: String,
    /// The schedule's title, when the run gave one.
    pub title: Option<String>,
    /// How long the device waits for an answer before denying.
    pub wait_s: u64,
}

/// The open requests as cards at `now_ms`, the oldest first (the id breaks a tie, so the order is
/// the same on every read).
pub fn open_cards(cards: &[Card], now_ms: u64) -> Vec<ApprovalCard> {
    let mut open: Vec<ApprovalCard> = cards.iter().map(|c| ApprovalCard::of(c, now_ms)).collect();
    open.sort_by(|a, b| (a.asked_ms, &a.id).cmp(&(b.asked_ms, &b.id)));
    open
}

impl ApprovalCard {
    /// A card's view at `now_ms`, read from the request that shows it.
    pub fn of(card: &Card, now_ms: u64) -> ApprovalCard {
        let (title, kind, reason, input, run) = match &card.request {
            CardRequest::Permission(asked) => (
                asked.tool_call.title.clone(),
                Some(asked.tool_call.kind),
                asked.meta.lembas.reason.clone(),
                Some(&asked.tool_call.raw_input),
                asked.meta.lembas.scheduled.as_ref(),
            ),
            CardRequest::Plan(_) => (PLAN_TITLE.to_string(), None, PLAN_REASON.to_string(), None, None),
            // Never listed (answered in LLeMbas only); its reason is the model's.
            CardRequest::Question(asked) => (
                QUESTION_TITLE.to_string(),
                None,
                asked.why.clone().unwrap_or_default(),
                None,
                None,
            ),
        };
        // The call's arguments as the model gave them, passed through: read for what a face draws.
        let input_text = |key: &str| {
            input
                .and_then(|i| i.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let diff = match (
            input_text("path"),
            input_text("content"),
            input_text("new_string"),
        ) {
            (Some(path), Some(content), _) => Some(Diff {
                path,
                old_text: None,
                new_text: content,
            }),
            (Some(path), None, Some(new_text)) => Some(Diff {
                path,
                old_text: input_text("old_string"),
                new_text,
            }),
            _ => None,
        };
        // A scheduled run's: its ids from the request, its title and wait from the engine's card.
        let scheduled = (run.is_some() || card.scheduled.is_some()).then(|| ScheduledRun {
            schedule_id: run.map(|r| r.schedule_id.clone()).unwrap_or_default(),
            run_id: run.map(|r| r.run_id.clone()).unwrap_or_default(),
            title: card
                .scheduled
                .as_ref()
                .map(|ask| ask.title.clone())
                .filter(|t| !t.is_empty()),
            wait_s: card
                .scheduled
                .as_ref()
                .map_or_else(|| run.map_or(0, |r| r.wait_s), |ask| ask.wait_s),
        });
        // A plan card (answered as the desktop answers it: allow approves, deny dismisses).
        let plan = match &card.request {
            CardRequest::Plan(asked) => Some(Plan {
                path: asked.path.clone(),
                text: asked.text.clone(),
            }),
            _ => None,
        };
        let command = input_text("command");
        let arguments = match (&plan, &command, &diff) {
            (None, None, None) => input.cloned(),
            _ => None,
        };
        let detail = match (&plan, kind, &command, &diff) {
            (Some(plan), ..) => Detail::Plan {
                path: plan.path.clone(),
                text: plan.text.clone(),
            },
            (None, Some(ToolKind::Execute), Some(command), _) => Detail::Command {
                command: command.clone(),
            },
            // The device's unified diff against the file on disk, when it made one.
            (None, _, _, Some(diff)) if card.facts.unified_diff.is_some() => Detail::Change {
                path: diff.path.clone(),
                diff: card.facts.unified_diff.clone().unwrap_or_default(),
            },
            (None, _, _, Some(diff)) => change(&diff.path, diff.old_text.as_deref(), &diff.new_text)
                .unwrap_or_else(|| as_json(input.unwrap_or(&Value::Null))),
            _ => as_json(input.unwrap_or(&Value::Null)),
        };
        let mut facts = card.facts.clone();
        if facts.headline.is_empty() {
            // A plan card, or a card from a runtime that makes none: its title is what there is.
            facts.headline = title.clone();
        }
        ApprovalCard {
            id: card.tool_call_id().to_string(),
            session_id: card.session_id().to_string(),
            title,
            kind,
            reason,
            detail,
            command,
            diff,
            asked_ms: card.asked_at_ms,
            waiting_s: now_ms.saturating_sub(card.asked_at_ms) / 1000,
            scheduled,
            plan,
            arguments,
            facts,
        }
    }
}

const PLAN_TITLE: &str = "Approve the plan";
const PLAN_REASON: &str = "Allow approves it in manual mode (every change still asks); Deny dismisses it.";
const QUESTION_TITLE: &str = "Answer the questions";

/// What the call would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Detail {
    /// A bash command line.
    Command { command: String },
    /// A file written whole, or an edit: `diff` is a unified diff against the file on disk (or,
    /// where the device could not read it, `-` lines for the text replaced and `+` lines for the
    /// new text).
    Change { path: String, diff: String },
    /// Anything else: the call's arguments as JSON.
    Arguments { json: String },
    /// A plan for approval (`plan_submit`): its file in the project, and the plan as markdown.
    Plan { path: String, text: String },
}

/// A file's change: `-` lines for the text replaced (none for a whole write), `+` lines for the
/// new text; `None` when it changes nothing visible.
fn change(path: &str, old: Option<&str>, new: &str) -> Option<Detail> {
    let lines = |sign: char, s: &str| s.lines().map(|l| format!("{sign}{l}")).collect::<Vec<_>>();
    let diff = [lines('-', old.unwrap_or_default()), lines('+', new)]
        .concat()
        .join("\n");
    (!diff.is_empty()).then(|| Detail::Change {
        path: path.to_string(),
        diff,
    })
}

fn as_json(raw: &Value) -> Detail {
    Detail::Arguments {
        json: serde_json::to_string_pretty(raw).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(kind: &str, raw_input: Value, meta: Value, schedule_title: Option<&str>) -> Card {
        let scheduled = schedule_title.map(|title| crate::events::ScheduledAsk {
            title: title.to_string(),
            wait_s: 1800,
        });
        Card::of_request(Card::approval(kind, raw_input, meta), 10_000, scheduled)
    }

    fn said(reason: &str) -> Value {
        json!({ "reason": reason, "always": "" })
    }

    #[test]
    fn a_card_reads_from_the_request() {
        let bash = card(
            "execute",
            json!({ "command": "ls -la" }),
            json!({ "reason": "Runs a command.", "always": "ls",
                    "scheduled": { "schedule_id": "s1", "run_id": "r7", "wait_s": 1800 } }),
            Some("Waybread check"),
        );
        let seen = ApprovalCard::of(&bash, 75_500);
        assert_eq!((seen.id.as_str(), seen.session_id.as_str()), ("call_1", "ses_1"));
        assert_eq!(
            (seen.title.as_str(), seen.reason.as_str()),
            ("Tidy up", "Runs a command.")
        );
        assert_eq!(seen.kind, Some(ToolKind::Execute));
        assert_eq!(seen.command.as_deref(), Some("ls -la"));
        assert_eq!(seen.diff, None);
        assert_eq!(seen.waiting_s, 65);
        assert_eq!(
            seen.scheduled,
            Some(ScheduledRun {
                schedule_id: "s1".into(),
                run_id: "r7".into(),
                title: Some("Waybread check".into()),
                wait_s: 1800
            })
        );

        let edit = card(
            "edit",
            json!({ "path": "a.rs", "old_string": "x = 1", "new_string": "x = 2" }),
            said(""),
            None,
        );
        let seen = ApprovalCard::of(&edit, 0);
        assert_eq!(seen.waiting_s, 0, "a clock set back reads as no wait");
        assert_eq!(seen.scheduled, None);
        assert_eq!(
            seen.diff,
            Some(Diff {
                path: "a.rs".into(),
                old_text: Some("x = 1".into()),
                new_text: "x = 2".into()
            })
        );

        let write = card(
            "edit",
            json!({ "path": "n.txt", "content": "yes" }),
            said(""),
            None,
        );
        assert_eq!(ApprovalCard::of(&write, 0).diff.map(|d| d.old_text), Some(None));
        let fetch = card("fetch", json!({ "url": "https://example.org" }), said(""), None);
        let seen = ApprovalCard::of(&fetch, 0);
        assert_eq!(seen.arguments, Some(json!({ "url": "https://example.org" })));
        assert_eq!(seen.plan, None);
        // A command line under a kind that runs nothing is shown as arguments, not as a command.
        let odd = ApprovalCard::of(&card("read", json!({ "command": "rm -rf ~" }), said(""), None), 0);
        assert!(matches!(odd.detail, Detail::Arguments { .. }), "{:?}", odd.detail);

        let plan = Card::of_request(
            json!({ "sessionId": "ses_a", "toolCallId": "call_1", "path": ".agent/plans/p.md", "text": "1. Tidy",
                    "_meta": { "lembas": { "patient": false } } }),
            0,
            None,
        );
        let seen = ApprovalCard::of(&plan, 0);
        assert_eq!(
            seen.plan,
            Some(Plan {
                path: ".agent/plans/p.md".into(),
                text: "1. Tidy".into()
            })
        );
        assert_eq!(
            (seen.title.as_str(), seen.arguments, seen.kind),
            ("Approve the plan", None, None)
        );
        assert_eq!(seen.facts.headline, "Approve the plan");
    }
}
