//! Cards waiting for a person, keyed by toolCallId (several may be open at once): approvals, and
//! the question and plan cards of `ask_user` and `plan_submit`. The first answer wins, from
//! whichever place it comes: the client over the link, or the desktop.

use lembas_protocol::LinkMethod;
use lembas_protocol::ask::{PlanAnswer, QuestionAnswer};
use lembas_protocol::card::{CardAnswer, CardRequest};
use lembas_protocol::permission::{AnswerSays, ApprovalOption, PermissionAnswer, PermissionOutcome};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use crate::events::ScheduledAsk;
use crate::paths::home_shortened;
use crate::poison::Recover;
use crate::policy::risks::{self, Risk};
use crate::policy::tools::Access;
use crate::status::now_ms;
use crate::tools::{Planned, ToolContext};
use std::path::Path;
use std::sync::Mutex;
use tokio::sync::oneshot;

/// What a person decided about one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Allowed; `always`: every such call in this session from now on; `command`: the corrected
    /// line to run instead (bash only).
    Allow { always: bool, command: Option<String> },
    /// Denied, with what the person said why, for the model.
    Deny { feedback: Option<String> },
    /// A question card's answer (read by `ask`).
    Question(QuestionAnswer),
    /// A plan card's answer.
    Plan(PlanAnswer),
    /// The client does not know the card's method (method-not-found): nobody can be asked.
    Unsupported,
}

impl Answer {
    /// The option picked (`None`: one the device never offers, a denial), with the client's
    /// `_meta.lembas.command` / `feedback`.
    pub fn from_option(option: Option<ApprovalOption>, says: AnswerSays) -> Answer {
        match option {
            Some(ApprovalOption::Once) => Answer::Allow {
                always: false,
                command: said(says.command),
            },
            Some(ApprovalOption::Session) => Answer::Allow {
                always: true,
                command: said(says.command),
            },
            Some(ApprovalOption::Deny) | None => Answer::Deny {
                feedback: said(says.feedback),
            },
        }
    }

    /// The desktop's Allow (`once`, `session`) or Deny (`deny`) on a card of `method`. A plan's
    /// Allow approves it in manual mode, the narrowest that goes on (every write still asks, and
    /// LLeMbas can widen it); its Deny dismisses it, so the model stops and waits.
    pub fn from_desktop(method: LinkMethod, option: ApprovalOption) -> Answer {
        if method != LinkMethod::Plan {
            return Answer::from_option(Some(option), AnswerSays::default());
        }
        Answer::Plan(match option {
            ApprovalOption::Once | ApprovalOption::Session => PlanAnswer::Approve {
                mode: crate::policy::Mode::Manual,
            },
            ApprovalOption::Deny => PlanAnswer::Dismissed,
        })
    }

    /// The client's answer to a card ([`CardRequest::answer_of`]); one it could not read (`None`)
    /// is a denial: nothing runs on an answer the device cannot read.
    pub fn from_client(answer: Option<CardAnswer>) -> Answer {
        match answer {
            Some(CardAnswer::Permission(answer)) => Answer::from_permission(answer),
            Some(CardAnswer::Question(answer)) => Answer::Question(answer),
            Some(CardAnswer::Plan(answer)) => Answer::Plan(answer),
            None => Answer::Deny { feedback: None },
        }
    }

    /// ACP's `session/request_permission` result; `cancelled` is a denial.
    fn from_permission(answer: PermissionAnswer) -> Answer {
        let says = answer.meta.and_then(|m| m.lembas).unwrap_or_default();
        match answer.outcome {
            PermissionOutcome::Selected { option_id } => {
                Answer::from_option(ApprovalOption::of_id(&option_id), says)
            }
            PermissionOutcome::Cancelled => Answer::Deny {
                feedback: said(says.feedback),
            },
        }
    }

