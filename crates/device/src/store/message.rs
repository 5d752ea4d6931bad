//! A message of a session's conversation as its file keeps it: the model API's chat message
//! (OpenAI-compatible) with the device's own bookkeeping beside it (what the person typed, the
//! files attached, whether the harness wrote it). The model is sent it without the bookkeeping
//! (`engine::step_request`). Old files still open: what a field held in an older version reads
//! as text, and a field added later is optional.

use lembas_protocol::event::AttachmentInfo;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lenient::{readable, text};

/// One message, tagged by its `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    User(UserMessage),
    Assistant(AssistantMessage),
    Tool(ToolMessage),
}

/// What the person (or the harness) said.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// What the model reads: the text, then what was attached or mentioned.
    #[serde(default, deserialize_with = "text")]
    pub content: String,
    /// The person's text without what was attached, when something was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A command's line as typed (`/review src`), when the text is what it expanded to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<StoredAttachment>,
    /// Written by the harness, not typed: a finished job's note.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub machine: bool,
    /// The summary a compaction left in place of what came before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compacted: bool,
}

impl UserMessage {
    /// A message of plain text.
    pub fn says(content: impl Into<String>) -> UserMessage {
        UserMessage {
            content: content.into(),
            ..UserMessage::default()
        }
    }

    /// The person's message as they typed it: a command's line, not the text it expanded to,
    /// and the text without the files attached.
    pub fn as_typed(&self) -> &str {
        self.shown
            .as_deref()
            .or(self.text.as_deref())
            .unwrap_or(&self.content)
    }

    /// Typed by the person: not a job's note, nor a compaction's summary.
    pub fn by_the_person(&self) -> bool {
        !self.machine && !self.compacted
    }
}

/// A file attached to a prompt, as the session file keeps it with the user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredAttachment {
    pub name: String,
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    pub size: usize,
    pub kind: AttachmentKind,
    /// Where it was saved.
    pub path: String,
}

impl StoredAttachment {
    /// As the prompt event and the history list it: `{ name, mimeType, size }`.
    pub fn listed(&self) -> AttachmentInfo {
        AttachmentInfo {
            name: self.name.clone(),
            mime_type: self.mime_type.clone(),
            size: self.size,
        }
    }
}

/// What an attached file is to the model: an image it may see, text it reads, or a file named by
/// its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AttachmentKind {
    Image,
    Text,
    Binary,
}

/// What the model said in one step, and the tools it called.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    #[serde(default, deserialize_with = "text")]
    pub content: String,
    /// Its thinking, when the model streamed it; never sent back to the model.
    #[serde(default, skip_serializing_if = "String::is_empty", deserialize_with = "text")]
    pub reasoning_content: String,
    /// Those that read: a damaged call is passed over, not the whole message.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "readable")]
    pub tool_calls: Vec<CalledTool>,
}

/// A tool call as the model API writes it in an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalledTool {
    pub id: String,
    #[serde(rename = "type", default)]
    pub kind: CallKind,
    pub function: CalledFunction,
}

/// The model API's only kind of tool call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallKind {
    #[default]
    Function,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalledFunction {
    pub name: String,
    /// The arguments as the model wrote them: JSON text, passed through (it may not even parse).
    #[serde(default, deserialize_with = "text")]
    pub arguments: String,
}

impl CalledTool {
    pub fn new(id: &str, name: &str, arguments: &str) -> CalledTool {
        CalledTool {
            id: id.to_string(),
            kind: CallKind::Function,
            function: CalledFunction {
                name: name.to_string(),
                arguments: arguments.to_string(),
            },
        }
    }
}

/// A tool's result, for the call `tool_call_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolMessage {
    pub tool_call_id: String,
    #[serde(default, deserialize_with = "text")]
    pub content: String,
    /// The call failed or was refused (the timeline's mark; never sent to the model).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ChatMessage {
    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage::User(UserMessage::says(content))
    }

    pub fn tool(tool_call_id: &str, content: impl Into<String>, is_error: bool) -> ChatMessage {
        ChatMessage::Tool(ToolMessage {
            tool_call_id: tool_call_id.to_string(),
            content: content.into(),
            is_error,
        })
    }

    /// The person's own message, as typed.
    pub fn typed_by_the_person(&self) -> Option<&UserMessage> {
        match self {
            ChatMessage::User(user) if user.by_the_person() => Some(user),
            _ => None,
        }
    }
}

impl ChatMessage {
    /// A message read back from its JSON: by its `role`, each kind read straight from the object
    /// (not through serde's buffer of a tagged enum); `None` when it is no message this version
    /// knows.
    pub fn read(message: Value) -> Option<ChatMessage> {
        let role = message.get("role").and_then(Value::as_str)?;
        match role {
            "user" => serde_json::from_value(message).ok().map(ChatMessage::User),
            "assistant" => serde_json::from_value(message).ok().map(ChatMessage::Assistant),
            "tool" => serde_json::from_value(message).ok().map(ChatMessage::Tool),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_messages_of_a_file_read_back_as_written_and_as_older_versions_wrote_them() {
        let read = |v: Value| serde_json::from_value::<ChatMessage>(v).unwrap();
        let lines = [
            json!({ "role": "user", "content": "look", "text": "look", "shown": "/look",
                    "attachments": [{ "name": "a.png", "mimeType": "image/png", "size": 4, "kind": "image", "path": "/s/a.png" }] }),
            json!({ "role": "user", "content": "job done", "machine": true }),
            json!({ "role": "assistant", "content": "", "reasoning_content": "hm",
                    "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } }] }),
            json!({ "role": "tool", "tool_call_id": "c1", "content": "a\nb", "is_error": true }),
        ];
        for line in lines {
            assert_eq!(json!(read(line.clone())), line, "written back as read");
        }
        // An older version wrote `is_error: false` and `content: null`.
        assert_eq!(
            read(json!({ "role": "tool", "tool_call_id": "c1", "content": null, "is_error": false })),
            ChatMessage::tool("c1", "", false)
        );
        assert_eq!(
            read(json!({ "role": "tool", "tool_call_id": "c1", "content": [{ "type": "text" }] })),
            ChatMessage::tool("c1", r#"[{"type":"text"}]"#, false)
        );
        assert!(
            serde_json::from_value::<ChatMessage>(json!({ "role": "narrator", "content": "x" })).is_err()
        );
        // Read by its role as serde reads it.
        for line in [
            json!({ "role": "user", "content": "hi", "machine": true }),
            json!({ "role": "tool", "tool_call_id": "c1", "content": 5 }),
        ] {
            assert_eq!(ChatMessage::read(line.clone()), Some(read(line)));
        }
        assert_eq!(ChatMessage::read(json!({ "role": "narrator" })), None);
        assert_eq!(ChatMessage::read(json!({ "content": "x" })), None);
    }

    #[test]
    fn as_typed_is_the_command_line_then_the_text_then_the_content() {
        let mut said = UserMessage::says("expanded\n\nattached");
        assert_eq!(said.as_typed(), "expanded\n\nattached");
        said.text = Some("expanded".into());
        assert_eq!(said.as_typed(), "expanded");
        said.shown = Some("/review".into());
        assert_eq!(said.as_typed(), "/review");
        assert!(said.by_the_person());
        said.machine = true;
        assert!(!said.by_the_person());
    }
}
