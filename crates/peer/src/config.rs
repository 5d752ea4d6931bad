//! What the peer serves and how it judges a device: one value a test builds, and may change while the
//! peer runs (`Peer::set_config`).

use serde_json::{Value, json};

use crate::mcp::McpFault;

/// The close code a server gives a link whose hello names a protocol it does not speak (spec:
/// "Versions and discovery").
pub const REFUSAL_CLOSE_CODE: u16 = 4400;

/// The reason a 2.0 server gives with [`REFUSAL_CLOSE_CODE`] to a hello saying 1 or 2, word for word.
pub const UPDATE_CLI_REASON: &str = "update LLeMbas CLI to 2.0";

/// The link protocol LLeMbas 2.0 and LLeMbas CLI 2.0 speak.
pub const LINK_PROTOCOL: u64 = 3;

/// The instance's name of itself for the device (`connection` in `/api/v1/instance`).
pub const DEFAULT_CONNECTION: &str = "example";

/// The peer's behaviour. Build it with [`PeerConfig::with_token`] (or `Default`) and the builder
/// methods, or set the public fields directly.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerConfig {
    /// The only Bearer token accepted, on the link and on the HTTP API. An empty token is never
    /// accepted, so a device sending `Bearer ` with nothing after it is refused.
    pub token: String,
    /// Served as is at `/.well-known/lembas.json` (no token needed).
    pub discovery: Value,
    /// The `/api/v1/instance` body; `None` answers 404 there, as a server older than the endpoint.
    pub instance: Option<Value>,
    /// The `/v1/models` body (an OpenAI list).
    pub models: Value,
    /// `Some(status)`: every link upgrade is answered with this status instead of upgrading,
    /// before the token is looked at.
    pub refuse_upgrade: Option<u16>,
    /// The `protocol` values a hello may name. Any other closes the link with
    /// [`REFUSAL_CLOSE_CODE`] and `hello_refusal_reason`.
    pub link_protocols: Vec<u64>,
    /// The reason sent with [`REFUSAL_CLOSE_CODE`] when a hello's protocol is refused.
    pub hello_refusal_reason: String,
    /// The person's memory entries, served and changed through `/mcp` (`lembas://memory`, the tool
    /// `memory`); a test presets them here and reads them back with `Peer::config`.
    pub memory: Vec<String>,
    /// `Some(fault)`: every POST to `/mcp` with the right token misbehaves so.
    pub mcp_fault: Option<McpFault>,
}

impl Default for PeerConfig {
    /// A LLeMbas 2.0 instance, token `peer-test-token`.
    fn default() -> Self {
        PeerConfig {
            token: "peer-test-token".to_string(),
            discovery: default_discovery(),
            instance: Some(default_instance()),
            models: default_models(),
            refuse_upgrade: None,
            link_protocols: vec![LINK_PROTOCOL],
            hello_refusal_reason: UPDATE_CLI_REASON.to_string(),
            memory: Vec::new(),
            mcp_fault: None,
        }
    }
}

impl PeerConfig {
    /// A LLeMbas 2.0 instance accepting only `token`.
    pub fn with_token(token: impl Into<String>) -> Self {
        PeerConfig {
            token: token.into(),
            ..PeerConfig::default()
        }
    }

    /// Behave as a LLeMbas 1.x server: discovery says `protocol: 1, protocols: [1, 2]` and version
    /// 1.9.0, `/api/v1/instance` says 1.9.0, and the link accepts a hello saying 1 or 2 only,
    /// closing one saying 3 with 4400. The reason a 1.x server gives is not in the spec; this
    /// peer says `unsupported link protocol; this server speaks 1 and 2`.
    pub fn protocol_2_server(mut self) -> Self {
        self.discovery = json!({
            "service": "lembas",
            "name": "LLeMbas (reference peer)",
            "protocol": 1,
            "protocols": [1, 2],
            "version": "1.9.0",
        });
        if let Some(Value::Object(instance)) = self.instance.as_mut() {
            instance.insert("version".to_string(), json!("1.9.0"));
        }
        self.link_protocols = vec![1, 2];
        self.hello_refusal_reason = "unsupported link protocol; this server speaks 1 and 2".to_string();
        self
    }

    /// No `/api/v1/instance` (404), as a server from before it.
    pub fn without_instance(mut self) -> Self {
        self.instance = None;
        self
    }

    /// Answer every link upgrade with `status` (e.g. 401, 503).
    pub fn refusing_upgrade(mut self, status: u16) -> Self {
        self.refuse_upgrade = Some(status);
        self
    }
}

/// What a 2.0 server's discovery says.
pub fn default_discovery() -> Value {
    json!({
        "service": "lembas",
        "name": "LLeMbas (reference peer)",
        "protocol": LINK_PROTOCOL,
        "protocols": [LINK_PROTOCOL],
        "version": "2.0.0",
    })
}

/// The served id of the default chat model.
pub const DEFAULT_MODEL: &str = "example/chat-fast";

/// A 2.0 instance's `/api/v1/instance` for a token a device login granted.
pub fn default_instance() -> Value {
    json!({
        "service": "lembas",
        "version": "2.0.0",
        "name": "LLeMbas (reference peer)",
        "connection": DEFAULT_CONNECTION,
        "account": { "email": "person@example.com", "name": "Example Person" },
        "scope": "models memory link",
        "default_model": DEFAULT_MODEL,
        "services": ["models", "memory", "link"],
    })
}

/// The served id of the default list's chat model that takes images.
pub const VISION_MODEL: &str = "example/chat-deep";

/// Two chat models and one embedding model. Which model takes images is not in the spec; the
/// device reads `input_modalities` (OpenRouter's form, also under `architecture`), so the peer
/// serves that: [`VISION_MODEL`] takes text and images, the default model text only.
pub fn default_models() -> Value {
    json!({
        "object": "list",
        "data": [
            { "id": DEFAULT_MODEL, "object": "model", "owned_by": DEFAULT_CONNECTION, "kind": "chat",
              "input_modalities": ["text"] },
            { "id": VISION_MODEL, "object": "model", "owned_by": DEFAULT_CONNECTION, "kind": "chat",
              "input_modalities": ["text", "image"] },
            { "id": "example/embed", "object": "model", "owned_by": DEFAULT_CONNECTION, "kind": "embedding" },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_a_2_0_server() {
        let config = PeerConfig::default();
        assert_eq!(config.discovery["protocol"], 3);
        assert_eq!(config.discovery["protocols"], json!([3]));
        assert_eq!(config.link_protocols, vec![3]);
        let instance = config.instance.unwrap();
        assert_eq!(instance["scope"], "models memory link");
        assert_eq!(instance["connection"], "example");
        let kinds: Vec<&str> = config.models["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["chat", "chat", "embedding"]);
    }

    #[test]
    fn protocol_2_server_keeps_the_token_and_speaks_1_and_2() {
        let config = PeerConfig::with_token("t").protocol_2_server();
        assert_eq!(config.token, "t");
        assert_eq!(config.discovery["protocol"], 1);
        assert_eq!(config.discovery["protocols"], json!([1, 2]));
        assert_eq!(config.discovery["version"], "1.9.0");
        assert_eq!(config.instance.unwrap()["version"], "1.9.0");
        assert_eq!(config.link_protocols, vec![1, 2]);
    }
}