    /// The approval card's option this answer comes to: anything but an allowance is a denial, as
    /// the call reads it.
    pub fn option(&self) -> ApprovalOption {
        match self {
            Answer::Allow { always: false, .. } => ApprovalOption::Once,
            Answer::Allow { always: true, .. } => ApprovalOption::Session,
            Answer::Deny { .. } | Answer::Question(_) | Answer::Plan(_) | Answer::Unsupported => {
                ApprovalOption::Deny
            }
        }
    }

    /// As the activity log and `_lembas/permission/settled` say it.
    pub fn label(&self) -> &'static str {
        match self {
            Answer::Allow { .. } | Answer::Deny { .. } => self.option().said(),
            Answer::Question(_) | Answer::Plan(_) => "answered",
            Answer::Unsupported => "unsupported",
        }
    }
}

/// A line the person wrote (a corrected command, why they denied), when there is one.
fn said(text: Option<String>) -> Option<String> {
    text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

/// Where a card's answer came from, for the activity log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    /// The client over the link (LLeMbas).
    Client,
    /// This computer's desktop (or `lembas approvals`).
    Desktop,
    /// A chat front end at this computer (`lembas chat`, the window's composer).
    Terminal,
    /// Nobody: the wait ran out, which is a denial.
    Timeout,
}

impl AnsweredBy {
    pub fn as_str(self) -> &'static str {
        match self {
            AnsweredBy::Client => "client",
            AnsweredBy::Desktop => "desktop",
            AnsweredBy::Terminal => "terminal",
            AnsweredBy::Timeout => "timeout",
        }
    }
}

/// A card still open.
struct Open {
    request: CardRequest,
    asked_at_ms: u64,
    scheduled: Option<ScheduledAsk>,
    facts: CardFacts,
    answer: oneshot::Sender<(Answer, AnsweredBy)>,
}

/// What the device says of an approval card beside the request's params: made from the call
/// itself, never from the model's words, so a model cannot word its way past a person.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default)]
pub struct CardFacts {
    /// What the call does, in the device's words: "Run a command in ~/work/proj".
    pub headline: String,
    /// The session's folder, the whole path (the headline says it as `~/…`).
    pub cwd: String,
    pub session_title: String,
    /// When the wait ends and the card counts as denied (Unix ms).
    pub deadline_ms: Option<u64>,
    pub risks: Vec<Risk>,
    /// The model's own description of the call, when it gave one: shown last, as its words.
    pub agent_says: Option<String>,
    /// A write's or edit's change as a unified diff against the file on disk, when it could be
    /// read (`tools::preview`).
    pub unified_diff: Option<String>,
}

impl CardFacts {
    /// A bash call's: where it runs, what its words may do, and the model's description.
    pub fn of_command(command: &str, description: Option<&str>, background: bool, ctx: &ToolContext) -> Self {
        let home = ctx.protected.home();
        let folder = home_shortened(&ctx.project, home);
        CardFacts {
            headline: match background {
                true => format!("Start a background command in {folder}"),
                false => format!("Run a command in {folder}"),
            },
            risks: risks::of_command(command, &ctx.project, home, &ctx.protected),
            agent_says: description.filter(|d| !d.trim().is_empty()).map(str::to_string),
            ..CardFacts::default()
        }
    }

    /// A file tool's: its own title (the device's words: "Write src/main.rs") and where it writes.
    pub fn of_change(planned: &Planned, ctx: &ToolContext) -> Self {
        CardFacts {
            headline: planned.title.clone(),
            risks: match planned.access {
                Access::Write => risks::of_change(&planned.path, &ctx.project, &ctx.protected),
                _ => Vec::new(),
            },
            ..CardFacts::default()
        }
    }

    /// A tool of an editor's MCP server: what it does is the server's, out of the device's sight.
    pub fn of_mcp(server: &str, tool: &str) -> Self {
        CardFacts {
            headline: format!("Use the tool {tool} of the MCP server {server}"),
            ..CardFacts::default()
        }
    }

    /// With the chat that asks: its folder (the whole path: a face shortens it) and title.
    pub fn in_chat(self, cwd: &Path, session_title: String) -> Self {
        CardFacts {
            cwd: cwd.display().to_string(),
            session_title,
            ..self
        }
    }
}

