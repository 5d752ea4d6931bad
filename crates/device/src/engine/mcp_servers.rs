//! An editor's MCP servers (docs/protocol.md "An editor's MCP servers"): the `mcpServers` of
//! `session/new`, `session/load` and `session/resume` on `lembas serve --stdio`, started with the
//! session (each within `mcp.start_timeout_ms`, side by side), their tools offered to the model as
//! `<server>__<tool>`, and stopped with it. One that does not start is left out and said, to the
//! editor in the answer's `_meta.lembas.mcpServers` and to the model in its prompt; the session
//! starts all the same. On the link the instance names no programs to run here: a list there is
//! ignored with a notice.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use lembas_protocol::mcp::McpServer;
use lembas_protocol::session::McpReport;
use serde_json::Value;

use crate::decisions::McpNumbers;
use crate::mcp::{Connection, Endpoint, ToolInfo, object_arguments};
use crate::tools::{ToolDefinition, ToolOutput};

/// The longest function name the model APIs take.
const NAME_MAX: usize = 64;

/// A session's running servers and the sentences of those that did not start.
#[derive(Default)]
pub struct SessionServers {
    running: Vec<Running>,
    pub failures: Vec<String>,
}

struct Running {
    name: String,
    connection: Arc<Connection>,
    tools: Vec<ToolInfo>,
}

/// One tool the model may call: its name as offered, and where it goes.
#[derive(Clone)]
pub struct Offered {
    pub exposed: String,
    pub server: String,
    pub tool: String,
    connection: Arc<Connection>,
}

/// What the link's client is told when it names servers: the device runs no program the instance
/// names.
pub fn ignored_on_the_link(servers: &[McpServer]) -> Option<String> {
    (!servers.is_empty()).then(|| {
        let names: Vec<&str> = servers.iter().map(McpServer::name).collect();
        format!(
            "The MCP servers {} were not started: over the link this computer runs no program the instance names. Run them from an editor on this computer instead (lembas serve --stdio).",
            names.join(", ")
        )
    })
}

impl SessionServers {
    /// Starts the servers an editor named for a session in `cwd`, side by side.
    pub async fn start(
        http: &reqwest::Client,
        cwd: &Path,
        servers: Vec<McpServer>,
        numbers: &McpNumbers,
    ) -> SessionServers {
        let within = Duration::from_millis(numbers.start_timeout_ms);
        let starts = servers.into_iter().map(|server| {
            let http = http.clone();
            let cwd = cwd.to_path_buf();
            async move {
                let name = server.name().to_string();
                let endpoint = match server {
                    McpServer::Stdio { command, args, env, .. } => Endpoint::Stdio {
                        command: command.into(),
                        args,
                        env: env.into_iter().map(|v| (v.name, v.value)).collect(),
                        cwd,
                    },
                    McpServer::Http { url, headers, .. } => Endpoint::Http {
                        url,
                        headers: headers.into_iter().map(|h| (h.name, h.value)).collect(),
                        bearer: None,
                    },
                    McpServer::Sse { .. } => {
                        return Err(format!(
                            "The MCP server {name} was not started: this agent takes stdio and HTTP servers, not SSE (mcpCapabilities.sse is false)."
                        ));
                    }
                };
                let connection = Connection::open(&name, endpoint, &http, within)
                    .await
                    .map_err(|e| e.sentence())?;
                match connection.tools(within).await {
                    Ok(tools) => Ok(Running {
                        name,
                        connection: Arc::new(connection),
                        tools,
                    }),
                    Err(e) => {
                        connection.close().await;
                        Err(e.sentence())
                    }
                }
            }
        });
        let mut servers = SessionServers::default();
        for started in futures_util::future::join_all(starts).await {
            match started {
                Ok(running) => servers.running.push(running),
                Err(why) => {
                    tracing::warn!("{why}");
                    servers.failures.push(why);
                }
            }
        }
        servers
    }

    /// Every tool with what the model is told of it.
    pub fn tools(&self) -> Vec<(Offered, ToolDefinition)> {
        self.offered()
            .map(|(exposed, running, tool)| {
                let description = format!(
                    "{} (a tool of the MCP server {})",
                    tool.description.trim(),
                    running.name
                );
                let definition = tool.as_function(&exposed, &description);
                let offered = Offered {
                    exposed,
                    server: running.name.clone(),
                    tool: tool.name.clone(),
                    connection: running.connection.clone(),
                };
                (offered, definition)
            })
            .collect()
    }

    /// The editor's view: each server, started or not.
    pub fn report(&self) -> Vec<McpReport> {
        let started = self.running.iter().map(|r| McpReport::Started {
            name: r.name.clone(),
            started: true,
            tools: r.tools.len(),
        });
        let failed = self.failures.iter().map(|why| McpReport::Failed {
            started: false,
            reason: why.clone(),
        });
        started.chain(failed).collect()
    }

    /// What the model is told of servers that did not start.
    pub fn section(&self) -> Option<String> {
        (!self.failures.is_empty()).then(|| format!("## MCP servers\n\n{}", self.failures.join("\n")))
    }

    /// Stops every server (a stdio server's process ends).
    pub async fn stop(self) {
        for running in self.running {
            match Arc::into_inner(running.connection) {
                Some(connection) => connection.close().await,
                // A call still holds it: dropped with that call, which ends the process.
                None => tracing::debug!("the MCP server {} ends with its last call", running.name),
            }
        }
    }

    fn offered(&self) -> impl Iterator<Item = (String, &Running, &ToolInfo)> {
        self.running.iter().flat_map(|r| {
            r.tools
                .iter()
                .map(move |t| (exposed_name(&r.name, &t.name), r, t))
        })
    }
}

impl Offered {
    /// Calls the tool; a failure of the server is a sentence for the model.
    pub async fn call(&self, arguments: &Value, numbers: &McpNumbers) -> ToolOutput {
        let arguments = match object_arguments(&self.exposed, arguments) {
            Ok(map) => map,
            Err(text) => {
                return ToolOutput {
                    text,
                    is_error: true,
                    diff: None,
                };
            }
        };
        let within = Duration::from_millis(numbers.call_timeout_ms);
        match self
            .connection
            .call(&self.tool, Some(arguments), None, within)
            .await
        {
            Ok(answer) => ToolOutput {
                text: answer.text,
                is_error: answer.is_error,
                diff: None,
            },
            Err(e) => ToolOutput {
                text: format!("Not done: {e}."),
                is_error: true,
                diff: None,
            },
        }
    }
}

/// `<server>__<tool>` as a model API takes a function name: letters, digits, `_` and `-`, at most
/// 64 characters.
fn exposed_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut name = format!("{}__{}", clean(server), clean(tool));
    name.truncate(NAME_MAX);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_what_a_model_api_takes() {
        assert_eq!(exposed_name("files", "read_file"), "files__read_file");
        assert_eq!(exposed_name("my server", "do.it/now"), "my_server__do_it_now");
        assert_eq!(exposed_name("é", "t"), "___t");
        assert_eq!(exposed_name(&"s".repeat(80), "t").len(), NAME_MAX);
    }

    #[test]
    fn the_link_ignores_servers_and_says_which() {
        assert_eq!(ignored_on_the_link(&[]), None);
        let named = vec![McpServer::Sse {
            name: "web".into(),
            url: "http://x".into(),
        }];
        let notice = ignored_on_the_link(&named).unwrap();
        assert!(notice.contains("web") && notice.contains("were not started"));
    }
}
