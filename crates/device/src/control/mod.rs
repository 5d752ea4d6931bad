//! The local control endpoint: one runtime (the holder of the device lock), many faces. The
//! runtime serves it; `lembas status|activity|sessions|approvals` and the tray app are its clients.
//!
//! Where: a Unix socket, `$XDG_RUNTIME_DIR/lembas/control.sock`, or `$XDG_STATE_HOME/lembas/run/
//! control.sock` when `XDG_RUNTIME_DIR` is unset (a folder under the user's home, made 0700 and
//! checked, instead of a guessable name in /tmp that another user could take first). The folder is
//! 0700 and the socket 0600, and every connection's peer credentials are checked: another user's
//! process is refused even where the modes were widened. Windows (a named pipe) is not built yet.
//!
//! What: JSON-RPC 2.0, one message a line, UTF-8. Requests (params an object or absent):
//! - `status` → `{ running: true, status }` ([`crate::status::Status`]).
//! - `subscribe` `{ sessions?, terminals? }` → `{}`, then notifications: `status` (params the
//!   [`crate::status::Status`], at once and on every change), `event` (params a
//!   [`crate::events::DeviceEvent`]) and `missed` (`{ count }`: events this client read too slowly
//!   to get). With `sessions: true` also `session/update` `{ session_id, update }` (the ACP update
//!   the client got; `_lembas_turn` and `_lembas_decision` updates are the window's own) and
//!   `session/missed` `{ count }` (re-read the transcript); with `terminals: true` also
//!   `terminal/output` `{ id, offset, data }` (base64, from byte `offset` of the terminal's output),
//!   `terminal/exit` `{ id, code }` and `terminal/missed` `{ count }` (re-read with replay). These
//!   streams never wait for a slow client: it skips, and is told.
//! - `approvals/list` → `[PendingApproval]`, the oldest card first.
//! - `approvals/answer` `{ id, answer: "allow" | "deny" }` → `{ id, session_id, answer }`; the same
//!   path as the desktop's answer (first answer wins, the client is told `_lembas/permission/settled`).
//!   A card no longer open is -32602 with `data: { reason: "not_open" }`.
//! - `activity` `{ n?, described? }` → `{ lines, unreadable, path }`: the activity log's newest
//!   lines, newest first, as logged; `described: true` gives each as `{ at_ms, kind, text }` (at
//!   most 1000), for a view.
//! - `window/state` → the window's snapshot ([`crate::face::Snapshot`]: the link, the settings,
//!   the recent activity, the open approval cards). A window reads it again on each `status` or
//!   `event` notification of its subscription.
//! - `settings/change` `{ setting, value }` → the new snapshot: one setting written to the config
//!   ([`settings::SettingChange`]); a refused change is -32602 with `data: { reason: "refused" }`.
//! - `login` `{ server, token }` → `{ message }`: the token proved and stored in the keychain, the
//!   server written to the config, the link dialled again; errors carry `data.reason`
//!   (`bad_server`, `unreachable`, `token_refused`, `malformed_token`, ...). The token is never
//!   logged.
//! - `logout` → `{ message }`: the login gone from the config and the keychain, the link ended.
//! - `sessions/list` → `[SessionSummary + { running, open, model, mode, scheduled }]`: those
//!   running in this runtime first, then the latest.
//! - `sessions/transcript` `{ session_id }` → `{ session_id, title, root, turns, decisions,
//!   running }`: turns as `_lembas/session/history` gives them, decisions by tool call id
//!   (`{ decision, answeredBy, answer, outcome }`). -32602 `unknown` for no such session.
//! - `sessions/stop` `{ session_id }` → `{ session_id, stopped: true }`: the running turn is
//!   cancelled as by session/cancel. -32602 `not_running` when nothing runs there.
//! - `terminals/list` → `[{ id, cwd, shell, opened_ms, offset }]`, the remote terminals open here.
//! - `terminals/replay` `{ id }` → `{ id, data, offset }`: the last 256 KiB of its output (base64)
//!   and the offset they end at.
//! - `terminals/hang_up` `{ id }` → `{ id }`: hung up as the instance's close; it hears the exit.
//! - `terminals/write` `{ id, data }` → `{}`: typed into the shell (the window's Type here too).
//!   Unknown terminals are -32602 `not_open`.
//! - `remote/stop` → `{ remote_enabled: false, stopped_turns }`: Stop all remote work (remote work
//!   off in the config, every running turn cancelled, and the link ends at once so shells and
//!   watches stop), as the tray's menu item does.
//! - `shown/list` `{ session_id? }` → `[ShownFile]` ([`crate::engine::show::ShownFile`]): the files
//!   sessions showed (the `show` tool) still kept, newest first; one session's when given.
//! - `shown/read` `{ id }` → `{ file: ShownFile, text }`; one no longer kept is -32602 with
//!   `data: { reason: "not_kept" }`. Each new one is announced as the event `shown`.
//!
//! The desktop's runtime stays up in the link's final states (not logged in, token refused), so
//! its window can log in through it; a headless `lembas service run` ends in them.
//!
//! A malformed line gets an error answer (-32700 / -32600, id null) and the connection goes on.

