//! What a client sends to a session and what it is answered (docs/protocol.md): ACP's
//! `session/*` methods and the `_lembas/*` ones that name a session, each params type bound to its
//! method and answer in [`crate::request`].
//!
//! `_meta.lembas` (the instance's Context, a scheduled run) stays JSON here: the device reads it in
//! one place (`Context::update`, `scheduled::Run::read`), and an older instance's keys must not
//! fail a whole request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Mode;
use crate::content::ContentBlock;
use crate::event::AttachmentInfo;
use crate::jobs::{JobInfo, JobState};
use crate::mcp::McpServer;
use crate::scheduled::RunOutcome;

/// A request that names one session and nothing else (`_lembas/session/status`, `…/history`,
/// `…/compact`, `…/delete`, `_lembas/jobs`, `session/close`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    pub session_id: String,
}

/// ACP's `SessionModeState`: the mode now and the ones the device allows (up to `max_mode`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Modes {
    pub current_mode_id: Mode,
    pub available_modes: Vec<ModeChoice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeChoice {
    pub id: Mode,
    pub name: String,
}

/// `session/new`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionParams {
    pub cwd: String,
    /// Run for an editor; named back as not started on the link.
    #[serde(default)]
    pub mcp_servers: Option<Vec<McpServer>>,
    #[serde(rename = "_meta", default)]
    pub meta: Option<NewSessionMeta>,
}

/// `session/new`'s `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NewSessionMeta {
    /// Lowered to `max_mode`.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// The instance's name of the chat's model.
    #[serde(default)]
    pub lembas_model: Option<String>,
    /// A model the device knows by its ref (an editor's choice).
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub effort: Option<String>,
    /// The Context, and `scheduled` for a scheduled run.
    #[serde(default)]
    pub lembas: Option<Value>,
}

/// What `session/new`, `session/load` and `session/resume` answer in `_meta.lembas`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSettings {
    /// The device's ref of the session's model.
    pub model: String,
    pub mode: Mode,
    pub effort: String,
    /// Always true: a session runs on the model its client named, never one of the device's own.
    pub instance: bool,
    /// An editor's MCP servers: each started with its tools, or why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<McpReport>>,
    /// Said to the link's client that named MCP servers: none was started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl SessionSettings {
    /// A session's model, mode and effort, as `_meta.lembas` of an answer that opens it says them.
    pub fn of(
        model: String,
        mode: Mode,
        effort: String,
        mcp_servers: Option<Vec<McpReport>>,
    ) -> LembasMeta<Self> {
        LembasMeta {
            lembas: SessionSettings {
                model,
                mode,
                effort,
                instance: true,
                mcp_servers,
                notice: None,
            },
        }
    }
}

/// One MCP server an editor named: started (its name and how many tools) or not (why).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpReport {
    Started {
        name: String,
        started: bool,
        tools: usize,
    },
    Failed {
        started: bool,
        reason: String,
    },
}

/// `{ "lembas": … }`, the `_meta` of the device's answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LembasMeta<T> {
    pub lembas: T,
}

/// `session/new`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionAnswer {
    pub session_id: String,
    pub modes: Modes,
    /// An editor's pickers (the link's client has `_lembas/configure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_options: Option<Vec<ConfigOption>>,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<SessionSettings>,
}

/// `session/load`'s and `session/resume`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenSessionParams {
    pub session_id: String,
    pub cwd: String,
    #[serde(default)]
    pub mcp_servers: Option<Vec<McpServer>>,
}

/// `session/load`'s and `session/resume`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenedSession {
    pub modes: Modes,
    pub config_options: Vec<ConfigOption>,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<SessionSettings>,
}

/// `session/list`'s params.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ListParams {
    /// Only the sessions of this folder.
    #[serde(default)]
    pub cwd: Option<String>,
    /// `nextCursor` of the page before.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `session/list`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionList {
    pub sessions: Vec<SessionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// ACP's `SessionInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub session_id: String,
    pub cwd: String,
    pub title: Option<String>,
    /// RFC 3339, UTC.
    pub updated_at: String,
}

/// ACP's `SessionConfigOption` as the device offers them: the model and the effort, each a pick
/// of values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOption {
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub current_value: String,
    pub options: Vec<ConfigChoice>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigChoice {
    pub value: String,
    pub name: String,
}

/// `session/set_config_option`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetConfigOptionParams {
    pub session_id: String,
    pub config_id: String,
    /// One of the option's values (the schema allows other kinds; the device's options are picks).
    pub value: Value,
}

/// `session/set_config_option`'s answer: every option as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOptions {
    pub config_options: Vec<ConfigOption>,
}

/// `session/prompt`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    pub session_id: String,
    pub prompt: Vec<ContentBlock>,
    #[serde(rename = "_meta", default)]
    pub meta: Option<PromptMeta>,
}

/// `session/prompt`'s `_meta`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PromptMeta {
    /// The Context, `turnId` (the client's id of the turn) and `scheduled` for a scheduled run.
    #[serde(default)]
    pub lembas: Option<Value>,
}

impl PromptParams {
    /// `_meta.lembas`.
    pub fn lembas(&self) -> Option<&Value> {
        self.meta.as_ref().and_then(|m| m.lembas.as_ref())
    }

    /// The client's id of the turn (`_meta.lembas.turnId`): a turn id the session knows is never
    /// run twice.
    pub fn turn_id(&self) -> Option<&str> {
        self.lembas()
            .and_then(|l| l.get("turnId"))
            .and_then(Value::as_str)
    }
}

