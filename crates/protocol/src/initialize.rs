//! `initialize` (ACP's, with the `_lembas` extension in `_meta`): what a client says of itself,
//! and what the device answers: its ACP capabilities, and in `_meta.lembas` the link protocol, the
//! limits and the capabilities it lists (docs/protocol.md "initialize").

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::limits::Limits;
use crate::session::Empty;
use crate::{Capability, LembasMeta};

/// `initialize`'s params, as far as the device reads them: whether the client speaks the extension.
/// Everything else a client says of itself (its file system, its terminals) is not used: the device
/// reads and runs on its own computer.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    #[serde(default)]
    pub client_capabilities: Option<ClientCapabilities>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClientCapabilities {
    #[serde(rename = "_meta", default)]
    pub meta: Option<ClientMeta>,
    /// ACP's `auth`: which kinds of login the client can run.
    #[serde(default, deserialize_with = "or_default")]
    pub auth: ClientAuth,
    /// ACP's `elicitation`: whether the client renders forms.
    #[serde(default, deserialize_with = "or_default")]
    pub elicitation: ClientElicitation,
}

/// `clientCapabilities.elicitation`: `form` present (`{}`) when the client renders forms.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClientElicitation {
    #[serde(default)]
    pub form: Option<IgnoredAny>,
}

/// `clientCapabilities.auth`: `terminal` when the client can run the agent's login in a terminal.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClientAuth {
    #[serde(default, deserialize_with = "or_default")]
    pub terminal: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClientMeta {
    #[serde(default)]
    pub lembas: Option<ClientLembas>,
    /// Zed's convention: the client draws a command's output as it comes, from the
    /// `terminal_output` of a tool call's `_meta`.
    #[serde(default, deserialize_with = "or_default")]
    pub terminal_output: bool,
}

/// `clientCapabilities._meta.lembas`: `true` from a protocol 1 client, an object from a later one.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ClientLembas {
    Flag(bool),
    Says(ClientSays),
    /// A shape this device does not know: the client speaks the extension, at protocol 1.
    Other(IgnoredAny),
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ClientSays {
    #[serde(default)]
    pub protocol: Option<u64>,
    /// The client draws `_lembas/show`.
    #[serde(default)]
    pub show: bool,
}

/// A field ACP reads leniently (`x-deserialize-default-on-error`): a shape not known is its default.
fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Read<T> {
        Known(T),
        Other(IgnoredAny),
    }
    Ok(match Read::<T>::deserialize(deserializer)? {
        Read::Known(value) => value,
        Read::Other(_) => T::default(),
    })
}

/// What a client told of the extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// Speaks `_lembas/*`.
    pub lembas: bool,
    /// Its link protocol (1 when it says none).
    pub protocol: u64,
    pub show: bool,
}

impl InitializeParams {
    /// The client renders ACP's elicitation forms (`clientCapabilities.elicitation.form`).
    pub fn elicitation_form(&self) -> bool {
        self.client_capabilities
            .as_ref()
            .is_some_and(|c| c.elicitation.form.is_some())
    }

    /// The client draws a command's live output (`clientCapabilities._meta.terminal_output`).
    pub fn terminal_output(&self) -> bool {
        self.client_capabilities
            .as_ref()
            .and_then(|c| c.meta.as_ref())
            .is_some_and(|m| m.terminal_output)
    }

    /// The client can run the agent's login in a terminal (ACP's `auth.terminal`).
    pub fn terminal_auth(&self) -> bool {
        self.client_capabilities.as_ref().is_some_and(|c| c.auth.terminal)
    }
}

impl InitializeParams {
    pub fn client(&self) -> Client {
        let said = self
            .client_capabilities
            .as_ref()
            .and_then(|c| c.meta.as_ref())
            .and_then(|m| m.lembas.as_ref());
        let (lembas, protocol, show) = match said {
            None | Some(ClientLembas::Flag(false)) => (false, 1, false),
            Some(ClientLembas::Flag(true) | ClientLembas::Other(_)) => (true, 1, false),
            Some(ClientLembas::Says(says)) => (true, says.protocol.unwrap_or(1), says.show),
        };
        Client {
            lembas,
            protocol,
            show,
        }
    }
}

