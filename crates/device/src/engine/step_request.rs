//! One step's request to the model API (docs/protocol.md "The model"): the conversation as the
//! API takes it (the device's bookkeeping left out, a user message's images as parts for a model
//! that sees), the tools offered and the effort; streamed, with usage.

use base64::Engine as _;
use lembas_protocol::Effort;
use serde::Serialize;
use std::path::Path;

use crate::store::message::{AttachmentKind, CalledTool, ChatMessage, UserMessage};
use crate::tools::ToolDefinition;
use crate::tools::read_gate::ReadGate;

/// The body of `POST /v1/chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRequest {
    pub model: String,
    pub messages: Vec<ApiMessage>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDefinition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl StepRequest {
    /// Streamed with usage; the tools with `tool_choice: auto`; the session's effort as the API
    /// names it (`off` is `none`, `default` says nothing).
    pub fn new(
        model: &str,
        messages: Vec<ApiMessage>,
        tools: Vec<ToolDefinition>,
        effort: Effort,
    ) -> StepRequest {
        StepRequest {
            model: model.to_string(),
            messages,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            tool_choice: (!tools.is_empty()).then_some("auto"),
            tools,
            reasoning_effort: match effort {
                Effort::Low => Some("low"),
                Effort::Medium => Some("medium"),
                Effort::High => Some("high"),
                Effort::Off => Some("none"),
                Effort::Default => None,
            },
        }
    }

    /// The tools offered, in the order the model is told of them.
    pub fn tools(&self) -> &[ToolDefinition] {
        &self.tools
    }
}

/// A message as the model API takes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ApiMessage {
    System {
        content: String,
    },
    User {
        content: UserContent,
    },
    Assistant {
        content: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<CalledTool>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A user message's content: its text, or the text and the images after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    RuntimeHandles(Vec<ContentPart>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImageUrl {
    /// A `data:` URL of the image's bytes.
    pub url: String,
}

/// Where a model that takes images reads the attached ones: the session's saved attachments
/// through the tools' gate, each at most `most_bytes` (a prompt block's limit).
pub struct Images<'a> {
    pub gate: &'a ReadGate<'a>,
    pub most_bytes: u64,
}

impl ApiMessage {
    pub fn user(content: impl Into<String>) -> ApiMessage {
        ApiMessage::User {
            content: UserContent::Text(content.into()),
        }
    }

    /// A stored message as the model takes it: the device's bookkeeping (what was typed, the
    /// attachments' list, the marks of a job's note or a summary, a call's failure, the thinking)
    /// left out; for a model that takes images (`images`: the gate to the session's saved
    /// attachments), each attached image after the text.
    pub fn of(message: &ChatMessage, images: Option<&Images>) -> ApiMessage {
        match message {
            ChatMessage::User(user) => ApiMessage::User {
                content: user_content(user, images),
            },
            ChatMessage::Assistant(said) => ApiMessage::Assistant {
                content: said.content.clone(),
                tool_calls: said.tool_calls.clone(),
            },
            ChatMessage::Tool(result) => ApiMessage::Tool {
                tool_call_id: result.tool_call_id.clone(),
                content: result.content.clone(),
            },
        }
    }
}

/// The text, then each attached image read from its saved file through `images` (a model that
/// takes images; the saved file is read again at every step, by when the model may have swapped
/// it for a link to a key). For any other model the text's line about the image is all, as it is
/// when a file is gone or refused.
pub fn user_content(user: &UserMessage, images: Option<&Images>) -> UserContent {
    let text = || UserContent::Text(user.content.clone());
    let Some(&Images {
        gate,
        most_bytes: most,
    }) = images
    else {
        return text();
    };
    let mut images = Vec::new();
    for attached in user
        .attachments
        .iter()
        .filter(|a| a.kind == AttachmentKind::Image)
    {
        match gate.read(Path::new(&attached.path), most) {
            Ok(bytes) => images.push(ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: format!(
                        "data:{};base64,{}",
                        attached.mime_type,
                        base64::engine::general_purpose::STANDARD.encode(bytes)
                    ),
                },
            }),
            Err(refusal) => tracing::warn!("the attached image is not sent: {refusal}"),
        }
    }
    if images.is_empty() {
        return text();
    }
    let first = ContentPart::Text {
        text: user.content.clone(),
    };
    UserContent::RuntimeHandles(std::iter::once(first).chain(images).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_body_says_the_effort_and_offers_tools_only_when_there_are_some() {
        let body = |effort| json!(StepRequest::new("m", Vec::new(), Vec::new(), effort));
        assert_eq!(body(Effort::High)["reasoning_effort"], "high");
        assert_eq!(body(Effort::Off)["reasoning_effort"], "none");
        assert!(body(Effort::Default).get("reasoning_effort").is_none());
        assert!(
            body(Effort::Default).get("tools").is_none()
                && body(Effort::Default).get("tool_choice").is_none()
        );
        assert_eq!(
            body(Effort::Default)["stream_options"],
            json!({ "include_usage": true })
        );
        let tools = vec![ToolDefinition::function("t", "d", json!({ "type": "object" }))];
        let with = json!(StepRequest::new(
            "m",
            vec![ApiMessage::user("hi")],
            tools,
            Effort::Default
        ));
        assert_eq!(with["tool_choice"], "auto");
        assert_eq!(with["messages"], json!([{ "role": "user", "content": "hi" }]));
    }

    #[test]
    fn the_model_gets_no_bookkeeping() {
        let stored = [
            json!({ "role": "user", "content": "done", "machine": true, "shown": "/x", "text": "t" }),
            json!({ "role": "assistant", "content": "", "reasoning_content": "hm",
                    "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "ls", "arguments": "{}" } }] }),
            json!({ "role": "tool", "tool_call_id": "c1", "content": "a", "is_error": true }),
            json!({ "role": "assistant", "content": "All done." }),
        ];
        let sent: Vec<_> = stored
            .into_iter()
            .map(|m| json!(ApiMessage::of(&ChatMessage::read(m).unwrap(), None)))
            .collect();
        assert_eq!(
            sent,
            [
                json!({ "role": "user", "content": "done" }),
                json!({ "role": "assistant", "content": "",
                        "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "ls", "arguments": "{}" } }] }),
                json!({ "role": "tool", "tool_call_id": "c1", "content": "a" }),
                json!({ "role": "assistant", "content": "All done." }),
            ]
        );
    }
}