/// A card as the desktop or a new link needs it: the request that shows it.
#[derive(Debug, Clone)]
pub struct Card {
    pub request: CardRequest,
    /// Unix milliseconds when it opened.
    pub asked_at_ms: u64,
    /// A scheduled run's card: the schedule's title and its wait.
    pub scheduled: Option<ScheduledAsk>,
    /// Empty for a question or plan card.
    pub facts: CardFacts,
}

impl Card {
    pub fn session_id(&self) -> &str {
        self.request.session_id()
    }

    pub fn tool_call_id(&self) -> &str {
        self.request.tool_call_id()
    }
}

#[cfg(test)]
impl Card {
    /// A card opened at `asked_at_ms` on the request written as JSON (the client's view of it).
    pub fn of_request(request: serde_json::Value, asked_at_ms: u64, scheduled: Option<ScheduledAsk>) -> Card {
        Card {
            request: serde_json::from_value(request).expect("a card's request"),
            asked_at_ms,
            scheduled,
            facts: CardFacts::default(),
        }
    }

    /// An approval card for a call of `kind` with the model's arguments `raw_input`.
    pub fn approval(kind: &str, raw_input: serde_json::Value, meta: serde_json::Value) -> serde_json::Value {
        serde_json::json!({
            "sessionId": "ses_1",
            "toolCall": { "toolCallId": "call_1", "title": "Tidy up", "kind": kind, "status": "pending", "rawInput": raw_input },
            "options": [],
            "_meta": { "lembas": meta },
        })
    }
}

#[derive(Default)]
pub struct Approvals {
    open: Mutex<HashMap<String, Open>>,
}

impl Approvals {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Open>> {
        self.open.lock().recover()
    }

    /// Opens a card; the receiver gets the first answer (or is dropped when the card is withdrawn).
    /// `scheduled`: the scheduled run that asks, if one does.
    pub fn ask(
        &self,
        request: CardRequest,
        scheduled: Option<ScheduledAsk>,
        facts: CardFacts,
    ) -> oneshot::Receiver<(Answer, AnsweredBy)> {
        let (tx, rx) = oneshot::channel();
        self.open().insert(
            request.tool_call_id().to_string(),
            Open {
                request,
                asked_at_ms: now_ms(),
                scheduled,
                facts,
                answer: tx,
            },
        );
        rx
    }

    /// Gives the card its answer; `false` when it was already answered or withdrawn.
    pub fn answer(&self, tool_call_id: &str, answer: Answer, by: AnsweredBy) -> Option<String> {
        let open = self.open().remove(tool_call_id)?;
        let session = open.request.session_id().to_string();
        open.answer.send((answer, by)).ok().map(|()| session)
    }

    /// Takes a card down without an answer (timed out, the turn was cancelled); `true` if it was open.
    pub fn withdraw(&self, tool_call_id: &str) -> bool {
        self.open().remove(tool_call_id).is_some()
    }

    /// The request that shows an open card; `None` when it is not open.
    pub fn method_of(&self, tool_call_id: &str) -> Option<LinkMethod> {
        self.open().get(tool_call_id).map(|open| open.request.method())
    }

