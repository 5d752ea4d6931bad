//! What a client sends to a session and what it is answered (docs/protocol.md): ACP's
//! `session/*` methods and the `_lembas/*` ones that name a session (a prompt's are in
//! [`crate::prompt`], the composer's in [`crate::composer`], the jobs' in [`crate::jobs`]), each
//! params type bound to its method and answer in [`crate::request`].
//!
//! `_meta.lembas` (the instance's Context, a scheduled run) stays JSON here: the device reads it in
//! one place (`Context::update`, `scheduled::Run::read`), and an older instance's keys must not
//! fail a whole request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::AttachmentInfo;
use crate::mcp::McpServer;
use crate::{Effort, LembasMeta, Mode, SessionId, TurnId};

/// A request that names one session and nothing else (`_lembas/session/status`, `…/history`,
/// `…/compact`, `…/delete`, `_lembas/jobs`, `session/close`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    pub session_id: SessionId,
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
    /// An editor's further folders for the session, each absolute.
    #[serde(default)]
    pub additional_directories: Vec<String>,
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
    #[serde(default, deserialize_with = "Effort::read_asked")]
    pub effort: Option<Effort>,
    /// The Context, and `scheduled` for a scheduled run.
    #[serde(default)]
    pub lembas: Option<crate::context::LembasAsks>,
}

/// What `session/new`, `session/load` and `session/resume` answer in `_meta.lembas`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSettings {
    /// The device's ref of the session's model.
    pub model: String,
    pub mode: Mode,
    pub effort: Effort,
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
        effort: Effort,
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

/// `session/new`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionAnswer {
    pub session_id: SessionId,
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
    pub session_id: SessionId,
    pub cwd: String,
    /// An editor's further folders for the session, each absolute; none when left out.
    #[serde(default)]
    pub additional_directories: Vec<String>,
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
    pub session_id: SessionId,
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
    pub session_id: SessionId,
    pub config_id: String,
    /// One of the option's values.
    pub value: ConfigValue,
}

/// A config option's value as ACP allows it: a value id (the device's options are picks among
/// ids), or a boolean (sent with `type: "boolean"`, which is not read: the value says which).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConfigValue {
    Id(String),
    Boolean(bool),
}

/// `session/set_config_option`'s answer: every option as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOptions {
    pub config_options: Vec<ConfigOption>,
}

/// `session/set_mode`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetModeParams {
    pub session_id: SessionId,
    pub mode_id: Mode,
}

/// `session/cancel`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelParams {
    #[serde(default)]
    pub session_id: Option<SessionId>,
}

/// An empty answer (`{}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Empty {}

/// `_lembas/configure`'s params: a model the instance serves, an effort, or both.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigureParams {
    pub session_id: SessionId,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "Effort::read_asked")]
    pub effort: Option<Effort>,
}

/// `_lembas/configure`'s answer: the model and effort the session has now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configured {
    pub model: String,
    pub effort: Effort,
}

/// `_lembas/session/title`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitleParams {
    pub session_id: SessionId,
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
    pub session_id: SessionId,
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
        turn_id: Option<TurnId>,
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
    pub session_id: SessionId,
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
    pub session_id: SessionId,
    /// The first turn to leave the conversation.
    pub turn_id: TurnId,
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