/// `initialize`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeAnswer {
    /// ACP's version (1).
    pub protocol_version: u32,
    pub agent_capabilities: AgentCapabilities,
    /// An editor's: the device's login (none on the link, which is signed in already).
    pub auth_methods: Vec<AuthMethod>,
    pub agent_info: Implementation,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<DeviceSays>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    pub load_session: bool,
    pub prompt_capabilities: PromptCapabilities,
    pub mcp_capabilities: McpCapabilities,
    /// An editor's (`session/list`, `session/resume`, `session/close`); none on the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_capabilities: Option<SessionCapabilities>,
    /// An editor's (`logout`); none on the link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth: Option<AgentAuth>,
}

/// ACP's `AgentAuthCapabilities`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentAuth {
    pub logout: Empty,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptCapabilities {
    pub image: bool,
    pub audio: bool,
    pub embedded_context: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpCapabilities {
    pub http: bool,
    pub sse: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCapabilities {
    pub list: Empty,
    pub resume: Empty,
    pub close: Empty,
    pub delete: Empty,
    pub additional_directories: Empty,
}

/// ACP's `AuthMethod`: the agent's own (`authenticate` with its id), or one the client runs in a
/// terminal (the agent's command with `args` appended; never passed to `authenticate`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AuthMethod {
    Agent {
        id: String,
        name: String,
        description: String,
    },
    Terminal {
        #[serde(rename = "type")]
        kind: TerminalAuth,
        id: String,
        name: String,
        description: String,
        args: Vec<String>,
    },
}

/// The `type` of a terminal [`AuthMethod`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TerminalAuth {
    Terminal,
}

/// `authenticate`'s params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateParams {
    pub method_id: String,
}

/// ACP's `Implementation`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implementation {
    pub name: String,
    pub version: String,
}

/// `_meta.lembas` of `initialize`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceSays {
    /// The link protocol.
    pub protocol: u32,
    pub harness_spec: String,
    /// Null to an editor: the person's own machine has no limits for it.
    pub limits: Option<Limits>,
    /// The login's connection on the instance.
    pub connection: Option<String>,
    pub capabilities: Vec<Capability>,
    /// Which walls stand under remote commands here (`namespaces, landlock ABI 7 (scopes),
    /// seccomp`, `seatbelt`, `none: <why>`): what the kernel guarantees beside the judge.
    pub sandbox: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_says_whether_it_speaks_the_extension_in_each_shape() {
        let cases = [
            (r#"{}"#, (false, 1, false)),
            (
                r#"{"clientCapabilities":{"fs":{"readTextFile":true}}}"#,
                (false, 1, false),
            ),
            (
                r#"{"clientCapabilities":{"_meta":{"lembas":false}}}"#,
                (false, 1, false),
            ),
            (
                r#"{"clientCapabilities":{"_meta":{"lembas":null}}}"#,
                (false, 1, false),
            ),
            (
                r#"{"clientCapabilities":{"_meta":{"lembas":true}}}"#,
                (true, 1, false),
            ),
            (
                r#"{"clientCapabilities":{"_meta":{"lembas":{"protocol":3,"show":true}}}}"#,
                (true, 3, true),
            ),
            (
                r#"{"clientCapabilities":{"_meta":{"lembas":{"protocol":"3"}}}}"#,
                (true, 1, false),
            ),
            (
                r#"{"clientCapabilities":{"_meta":{"lembas":"yes"}}}"#,
                (true, 1, false),
            ),
        ];
        for (params, (lembas, protocol, show)) in cases {
            let read: InitializeParams = serde_json::from_str(params).unwrap();
            let client = read.client();
            assert_eq!(
                (client.lembas, client.protocol, client.show),
                (lembas, protocol, show),
                "{params}"
            );
        }
    }
}