/// `session/prompt`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptAnswer {
    pub stop_reason: StopReason,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<TurnEnd>,
}

impl PromptAnswer {
    /// A turn that ended as `stop_reason` says, with nothing more to tell.
    pub fn ended(stop_reason: StopReason, turn_id: &str) -> PromptAnswer {
        PromptAnswer {
            stop_reason,
            meta: LembasMeta {
                lembas: TurnEnd {
                    turn_id: turn_id.to_string(),
                    ..TurnEnd::default()
                },
            },
        }
    }

    /// `_meta.lembas`.
    pub fn end(&mut self) -> &mut TurnEnd {
        &mut self.meta.lembas
    }
}

/// ACP's `StopReason`: why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
}

impl StopReason {
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// `_meta.lembas` of `session/prompt`'s answer: the turn's id, and what else the turn has to say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    #[serde(default)]
    pub turn_id: String,
    /// Steers the turn ended before taking in: send them next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsent: Vec<String>,
    /// A scheduled run's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<RunOutcome>,
    /// The prompt was this command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `/compact`'s summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// `/undo`'s: what was put back, or null when there was nothing to undo.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub undone: Option<Option<Undone>>,
    /// `/plan` without a task: the mode now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// A command that had nothing to do, said instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `/undo`'s turn: its prompt, and the files put back as they were before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Undone {
    pub prompt: String,
    pub files: Vec<String>,
}

/// A field that is there, null or not: `Some` of what it holds (absent is `None` by `default`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// `session/set_mode`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetModeParams {
    pub session_id: String,
    pub mode_id: Mode,
}

/// `session/cancel`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelParams {
    #[serde(default)]
    pub session_id: Option<String>,
}

/// An empty answer (`{}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Empty {}

/// `_lembas/configure`'s params: a model the instance serves, an effort, or both.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigureParams {
    pub session_id: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub effort: Option<String>,
}

/// `_lembas/configure`'s answer: the model and effort the session has now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configured {
    pub model: String,
    pub effort: String,
}

/// `_lembas/session/title`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitleParams {
    pub session_id: String,
    pub title: String,
}

/// `_lembas/session/title`'s answer: the title as kept (trimmed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Titled {
    pub title: String,
}

/// `_lembas/session/history`'s answer: the conversation as the person saw it, turn by turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct History {
    pub session_id: String,
    pub title: String,
    /// The session's folder.
    pub root: String,
    pub turns: Vec<HistoryTurn>,
}

/// A person's message, or what the assistant said and did until the next one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase", rename_all_fields = "camelCase")]
pub enum HistoryTurn {
    User {
        /// As typed: a command's name, not its body.
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn_id: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<AttachmentInfo>,
    },
    Assistant {
        text: String,
        reasoning: String,
        tools: Vec<HistoryTool>,
    },
}

/// A tool call of an assistant turn, and what it gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryTool {
    pub id: String,
    pub name: String,
    /// The call's arguments as the model wrote them (passed through).
    pub args: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// `_lembas/session/delete`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deleted {
    pub deleted: bool,
}

/// `_lembas/steer`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SteerParams {
    pub session_id: String,
    pub text: String,
    /// The client's id of the message, given back in the history.
    #[serde(default)]
    pub message_id: Option<String>,
}

/// `_lembas/steer`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Steered {
    /// Messages waiting for the turn's next step.
    pub queued: usize,
    /// True when the turn takes no more steps: the message opens the next turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub next_turn: bool,
}

/// `_lembas/session/rewind`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewindParams {
    pub session_id: String,
    /// The first turn to leave the conversation.
    pub turn_id: String,
}

/// `_lembas/session/rewind`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rewound {
    /// How many turns left.
    pub reverted: usize,
}

/// `_lembas/session/compact`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compacted {
    pub summary: String,
}

/// `_lembas/files/search`'s and `_lembas/commands`' params: a session's folder, or a folder for a
/// composer with no session yet.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FolderParams {
    #[serde(default)]
    pub session_id: Option<String>,
    /// Absolute.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `_lembas/files/search`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilesSearchParams {
    #[serde(default)]
    pub session_id: Option<String>,
    /// Absolute.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What was typed after `@`; empty for the recent files.
    pub query: String,
    #[serde(default)]
    pub limit: Option<u64>,
}

/// `_lembas/files/search`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilesFound {
    /// The folder searched; every path is relative to it.
    pub root: String,
    pub files: Vec<FoundFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundFile {
    pub path: String,
    /// `file` or `dir`.
    pub kind: String,
}

/// `_lembas/commands`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandList {
    pub commands: Vec<AvailableCommand>,
}

/// ACP's `AvailableCommand`, with `_meta.lembas.kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AvailableCommand {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<CommandInput>,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<CommandKind>,
}

/// What the command takes after its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandInput {
    pub hint: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandKind {
    /// `builtin`, `custom` or `skill`.
    pub kind: String,
}

/// `_lembas/jobs`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobList {
    pub jobs: Vec<JobInfo>,
}

/// `_lembas/job/output`'s, `…/stop`'s, `…/send`'s and `…/transcript`'s params: one job of a
/// session.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobParams {
    pub session_id: String,
    /// `job_` and a ULID.
    pub id: String,
    /// `_lembas/job/output`: the first character wanted.
    #[serde(default)]
    pub since: Option<u64>,
}

/// `_lembas/job/stop`'s answer: the state it ended in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobStopped {
    pub state: JobState,
}
