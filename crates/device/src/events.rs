//! What the device is doing, for any UI: the link's state and every remote action, broadcast as
//! [`DeviceEvent`]s and summed up in [`crate::status::Status`].

use lembas_protocol::SessionId;
use lembas_protocol::event::TaskState;
use lembas_protocol::limits::Limits;
use lembas_protocol::prompt::StopReason;
use serde::{Deserialize, Serialize};

/// The link's state as a person reads it in the tray and `lembas status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum LinkState {
    Starting,
    NotLoggedIn,
    Connecting,
    /// Linked; the connection's name is in the status beside it.
    Linked,
    Offline {
        retry_in_ms: u64,
    },
    /// The server speaks an older protocol, or closed with 4400: no redial.
    ServerNeedsUpdate,
    /// The token was refused (401): log in again.
    TokenRefused,
    Stopped,
}

impl LinkState {
    /// Whether the supervisor has given up (a person must act).
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            LinkState::ServerNeedsUpdate
                | LinkState::TokenRefused
                | LinkState::NotLoggedIn
                | LinkState::Stopped
        )
    }
}

/// What the desktop says of a scheduled run's approval card: nobody is at the chat, so the
/// schedule's title names it, and the wait is the schedule's, not `remote.approval_timeout`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledAsk {
    pub title: String,
    pub wait_s: u64,
}

/// How a watch ended, as the activity list and its log keep it: never what it printed, nor the
/// hash that stands for it (`_lembas/monitor`'s answer has those).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct WatchEnd {
    /// The exit status; none when a signal ended it or it timed out.
    pub exit: Option<i32>,
    pub timed_out: bool,
    pub truncated: bool,
    pub bytes: u64,
    pub duration_ms: u64,
}

impl WatchEnd {
    /// One phrase: "succeeded", "failed (exit 2)", "timed out", "ended by a signal".
    pub fn phrase(&self) -> String {
        if self.timed_out {
            return "timed out".into();
        }
        match self.exit {
            Some(0) => "succeeded".into(),
            Some(code) => format!("failed (exit {code})"),
            None => "ended by a signal".into(),
        }
    }
}

/// What a tool call did, for a line a person reads: "ran `<line>`" (or "refused `<line>`" for a
/// call not run), "changed <file>, <file>"; `None` when it names neither.
pub fn what_a_call_did(outcome: &str, command: Option<&str>, changed_files: &[String]) -> Option<String> {
    match command {
        Some(line) if outcome == "denied" => Some(format!("refused `{line}`")),
        Some(line) => Some(format!("ran `{line}`")),
        None if changed_files.is_empty() => None,
        None => Some(format!("changed {}", changed_files.join(", "))),
    }
}

/// One thing that happened, for the activity list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeviceEvent {
    Link {
        link: LinkState,
        error: Option<String>,
    },
    /// Limits the instance was told (hello and initialize).
    LimitsSent {
        limits: Limits,
    },
    TerminalOpened {
        terminal_id: String,
        cwd: String,
    },
    TerminalClosed {
        terminal_id: String,
    },
    /// A watch began; its [`DeviceEvent::Watch`] follows when it ends with an outcome (a watch
    /// refused or cut short by the link ending has none).
    WatchStarted {
        cwd: String,
        command: String,
    },
    Watch {
        cwd: String,
        command: String,
        outcome: WatchEnd,
    },
    Refused {
        method: String,
        reason: String,
    },
    /// session/new made a session (the engine's).
    SessionOpened {
        session_id: SessionId,
        cwd: String,
        model: String,
    },
    /// A turn started or ended; `stop_reason` absent when it failed.
    Turn {
        session_id: SessionId,
        turn_id: String,
        state: TaskState,
        stop_reason: Option<StopReason>,
        /// The session's folder (absent from an older runtime's events).
        #[serde(default)]
        cwd: String,
    },
    /// An approval card is open: the desktop may answer it (`Engine::answer_card`).
    ApprovalAsked {
        session_id: SessionId,
        tool_call_id: String,
        title: String,
        reason: String,
        /// A scheduled run's card: which schedule, and how long it waits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scheduled: Option<ScheduledAsk>,
    },
    /// A card was answered (anywhere), timed out or withdrawn.
    ApprovalSettled {
        session_id: SessionId,
        tool_call_id: String,
        outcome: String,
    },
    SessionDeleted {
        session_id: SessionId,
    },
    /// A tool call of the model ended: what the mode decided (`allow`, `ask` or `deny`), who
    /// answered when it asked (`client`, `desktop`, `timeout`; none when it did not ask or the card
    /// was withdrawn), and how it ended (`completed`, `failed` or `denied`). `title` is the model's
    /// own words for the call; what it did is in `command` and `changed_files`.
    ToolCall {
        session_id: SessionId,
        tool_call_id: String,
        tool: String,
        title: String,
        decision: String,
        answered_by: Option<String>,
        outcome: String,
        /// The command line a `bash` call ran (or was refused): the person's corrected line when
        /// they sent one with their answer, never the model's description of it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// Each file a `write` or `edit` changed (resolved paths).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed_files: Vec<String>,
    },
    /// A session showed a file (the `show` tool): the desktop's viewer lists it and reads its text
    /// with the control method `shown/read { id }`. The text itself is not in the event.
    /// `file_kind` is the file's kind (markdown, code, text, html): `kind` names the event.
    Shown {
        session_id: SessionId,
        id: String,
        path: String,
        file_kind: lembas_protocol::ShownKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        language: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u64>,
        size: u64,
    },
}