    /// Every card still open, for a new link to show again and for the desktop.
    pub fn cards(&self) -> Vec<Card> {
        let mut cards: Vec<Card> = self
            .open()
            .values()
            .map(|open| Card {
                request: open.request.clone(),
                asked_at_ms: open.asked_at_ms,
                scheduled: open.scheduled.clone(),
                facts: open.facts.clone(),
            })
            .collect();
        cards.sort_by(|a, b| a.tool_call_id().cmp(b.tool_call_id()));
        cards
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_clients_answers() {
        let cases = [
            (
                json!({"outcome": {"outcome": "selected", "optionId": "once"}}),
                Answer::Allow {
                    always: false,
                    command: None,
                },
            ),
            (
                json!({"outcome": {"outcome": "selected", "optionId": "session"}}),
                Answer::Allow {
                    always: true,
                    command: None,
                },
            ),
            (
                json!({"outcome": {"outcome": "selected", "optionId": "once"}, "_meta": {"lembas": {"command": "ls -la"}}}),
                Answer::Allow {
                    always: false,
                    command: Some("ls -la".into()),
                },
            ),
            (
                json!({"outcome": {"outcome": "selected", "optionId": "deny"}, "_meta": {"lembas": {"feedback": "not there"}}}),
                Answer::Deny {
                    feedback: Some("not there".into()),
                },
            ),
            (
                json!({"outcome": {"outcome": "cancelled"}}),
                Answer::Deny { feedback: None },
            ),
            (
                json!({"outcome": {"outcome": "selected", "optionId": "what"}}),
                Answer::Deny { feedback: None },
            ),
            // An id never offered is a denial, and the person's words still reach the model.
            (
                json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}, "_meta": {"lembas": {"feedback": "no"}}}),
                Answer::Deny {
                    feedback: Some("no".into()),
                },
            ),
            (json!("nonsense"), Answer::Deny { feedback: None }),
            // A client's own `_meta` is no part of the answer.
            (
                json!({"outcome": {"outcome": "selected", "optionId": "once"}, "_meta": {"traceId": "x"}}),
                Answer::Allow {
                    always: false,
                    command: None,
                },
            ),
            // What cannot be read is a denial: nothing runs on an answer the device cannot read.
            (
                json!({"outcome": {"outcome": "selected"}}),
                Answer::Deny { feedback: None },
            ),
            (
                json!({"outcome": {"outcome": "selected", "optionId": "once"}, "_meta": {"lembas": {"command": 5}}}),
                Answer::Deny { feedback: None },
            ),
            (
                json!({"outcome": {"outcome": "selected", "optionId": "session"}, "_meta": {"lembas": {"command": "  "}}}),
                Answer::Allow {
                    always: true,
                    command: None,
                },
            ),
        ];
        for (result, want) in cases {
            let answer = serde_json::from_value(result.clone())
                .ok()
                .map(CardAnswer::Permission);
            assert_eq!(Answer::from_client(answer), want, "{result}");
        }
    }

    #[test]
    fn the_desktop_answers_a_plan_as_approve_in_manual_or_dismissed() {
        assert_eq!(
            Answer::from_desktop(LinkMethod::Plan, ApprovalOption::Once),
            Answer::Plan(PlanAnswer::Approve {
                mode: crate::policy::Mode::Manual
            })
        );
        assert_eq!(
            Answer::from_desktop(LinkMethod::Plan, ApprovalOption::Deny),
            Answer::Plan(PlanAnswer::Dismissed)
        );
        assert_eq!(
            Answer::from_desktop(LinkMethod::RequestPermission, ApprovalOption::Once),
            Answer::Allow {
                always: false,
                command: None
            }
        );
        assert_eq!(
            Answer::from_desktop(LinkMethod::RequestPermission, ApprovalOption::Deny),
            Answer::Deny { feedback: None }
        );
    }

    #[test]
    fn first_answer_wins() {
        let approvals = Approvals::default();
        let card = serde_json::from_value(json!({
            "sessionId": "ses_a", "toolCallId": "call_1", "path": "", "text": "1. Tidy",
            "_meta": { "lembas": { "patient": false } }
        }))
        .unwrap();
        let mut rx = approvals.ask(card, None, CardFacts::default());
        assert_eq!(approvals.cards().len(), 1);
        assert_eq!(
            approvals
                .answer("call_1", Answer::Deny { feedback: None }, AnsweredBy::Client)
                .as_deref(),
            Some("ses_a")
        );
        assert_eq!(
            approvals.answer(
                "call_1",
                Answer::Allow {
                    always: false,
                    command: None
                },
                AnsweredBy::Desktop
            ),
            None
        );
        assert_eq!(
            rx.try_recv().unwrap(),
            (Answer::Deny { feedback: None }, AnsweredBy::Client)
        );
        assert!(approvals.cards().is_empty());
    }
}
