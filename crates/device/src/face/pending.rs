//! An approval card waiting for a person: the one card the device makes of an open request, which
//! the control socket lists (`approvals/list`), the window draws (`window/state`), the tray turns
//! into a notification and `lembas approvals` prints; and how a person answers it from there.

use lembas_protocol::LinkMethod;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Card, CardFacts};

/// How a person answers a card from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Allowed once.
    Allow,
    /// Allowed, and what "always" covers on the card allowed for the rest of the chat.
    AllowForChat,
    Deny,
}

impl Verdict {
    /// The card's option it picks.
    pub fn option_id(self) -> &'static str {
        match self {
            Verdict::Allow => "once",
            Verdict::AllowForChat => "session",
            Verdict::Deny => "deny",
        }
    }
}

/// An approval card waiting for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ApprovalCard {
    /// The tool call's id: what an answer names (`lembas approvals allow|deny <id>`).
    pub id: String,
    pub session_id: String,
    /// The model's own title of the call (a plan's: "Approve the plan"); a face shows `headline`.
    pub title: String,
    /// ACP's tool kind (`execute`, `edit`, …).
    pub kind: Option<String>,
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
    /// A card's view at `now_ms`; read from the request's params, never failing on their shape.
    pub fn of(card: &Card, now_ms: u64) -> ApprovalCard {
        let params = &card.params;
        let text = |pointer: &str| {
            params
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let input = params.pointer("/toolCall/rawInput");
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
        let meta = params.pointer("/_meta/lembas/scheduled");
        let scheduled = (meta.is_some() || card.scheduled.is_some()).then(|| {
            let id = |key: &str| meta.and_then(|s| s[key].as_str()).unwrap_or_default().to_string();
            ScheduledRun {
                schedule_id: id("schedule_id"),
                run_id: id("run_id"),
                title: card
                    .scheduled
                    .as_ref()
                    .map(|ask| ask.title.clone())
                    .filter(|t| !t.is_empty()),
                wait_s: card.scheduled.as_ref().map_or_else(
                    || meta.and_then(|s| s["wait_s"].as_u64()).unwrap_or(0),
                    |ask| ask.wait_s,
                ),
            }
        });
        // A plan card (answered as the desktop answers it: allow approves, deny dismisses).
        let plan = (card.method == LinkMethod::Plan).then(|| Plan {
            path: text("/path").unwrap_or_default(),
            text: text("/text").unwrap_or_default(),
        });
        let command = input_text("command");
        let arguments = match (&plan, &command, &diff) {
            (None, None, None) => input.cloned(),
            _ => None,
        };
        let (title, reason) = if card.method == LinkMethod::Plan {
            (Some(PLAN_TITLE.to_string()), Some(PLAN_REASON.to_string()))
        } else {
            (text("/toolCall/title"), text("/_meta/lembas/reason"))
        };
        let title = title.unwrap_or_default();
        let kind = text("/toolCall/kind");
        let detail = match (&plan, &kind, &command, &diff) {
            (Some(plan), ..) => Detail::Plan {
                path: plan.path.clone(),
                text: plan.text.clone(),
            },
            (None, Some(kind), Some(command), _) if kind == "execute" => Detail::Command {
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
            id: card.tool_call_id.clone(),
            session_id: card.session_id.clone(),
            title,
            kind,
            reason: reason.unwrap_or_default(),
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

    fn card(params: Value, schedule_title: Option<&str>) -> Card {
        Card {
            session_id: "ses_a".into(),
            method: LinkMethod::RequestPermission,
            tool_call_id: "call_1".into(),
            params,
            asked_at_ms: 10_000,
            scheduled: schedule_title.map(|title| crate::events::ScheduledAsk {
                title: title.to_string(),
                wait_s: 1800,
            }),
            facts: Default::default(),
        }
    }

    #[test]
    fn a_card_reads_from_the_request_whatever_its_shape() {
        let bash = card(
            json!({ "toolCall": { "title": "List", "kind": "execute", "rawInput": { "command": "ls -la" } },
                    "_meta": { "lembas": { "reason": "Runs a command.",
                        "scheduled": { "schedule_id": "s1", "run_id": "r7", "wait_s": 1800 } } } }),
            Some("Waybread check"),
        );
        let seen = ApprovalCard::of(&bash, 75_500);
        assert_eq!(seen.id, "call_1");
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
            json!({ "toolCall": { "title": "Edit a.rs", "rawInput": { "path": "a.rs", "old_string": "x = 1", "new_string": "x = 2" } } }),
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
            json!({ "toolCall": { "rawInput": { "path": "n.txt", "content": "yes" } } }),
            None,
        );
        assert_eq!(ApprovalCard::of(&write, 0).diff.map(|d| d.old_text), Some(None));
        let fetch = card(
            json!({ "toolCall": { "title": "Fetch", "kind": "fetch", "rawInput": { "url": "https://example.org" } } }),
            None,
        );
        let seen = ApprovalCard::of(&fetch, 0);
        assert_eq!(seen.arguments, Some(json!({ "url": "https://example.org" })));
        assert_eq!(seen.plan, None);

        let mut plan = card(
            json!({ "sessionId": "ses_a", "toolCallId": "call_1", "path": ".agent/plans/p.md", "text": "1. Tidy" }),
            None,
        );
        plan.method = LinkMethod::Plan;
        let seen = ApprovalCard::of(&plan, 0);
        assert_eq!(
            seen.plan,
            Some(Plan {
                path: ".agent/plans/p.md".into(),
                text: "1. Tidy".into()
            })
        );
        assert_eq!((seen.title.as_str(), seen.arguments), ("Approve the plan", None));
        assert_eq!(seen.facts.headline, "Approve the plan");

        // Params of an unexpected shape give empty fields, never a panic.
        let odd = ApprovalCard::of(&card(json!("nonsense"), None), 0);
        assert_eq!((odd.title.as_str(), odd.command, odd.diff), ("", None, None));
    }
}
