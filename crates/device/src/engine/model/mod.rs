//! The model as the engine reaches it (docs/protocol.md "The model"): the instance's
//! OpenAI-compatible API over HTTP with the device's token (`http`), or, in a test, a script that
//! answers in this process (`scripted`). Either way a step's answer is read as server-sent events
//! by the one reader (`stream`).

mod http;
mod scripted;
mod stream;

pub use http::HttpInstance;
pub use scripted::{SCRIPTED_MODEL, ScriptedModel, ScriptedStep};
pub use stream::{ModelError, ModelStream, StepOutput, Streamed, ToolCall};

use super::step_request::StepRequest;
use crate::instance_answers::InstanceAnswer;

/// Where the engine's model answers.
#[derive(Clone)]
pub enum Instance {
    /// The instance's API with the device's token: the product's only one.
    Http(HttpInstance),
    /// A test's script, given to an engine built with `Engine::with_scripted_model`.
    Scripted(ScriptedModel),
}

impl Instance {
    /// The chat models (kind `chat`, or no kind) the instance serves to this device.
    pub async fn chat_models(&self) -> Result<Vec<String>, String> {
        match self {
            Instance::Http(http) => http.chat_models().await,
            Instance::Scripted(_) => Ok(vec![SCRIPTED_MODEL.to_string()]),
        }
    }

    /// Whether `model` takes images; a script's model does not.
    pub async fn takes_images(&self, model: &str) -> bool {
        match self {
            Instance::Http(http) => http.takes_images(model).await,
            Instance::Scripted(_) => false,
        }
    }

    /// `model`'s context window as the instance gives it; a script gives none (the default is used).
    pub async fn context_window(&self, model: &str) -> Option<u64> {
        match self {
            Instance::Http(http) => http.context_window(model).await,
            Instance::Scripted(_) => None,
        }
    }

    /// What the instance says of itself and of the device's token.
    pub async fn about(&self) -> Result<About, String> {
        match self {
            Instance::Http(http) => http.about().await,
            Instance::Scripted(script) => Ok(script.about()),
        }
    }

    /// Opens one step's stream.
    pub async fn open(&self, body: &StepRequest) -> Result<ModelStream, ModelError> {
        match self {
            Instance::Http(http) => http.open(body).await,
            Instance::Scripted(script) => script.open(body),
        }
    }
}

/// `/api/v1/instance` as the engine uses it; a field the instance leaves out (or sends empty) is
/// absent here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct About {
    /// Its name for itself, trimmed, at most 200 characters.
    pub name: Option<String>,
    /// What the device's token may do (space-separated); empty when the instance says none.
    pub scope: String,
    /// The model it names as this device's default.
    pub default_model: Option<String>,
}

impl About {
    fn of(body: &InstanceAnswer) -> About {
        let text = |field: &Option<String>| {
            field
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        About {
            name: text(&body.name).map(|n| n.chars().take(200).collect()),
            scope: text(&body.scope).unwrap_or_default(),
            default_model: text(&body.default_model),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn about_reads_what_the_instance_says_and_leaves_out_the_empty() {
        let of = |v| About::of(&serde_json::from_value(v).unwrap());
        let full = of(
            json!({ "name": "  Home  ", "scope": "models link memory", "default_model": "example/chat-fast" }),
        );
        assert_eq!(
            full,
            About {
                name: Some("Home".into()),
                scope: "models link memory".into(),
                default_model: Some("example/chat-fast".into())
            }
        );
        assert_eq!(of(json!({ "name": " ", "default_model": "" })), About::default());
        assert_eq!(of(json!({ "name": 7, "scope": null })), About::default());
        let long = of(json!({ "name": "x".repeat(500) }));
        assert_eq!(long.name.map(|n| n.chars().count()), Some(200));
    }
}
