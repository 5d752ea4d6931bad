//! ACP's `session/update` as the device sends it: what a turn says and does, as it happens
//! (docs/protocol.md "session/update"), each kind a variant, so every update the engine builds has
//! the official schema's shape.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::composer::AvailableCommand;
use crate::content::ContentBlock;
use crate::plan::Plan;
use crate::{LembasMeta, Mode, SessionId};

/// `session/update`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNotification {
    pub session_id: SessionId,
    pub update: SessionUpdate,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "sessionUpdate",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum SessionUpdate {
    UserMessageChunk {
        content: ContentBlock,
    },
    AgentMessageChunk {
        content: ContentBlock,
    },
    AgentThoughtChunk {
        content: ContentBlock,
    },
    ToolCall(ToolCall),
    ToolCallUpdate(ToolCallUpdate),
    /// Every task of the structured plan in order, and the whole plan in `_meta.lembas.plan`.
    Plan {
        entries: Vec<PlanEntry>,
        #[serde(rename = "_meta")]
        meta: LembasMeta<PlanMeta>,
    },
    AvailableCommandsUpdate {
        available_commands: Vec<AvailableCommand>,
    },
    CurrentModeUpdate {
        current_mode_id: Mode,
    },
    /// An editor's: the model or the effort changed, for any reason (the link's client has the
    /// model event). Every option, as it is now.
    ConfigOptionUpdate {
        config_options: Vec<crate::session::ConfigOption>,
    },
    /// An editor's: the session's title changed (the link's client has the title event).
    SessionInfoUpdate {
        title: String,
    },
    /// Tokens of the context window used, of `size`.
    UsageUpdate {
        used: u64,
        size: u64,
    },
}

/// A message chunk of the person's, the agent's or its thinking.
impl SessionUpdate {
    pub fn user(content: ContentBlock) -> SessionUpdate {
        SessionUpdate::UserMessageChunk { content }
    }

    pub fn agent(content: ContentBlock) -> SessionUpdate {
        SessionUpdate::AgentMessageChunk { content }
    }

    pub fn thought(content: ContentBlock) -> SessionUpdate {
        SessionUpdate::AgentThoughtChunk { content }
    }
}

/// ACP's `ToolKind`: what a call does, for the client's icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    Think,
    Fetch,
    SwitchMode,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
}

impl ToolCallStatus {
    /// How a call that ran ended.
    pub fn ended(is_error: bool) -> ToolCallStatus {
        if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            ToolCallStatus::Pending => "pending",
            ToolCallStatus::InProgress => "in_progress",
            ToolCallStatus::Completed => "completed",
            ToolCallStatus::Failed => "failed",
        }
    }
}

/// ACP's `ToolCall`: a call the model made, first told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub tool_call_id: String,
    pub title: String,
    pub kind: ToolKind,
    pub status: ToolCallStatus,
    /// The call's arguments as the model wrote them (passed through).
    pub raw_input: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ToolCallContent>,
    /// The files the call reads or changes, for an editor to follow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<ToolCallLocation>,
}

/// ACP's `ToolCallLocation`: a file a call works on, and the line where it starts when known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallLocation {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// ACP's `ToolCallUpdate`: a call's status, and what it gave once it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallUpdate {
    pub tool_call_id: String,
    pub status: ToolCallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ToolCallContent>>,
    /// A command's output as it comes, for a client that draws it (Zed's `terminal_output`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<TerminalMeta>,
}

/// Zed's convention for a command's live output in a tool call's `_meta`: the terminal the call
/// draws (`terminal_info`, with the call), what it printed since (`terminal_output`), and how it
/// ended (`terminal_exit`). The terminal's id is the call's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TerminalMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_info: Option<TerminalInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_output: Option<TerminalOutput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_exit: Option<TerminalExit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerminalInfo {
    pub terminal_id: String,
    pub cwd: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerminalOutput {
    pub terminal_id: String,
    pub data: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerminalExit {
    pub terminal_id: String,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
}

/// ACP's `ToolCallContent`: text, or a file's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum ToolCallContent {
    Content {
        content: ContentBlock,
    },
    Diff {
        path: String,
        /// None for a new file.
        old_text: Option<String>,
        new_text: String,
    },
    /// A terminal the client draws (with Zed's `terminal_output`, the call's own command).
    Terminal {
        terminal_id: String,
    },
}

impl ToolCallContent {
    pub fn text(text: impl Into<String>) -> ToolCallContent {
        ToolCallContent::Content {
            content: ContentBlock::text(text),
        }
    }
}

/// ACP's `PlanEntry`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanEntry {
    pub content: String,
    /// `high`, `medium` or `low`; the device's tasks are all `medium`.
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

/// `_meta.lembas` of the `plan` update: the whole structured plan, null once cleared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanMeta {
    pub plan: Option<Plan>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn updates_are_written_as_acp_has_them() {
        let cases = [
            (
                SessionUpdate::agent(ContentBlock::text("hi")),
                json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": "hi" } }),
            ),
            (
                SessionUpdate::ToolCall(ToolCall {
                    tool_call_id: "c1".into(),
                    title: "Read a.rs".into(),
                    kind: ToolKind::Read,
                    status: ToolCallStatus::Pending,
                    raw_input: json!({ "path": "a.rs" }),
                    content: Vec::new(),
                    locations: vec![ToolCallLocation {
                        path: "/w/a.rs".into(),
                        line: Some(3),
                    }],
                }),
                json!({ "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Read a.rs",
                        "kind": "read", "status": "pending", "rawInput": { "path": "a.rs" },
                        "locations": [{ "path": "/w/a.rs", "line": 3 }] }),
            ),
            (
                SessionUpdate::ToolCallUpdate(ToolCallUpdate {
                    tool_call_id: "c1".into(),
                    status: ToolCallStatus::Completed,
                    content: Some(vec![ToolCallContent::Diff {
                        path: "/w/a.rs".into(),
                        old_text: None,
                        new_text: "x".into(),
                    }]),
                    meta: None,
                }),
                json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
                        "content": [{ "type": "diff", "path": "/w/a.rs", "oldText": null, "newText": "x" }] }),
            ),
            (
                SessionUpdate::ToolCallUpdate(ToolCallUpdate {
                    tool_call_id: "c2".into(),
                    status: ToolCallStatus::InProgress,
                    content: None,
                    meta: Some(TerminalMeta {
                        terminal_output: Some(TerminalOutput {
                            terminal_id: "c2".into(),
                            data: "built\n".into(),
                        }),
                        ..TerminalMeta::default()
                    }),
                }),
                json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c2", "status": "in_progress",
                        "_meta": { "terminal_output": { "terminal_id": "c2", "data": "built\n" } } }),
            ),
            (
                SessionUpdate::CurrentModeUpdate {
                    current_mode_id: Mode::Plan,
                },
                json!({ "sessionUpdate": "current_mode_update", "currentModeId": "plan" }),
            ),
            (
                SessionUpdate::UsageUpdate { used: 5, size: 10 },
                json!({ "sessionUpdate": "usage_update", "used": 5, "size": 10 }),
            ),
        ];
        for (update, written) in cases {
            assert_eq!(serde_json::to_value(&update).unwrap(), written);
            assert_eq!(serde_json::from_value::<SessionUpdate>(written).unwrap(), update);
        }
    }
}
