//! ACP's `McpServer` (the official schema's `McpServerStdio`, `McpServerHttp`, `McpServerSse`): the
//! MCP servers an editor names in `session/new`, `session/load` and `session/resume` for the agent
//! to run (docs/protocol.md "An editor's MCP servers"). A stdio server has no `type`; the others say
//! theirs.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameValue {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Wire")]
pub enum McpServer {
    /// A program started with `args` and `env` (the editor's, on top of the agent's own).
    Stdio {
        name: String,
        command: String,
        args: Vec<String>,
        env: Vec<NameValue>,
    },
    Http {
        name: String,
        url: String,
        headers: Vec<NameValue>,
    },
    /// Not offered (`mcpCapabilities.sse` is false): read so it can be refused by name.
    Sse { name: String, url: String },
}

impl McpServer {
    pub fn name(&self) -> &str {
        match self {
            McpServer::Stdio { name, .. } | McpServer::Http { name, .. } | McpServer::Sse { name, .. } => {
                name
            }
        }
    }
}

/// The union as it comes, before it is read as one of the three.
#[derive(Deserialize)]
struct Wire {
    #[serde(rename = "type")]
    kind: Option<String>,
    name: String,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Vec<NameValue>,
    url: Option<String>,
    #[serde(default)]
    headers: Vec<NameValue>,
}

impl TryFrom<Wire> for McpServer {
    type Error = String;

    fn try_from(wire: Wire) -> Result<Self, String> {
        let Wire {
            kind,
            name,
            command,
            args,
            env,
            url,
            headers,
        } = wire;
        let needs = |what: &str| format!("the MCP server {name:?} needs `{what}`");
        match kind.as_deref() {
            None | Some("stdio") => Ok(McpServer::Stdio {
                command: command.ok_or_else(|| needs("command"))?,
                name,
                args,
                env,
            }),
            Some("http") => Ok(McpServer::Http {
                url: url.ok_or_else(|| needs("url"))?,
                name,
                headers,
            }),
            Some("sse") => Ok(McpServer::Sse {
                url: url.ok_or_else(|| needs("url"))?,
                name,
            }),
            Some(other) => Err(format!(
                "the MCP server {name:?} has the type {other:?}: stdio (no type) and \"http\" are taken"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_three_forms_read_and_a_broken_one_says_why() {
        let stdio: McpServer = serde_json::from_value(json!({
            "name": "files", "command": "/usr/bin/srv", "args": ["-v"], "env": [{ "name": "A", "value": "1" }],
        }))
        .unwrap();
        assert_eq!(
            stdio,
            McpServer::Stdio {
                name: "files".into(),
                command: "/usr/bin/srv".into(),
                args: vec!["-v".into()],
                env: vec![NameValue {
                    name: "A".into(),
                    value: "1".into()
                }],
            }
        );
        let http: McpServer = serde_json::from_value(json!({
            "type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [],
        }))
        .unwrap();
        assert_eq!(http.name(), "web");
        let sse: McpServer =
            serde_json::from_value(json!({ "type": "sse", "name": "old", "url": "http://x", "headers": [] }))
                .unwrap();
        assert!(matches!(sse, McpServer::Sse { .. }));
        for (broken, says) in [
            (json!({ "name": "x" }), "needs `command`"),
            (
                json!({ "type": "http", "name": "x", "headers": [] }),
                "needs `url`",
            ),
            (
                json!({ "type": "ws", "name": "x", "url": "u" }),
                "has the type \"ws\"",
            ),
            (json!({ "command": "c" }), "name"),
        ] {
            let error = serde_json::from_value::<McpServer>(broken)
                .unwrap_err()
                .to_string();
            assert!(error.contains(says), "{error}");
        }
    }
}
