//! What the instance's HTTP endpoints answer, as the device reads them: discovery
//! (`/.well-known/lembas`), `/api/v1/instance` and `/v1/models` (docs/protocol.md "Versions and
//! discovery", "The model"). The instance is another program: a field of another shape reads as
//! absent, never as an error, and each reader decides what absent means.

use serde::Deserialize;

use crate::lenient::{lenient, list, readable};

/// The discovery document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct DiscoveryAnswer {
    #[serde(default, deserialize_with = "lenient")]
    pub version: Option<String>,
    /// The link protocols it speaks.
    #[serde(default, deserialize_with = "list")]
    pub protocols: Option<Vec<u64>>,
    /// An older server's one protocol.
    #[serde(default, deserialize_with = "lenient")]
    pub protocol: Option<u64>,
}

impl DiscoveryAnswer {
    /// `protocols`, else the one `protocol`.
    pub fn protocols(&self) -> Vec<u64> {
        match &self.protocols {
            Some(list) => list.clone(),
            None => self.protocol.into_iter().collect(),
        }
    }
}

/// `/api/v1/instance`: what the instance says of itself and of the device's token.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct InstanceAnswer {
    /// What the token may do, space-separated.
    #[serde(default, deserialize_with = "lenient")]
    pub scope: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub version: Option<String>,
    /// The name of the device's connection.
    #[serde(default, deserialize_with = "lenient")]
    pub connection: Option<String>,
    /// The model it names as this device's default.
    #[serde(default, deserialize_with = "lenient")]
    pub default_model: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub account: Option<Account>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Account {
    #[serde(default, deserialize_with = "lenient")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub email: Option<String>,
}

/// `/v1/models`; `data` absent (or not a list) is no model list at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ModelList {
    #[serde(default, deserialize_with = "list")]
    pub data: Option<Vec<ModelEntry>>,
}

/// One model of the list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ModelEntry {
    #[serde(default, deserialize_with = "lenient")]
    pub id: Option<String>,
    /// `chat` (or absent), `embedding`, …
    #[serde(default, deserialize_with = "lenient")]
    pub kind: Option<String>,
    #[serde(default, deserialize_with = "readable")]
    pub input_modalities: Vec<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub architecture: Option<Architecture>,
    #[serde(default, deserialize_with = "lenient")]
    pub context_length: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub context_window: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Architecture {
    #[serde(default, deserialize_with = "readable")]
    pub input_modalities: Vec<String>,
}

impl ModelEntry {
    /// Named, with an id that is not empty.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref().filter(|id| !id.is_empty())
    }

    /// A chat model: kind `chat`, or none.
    pub fn is_chat(&self) -> bool {
        matches!(self.kind.as_deref(), None | Some("chat"))
    }

    /// Takes images: `image` among its input modalities, or its architecture's (the spec leaves
    /// how to say so open; this is the common form).
    pub fn takes_images(&self) -> bool {
        let architecture = self.architecture.iter().flat_map(|a| &a.input_modalities);
        self.input_modalities
            .iter()
            .chain(architecture)
            .any(|m| m == "image")
    }

    /// Its context window (`context_length`, or `context_window`), when it gives one.
    pub fn context_window(&self) -> Option<u64> {
        self.context_length
            .or(self.context_window)
            .filter(|size| *size > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn model_entries_say_what_they_take_in_either_form() {
        let entry = |v| serde_json::from_value::<ModelEntry>(v).unwrap();
        let cases = [
            (json!({ "id": "a", "input_modalities": ["text", "image"] }), true),
            (
                json!({ "id": "a", "architecture": { "input_modalities": ["image", "text"] } }),
                true,
            ),
            (json!({ "id": "a", "input_modalities": ["text"] }), false),
            (json!({ "id": "a", "input_modalities": "image" }), false),
            (json!({ "id": "a", "kind": "chat" }), false),
            (json!({ "id": "a", "input_modalities": [5, "image"] }), true),
        ];
        for (body, takes) in cases {
            assert_eq!(entry(body.clone()).takes_images(), takes, "{body}");
        }
        assert_eq!(
            entry(json!({ "context_length": 0, "context_window": 9 })).context_window(),
            None
        );
        assert_eq!(entry(json!({ "context_window": 9 })).context_window(), Some(9));
        assert!(
            entry(json!({ "kind": 5 })).is_chat(),
            "a kind of another shape reads as none"
        );
    }

    #[test]
    fn a_list_keeps_the_entries_that_read() {
        let list = |v| serde_json::from_value::<ModelList>(v).unwrap().data;
        assert_eq!(list(json!({ "models": [] })), None);
        assert_eq!(list(json!({ "data": "x" })), None);
        let read = list(json!({ "data": [{ "id": "a" }, 7, { "id": "b" }] })).unwrap();
        assert_eq!(
            read.iter().filter_map(ModelEntry::id).collect::<Vec<_>>(),
            ["a", "b"]
        );
    }

    #[test]
    fn protocols_fall_back_to_protocol() {
        let read = |v| serde_json::from_value::<DiscoveryAnswer>(v).unwrap().protocols();
        assert_eq!(read(json!({ "protocol": 3, "protocols": [2, 3] })), [2, 3]);
        assert_eq!(read(json!({ "protocol": 3 })), [3]);
        assert_eq!(read(json!({ "protocol": 3, "protocols": "3" })), [3]);
        assert_eq!(read(json!({ "protocols": [1, "x", 3] })), [1, 3]);
        assert_eq!(read(json!({})), Vec::<u64>::new());
    }
}
