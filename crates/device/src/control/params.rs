//! What the control socket's calls carry (bound to their methods in [`super::calls`]): the server
//! reads the params and writes the answers, the client ([`super::Client`]) the other way round.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::grants::Grant;
use crate::engine::show::ShownFile;
use crate::status::Status;
use crate::store::SessionSummary;
use lembas_protocol::permission::ApprovalOption;

/// `approvals/answer`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct AnswerParams {
    /// The card's tool call id.
    pub id: String,
    #[serde(with = "said_as_verdict")]
    #[cfg_attr(test, ts(as = "Verdict"))]
    pub answer: ApprovalOption,
}

/// `approvals/answer`'s answer: the card answered, and its chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Answered {
    pub id: String,
    pub session_id: String,
    #[serde(with = "said_as_verdict")]
    #[cfg_attr(test, ts(as = "Verdict"))]
    pub answer: ApprovalOption,
}

/// How `approvals/answer` spells an [`ApprovalOption`]: in the socket's own words, older than
/// the option ids, kept so its callers (and `lembas approvals --json`) read what they always did.
/// Read here; written by [`verdict_word`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
enum Verdict {
    /// `once`.
    Allow,
    /// `session`.
    AllowForChat,
    Deny,
}

/// The socket's word for `option` (`lembas approvals --json` prints it too).
pub fn verdict_word(option: ApprovalOption) -> &'static str {
    match option {
        ApprovalOption::Once => "allow",
        ApprovalOption::Session => "allow_for_chat",
        ApprovalOption::Deny => "deny",
    }
}

mod said_as_verdict {
    use super::{ApprovalOption, Verdict};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(option: &ApprovalOption, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::verdict_word(*option))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ApprovalOption, D::Error> {
        Ok(match Verdict::deserialize(d)? {
            Verdict::Allow => ApprovalOption::Once,
            Verdict::AllowForChat => ApprovalOption::Session,
            Verdict::Deny => ApprovalOption::Deny,
        })
    }
}

/// `activity`'s params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ActivityParams {
    /// How many of the newest lines (50 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub n: Option<usize>,
    /// Each line as a sentence (`{ at_ms, kind, text }`) rather than as logged; at most 1,000.
    #[serde(default)]
    pub described: bool,
}

/// The streams a subscriber asks for besides status and events (`subscribe`'s params); unknown
/// fields are ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(default)]
pub struct Streams {
    /// Every session's updates (the window's timelines and chats).
    pub sessions: bool,
    /// The remote terminals' output.
    pub terminals: bool,
}

/// The `sessions/*` calls that name one chat (`sessions/timeline`, `sessions/stop`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct SessionParams {
    pub session_id: String,
}

/// `sessions/undo`'s params: put back the files of this turn and every later one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct UndoParams {
    pub session_id: String,
    pub turn_id: String,
}

/// `sessions/revoke`'s params: an "Allow for this chat" taken back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct RevokeParams {
    pub session_id: String,
    pub grant: Grant,
}

/// The `terminals/*` calls that name one terminal (`terminals/replay`, `terminals/hang_up`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TerminalParams {
    pub id: String,
}

/// `terminals/write`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TerminalWriteParams {
    pub id: String,
    /// What was typed, as text (the window's xterm.js gives its keys as a string).
    pub data: String,
}

/// `shown/list`'s params: one session's shown files, or every session's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ShownListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub session_id: Option<String>,
}

/// `shown/read`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ShownReadParams {
    pub id: String,
}

/// `hello`'s params: the control cookie.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct HelloParams {
    pub cookie: String,
}

/// `status`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct StatusAnswer {
    /// Always true: an answer comes from a running runtime.
    pub running: bool,
    pub status: Status,
}

/// `activity`'s answer: the newest lines, newest first, how many could not be read, and the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ActivityPage {
    pub lines: ActivityLines,
    pub unreadable: usize,
    pub path: String,
}

/// The lines as logged (each the activity log's record, passed through as written: old files
/// hold older shapes), or described for a view. Read back, any list is `Logged`: a client reads
/// the kind it asked for, and only a view (in TypeScript) asks for described lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(untagged)]
pub enum ActivityLines {
    Logged(Vec<Value>),
    Described(Vec<Line>),
}

/// A described line: when, its kind, and what happened in a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Line {
    pub at_ms: u64,
    pub kind: String,
    pub text: String,
}

/// `login`'s params. Read without serde's messages, which could quote a value given in the wrong
/// place: see the control module's `login`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct LoginParams {
    pub server: String,
    pub token: String,
}

impl std::fmt::Debug for LoginParams {
    /// Never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginParams")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// `login`'s and `logout`'s answer: what happened, in a sentence for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Said {
    pub message: String,
}

/// `sessions/stop`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Stopped {
    pub session_id: String,
    pub stopped: bool,
}

/// `terminals/replay`'s answer: the terminal's kept output (base64) up to byte `offset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Replay {
    pub id: String,
    pub data: String,
    pub offset: u64,
}

/// `remote/stop`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RemoteStopped {
    pub remote_enabled: bool,
    /// How many turns were stopped.
    pub stopped_turns: usize,
}

/// `shown/read`'s answer: the file and its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ShownText {
    pub file: ShownFile,
    pub text: String,
}

/// A line of `sessions/list`: the stored summary (its fields as they were) and what is live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ListedSession {
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// A turn is running or waiting in this runtime.
    #[serde(default)]
    pub running: bool,
    /// Open in this runtime (model and mode known).
    #[serde(default)]
    pub open: bool,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    /// The running turn is a scheduled run.
    #[serde(default)]
    pub scheduled: bool,
}

/// The params of a `missed` push: how many of a stream's items the subscriber read too slowly to
/// get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    pub count: u64,
}

/// `terminal/output`: what a terminal printed (base64), from byte `offset` of its output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalShown {
    pub id: String,
    pub offset: u64,
    pub data: String,
}

/// `terminal/exit`: a terminal's shell ended, with its exit code when it had one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalEnded {
    pub id: String,
    pub code: Option<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_on_the_socket_keeps_its_words() {
        for (option, word) in [
            (ApprovalOption::Once, "allow"),
            (ApprovalOption::Session, "allow_for_chat"),
            (ApprovalOption::Deny, "deny"),
        ] {
            let asked = json!({ "id": "call_1", "answer": word });
            let read: AnswerParams = serde_json::from_value(asked.clone()).unwrap();
            assert_eq!(read.answer, option);
            assert_eq!(serde_json::to_value(&read).unwrap(), asked);
        }
        // The option ids are the link's words, not the socket's.
        assert!(serde_json::from_value::<AnswerParams>(json!({ "id": "c", "answer": "once" })).is_err());
    }
}