mod activity;
pub mod client;
pub mod credentials;
pub mod endpoint;
mod login;
mod server;
pub mod sessions;
pub mod settings;
mod terminals;
mod window_state;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

use crate::engine::{Card, PLAN};
use crate::paths;

pub use client::{CallError, Client, ConnectError, Pushed, Subscription};
pub(crate) use server::{Parts, Server};
pub use settings::SettingChange;
pub use window_state::DESKTOP_HOLDER;

pub const STATUS: &str = "status";
pub const SUBSCRIBE: &str = "subscribe";
pub const APPROVALS_LIST: &str = "approvals/list";
pub const APPROVALS_ANSWER: &str = "approvals/answer";
pub const ACTIVITY: &str = "activity";
pub const SESSIONS_LIST: &str = "sessions/list";
pub const REMOTE_STOP: &str = "remote/stop";
pub const WINDOW_STATE: &str = "window/state";
pub const SETTINGS_CHANGE: &str = "settings/change";
pub const LOGIN: &str = "login";
pub const LOGOUT: &str = "logout";
pub const SESSIONS_TRANSCRIPT: &str = "sessions/transcript";
pub const SESSIONS_STOP: &str = "sessions/stop";
pub const TERMINALS_LIST: &str = "terminals/list";
pub const TERMINALS_REPLAY: &str = "terminals/replay";
pub const TERMINALS_HANG_UP: &str = "terminals/hang_up";
pub const TERMINALS_WRITE: &str = "terminals/write";
/// Pushed to subscribers that asked for sessions or terminals.
pub const SESSION_UPDATE: &str = "session/update";
pub const SESSION_MISSED: &str = "session/missed";
pub const TERMINAL_OUTPUT: &str = "terminal/output";
pub const TERMINAL_EXIT: &str = "terminal/exit";
pub const TERMINAL_MISSED: &str = "terminal/missed";
pub const SHOWN_LIST: &str = "shown/list";
pub const SHOWN_READ: &str = "shown/read";

/// The folder holding the socket: `$XDG_RUNTIME_DIR/lembas`, else `$XDG_STATE_HOME/lembas/run`.
pub fn socket_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
    {
        Some(dir) if dir.is_absolute() => dir.join("lembas"),
        _ => paths::state_dir().join("run"),
    }
}

pub fn socket_path() -> PathBuf {
    socket_dir().join("control.sock")
}

/// How a person answers a card from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Allowed once.
    Allow,
    Deny,
}

impl Verdict {
    /// The card's option it picks.
    pub fn option_id(self) -> &'static str {
        match self {
            Verdict::Allow => "once",
            Verdict::Deny => "deny",
        }
    }
}

/// An approval card waiting for a person, as `lembas approvals` and the tray show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The tool call's id: what `lembas approvals allow|deny` takes.
    pub id: String,
    pub session_id: String,
    pub title: String,
    /// ACP's tool kind (`execute`, `edit`, …).
    pub kind: Option<String>,
    /// Why it asks.
    pub reason: String,
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
}

/// A plan waiting for approval: its file in the project and the plan as markdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub path: String,
    pub text: String,
}

/// A file tool's change. `old_text` absent for `write`: the whole file is replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    pub path: String,
    pub old_text: Option<String>,
    pub new_text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduledRun {
    pub schedule_id: String,
    pub run_id: String,
    /// The schedule's title, when the run gave one.
    pub title: Option<String>,
    /// How long the device waits for an answer before denying.
    pub wait_s: u64,
}

impl PendingApproval {
    /// A card's view at `now_ms`; read from the request's params, never failing on their shape.
    pub fn of(card: &Card, now_ms: u64) -> PendingApproval {
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
        let scheduled = params.pointer("/_meta/lembas/scheduled").map(|s| ScheduledRun {
            schedule_id: s["schedule_id"].as_str().unwrap_or_default().to_string(),
            run_id: s["run_id"].as_str().unwrap_or_default().to_string(),
            title: card
                .scheduled
                .as_ref()
                .map(|ask| ask.title.clone())
                .filter(|t| !t.is_empty()),
            wait_s: s["wait_s"].as_u64().unwrap_or(0),
        });
        // A plan card (answered as the desktop answers it: allow approves, deny dismisses).
        let plan = (card.method == PLAN).then(|| Plan {
            path: text("/path").unwrap_or_default(),
            text: text("/text").unwrap_or_default(),
        });
        let command = input_text("command");
        let arguments = match (&plan, &command, &diff) {
            (None, None, None) => input.cloned(),
            _ => None,
        };
        let (title, reason) = if card.method == PLAN {
            let path = text("/path");
            let reason = path.map(|p| format!("The plan is in {p}"));
            (Some("Approve the plan".to_string()), reason)
        } else {
            (text("/toolCall/title"), text("/_meta/lembas/reason"))
        };
        PendingApproval {
            id: card.tool_call_id.clone(),
            session_id: card.session_id.clone(),
            title: title.unwrap_or_default(),
            kind: text("/toolCall/kind"),
            reason: reason.unwrap_or_default(),
            command,
            diff,
            asked_ms: card.asked_at_ms,
            waiting_s: now_ms.saturating_sub(card.asked_at_ms) / 1000,
            scheduled,
            plan,
            arguments,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(params: Value, schedule_title: Option<&str>) -> Card {
        Card {
            session_id: "ses_a".into(),
            method: "session/request_permission",
            tool_call_id: "call_1".into(),
            params,
            asked_at_ms: 10_000,
            scheduled: schedule_title.map(|title| crate::events::ScheduledAsk {
                title: title.to_string(),
                wait_s: 1800,
            }),
        }
    }

    #[test]
    fn a_card_reads_as_a_pending_approval() {
        let bash = card(
            json!({ "toolCall": { "title": "List", "kind": "execute", "rawInput": { "command": "ls -la" } },
                    "_meta": { "lembas": { "reason": "Runs a command.",
                        "scheduled": { "schedule_id": "s1", "run_id": "r7", "wait_s": 1800 } } } }),
            Some("Waybread check"),
        );
        let seen = PendingApproval::of(&bash, 75_500);
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
        let seen = PendingApproval::of(&edit, 0);
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
        assert_eq!(
            PendingApproval::of(&write, 0).diff.map(|d| d.old_text),
            Some(None)
        );
        let fetch = card(
            json!({ "toolCall": { "title": "Fetch", "kind": "fetch", "rawInput": { "url": "https://example.org" } } }),
            None,
        );
        let seen = PendingApproval::of(&fetch, 0);
        assert_eq!(seen.arguments, Some(json!({ "url": "https://example.org" })));
        assert_eq!(seen.plan, None);

        let mut plan = card(
            json!({ "sessionId": "ses_a", "toolCallId": "call_1", "path": ".agent/plans/p.md", "text": "1. Tidy" }),
            None,
        );
        plan.method = PLAN;
        let seen = PendingApproval::of(&plan, 0);
        assert_eq!(
            seen.plan,
            Some(Plan {
                path: ".agent/plans/p.md".into(),
                text: "1. Tidy".into()
            })
        );
        assert_eq!((seen.title.as_str(), seen.arguments), ("Approve the plan", None));

        // Params of an unexpected shape give empty fields, never a panic.
        let odd = PendingApproval::of(&card(json!("nonsense"), None), 0);
        assert_eq!((odd.title.as_str(), odd.command, odd.diff), ("", None, None));
    }
}
