//! MCP as a client, over the official SDK (`rmcp`): the instance's memory at `<server>/mcp`
//! (Streamable HTTP, with the device's token) and the MCP servers an editor names in `session/new`
//! (a program on stdio, or an HTTP address). Every request is bounded in time, and every failure is
//! one sentence naming the server, for the model or the editor: a server that does not start, exits
//! mid-call, hangs or answers garbage never takes the session with it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, MetaObject,
    ReadResourceRequestParams, RequestMetaObject,
};
use rmcp::service::{RoleClient, RunningService, serve_client};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Map, Value, json};
use tokio::io::AsyncBufReadExt;

use crate::keychain::Token;
use crate::poison::Recover;
use crate::tools::ToolDefinition;

/// Where a server is and how to reach it.
pub enum Endpoint {
    /// A program the device starts and speaks to on its standard input and output.
    Stdio {
        command: PathBuf,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: PathBuf,
    },
    /// Streamable HTTP at `url`, with these headers and, for the instance, the device's token.
    Http {
        url: String,
        headers: Vec<(String, String)>,
        bearer: Option<Token>,
    },
}

/// Why a server could not be used, said so a person (or a model) knows what happened.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the MCP server {server} could not be started: {why}")]
    Start { server: String, why: String },
    #[error("the MCP server {server} did not answer within {seconds} s")]
    Timeout { server: String, seconds: u64 },
    #[error("the MCP server {server} failed: {why}")]
    Failed { server: String, why: String },
}

impl McpError {
    /// The error as a sentence of its own: capitalised, with its full stop.
    pub fn sentence(&self) -> String {
        let said = self.to_string();
        let mut chars = said.chars();
        let first = chars
            .next()
            .map(|c| c.to_uppercase().collect::<String>())
            .unwrap_or_default();
        format!("{first}{}.", chars.as_str().trim_end_matches('.'))
    }
}

/// A tool a server offers, as its `tools/list` gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl ToolInfo {
    /// The tool as a model API's function, named `name` and described by `description`; a schema
    /// that is not an object is read as taking any object.
    pub fn as_function(&self, name: &str, description: &str) -> ToolDefinition {
        let parameters = if self.input_schema.is_object() {
            self.input_schema.clone()
        } else {
            json!({ "type": "object" })
        };
        ToolDefinition::function(name, description, parameters)
    }
}

/// A call's arguments as MCP takes them: an object (none given: an empty one); anything else is
/// the model's mistake, said in a sentence.
pub fn object_arguments(tool: &str, arguments: &Value) -> Result<Map<String, Value>, String> {
    match arguments {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(Map::new()),
        _ => Err(format!("The arguments of {tool} must be an object.")),
    }
}

/// What a tool call gave back: its text contents joined, and whether the server said it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    pub text: String,
    pub is_error: bool,
}

/// How much of a stdio server's standard error is kept to explain why it stopped.
const STDERR_KEPT: usize = 2000;

/// One server, started (or reached) and initialized.
pub struct Connection {
    name: String,
    service: RunningService<RoleClient, ClientConfig>,
    /// The end of a stdio server's standard error, for the sentence when it fails.
    stderr: Arc<Mutex<String>>,
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("lembas", env!("CARGO_PKG_VERSION")),
    )
}

impl Connection {
    /// Starts or reaches `endpoint` and initializes it, within `within`.
    pub async fn open(
        name: &str,
        endpoint: Endpoint,
        http: &reqwest::Client,
        within: Duration,
    ) -> Result<Connection, McpError> {
        let start = |why: String| McpError::Start {
            server: name.to_string(),
            why,
        };
        let stderr = Arc::new(Mutex::new(String::new()));
        let opening = async {
            match endpoint {
                Endpoint::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => {
                    let mut program = tokio::process::Command::new(&command);
                    program.args(&args).envs(env).current_dir(&cwd);
                    let (transport, err) = TokioChildProcess::builder(program)
                        .stderr(Stdio::piped())
                        .spawn()
                        .map_err(|e| start(format!("{}: {e}", command.display())))?;
                    if let Some(err) = err {
                        keep_tail(err, stderr.clone());
                    }
                    serve_client(client_config(), transport)
                        .await
                        .map_err(|e| start(with_stderr(e.to_string(), &stderr)))
                }
                Endpoint::Http { url, headers, bearer } => {
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
                    if let Some(token) = bearer {
                        config = config.auth_header(token.expose().to_string());
                    }
                    let mut custom = HashMap::new();
                    for (header, value) in headers {
                        let header = HeaderName::try_from(header.as_str())
                            .map_err(|e| start(format!("the header name {header:?}: {e}")))?;
                        let value = HeaderValue::try_from(value.as_str())
                            .map_err(|e| start(format!("the value of {header}: {e}")))?;
                        custom.insert(header, value);
                    }
                    let transport = StreamableHttpClientTransport::with_client(
                        http.clone(),
                        config.custom_headers(custom),
                    );
                    serve_client(client_config(), transport)
                        .await
                        .map_err(|e| start(e.to_string()))
                }
            }
        };
        let service = tokio::time::timeout(within, opening)
            .await
            .map_err(|_| McpError::Timeout {
                server: name.to_string(),
                seconds: within.as_secs().max(1),
            })??;
        Ok(Connection {
            name: name.to_string(),
            service,
            stderr,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's tools, every page of them.
    pub async fn tools(&self, within: Duration) -> Result<Vec<ToolInfo>, McpError> {
        let tools = self.bounded(within, self.service.peer().list_all_tools()).await?;
        Ok(tools
            .into_iter()
            .map(|tool| ToolInfo {
                name: tool.name.to_string(),
                description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*tool.input_schema).clone()),
            })
            .collect())
    }

    /// Calls `tool`; `scope`, when given, goes as `_meta.lembas.scope` (the chat the call is made
    /// for, on the instance's own endpoint).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        scope: Option<&str>,
        within: Duration,
    ) -> Result<ToolAnswer, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        params.meta = scope.map(scope_meta);
        let result = self
            .bounded(within, self.service.peer().call_tool(params))
            .await?;
        // Read as JSON: the content blocks' shapes grow with MCP's versions; their text is what
        // the model reads, and anything else is named.
        let result = serde_json::to_value(&result).unwrap_or(Value::Null);
        Ok(ToolAnswer {
            text: content_text(&result["content"]),
            is_error: result["isError"].as_bool().unwrap_or(false),
        })
    }

    /// The text of the resource `uri` (its text contents joined); `scope` as for [`Self::call`].
    pub async fn read_text(
        &self,
        uri: &str,
        scope: Option<&str>,
        within: Duration,
    ) -> Result<String, McpError> {
        let mut params = ReadResourceRequestParams::new(uri);
        params.meta = scope.map(scope_meta);
        let result = self
            .bounded(within, self.service.peer().read_resource(params))
            .await?;
        let result = serde_json::to_value(&result).unwrap_or(Value::Null);
        let texts: Vec<&str> = result["contents"]
            .as_array()
            .map(|all| all.iter().filter_map(|c| c["text"].as_str()).collect())
            .unwrap_or_default();
        Ok(texts.join("\n"))
    }

    /// Ends the connection; a stdio server's process ends with it.
    pub async fn close(self) {
        let mut service = self.service;
        if let Err(e) = service.close().await {
            tracing::debug!("closing the MCP server {}: {e}", self.name);
        }
    }

    async fn bounded<T>(
        &self,
        within: Duration,
        request: impl Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, McpError> {
        match tokio::time::timeout(within, request).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(McpError::Failed {
                server: self.name.clone(),
                why: with_stderr(e.to_string(), &self.stderr),
            }),
            Err(_) => Err(McpError::Timeout {
                server: self.name.clone(),
                seconds: within.as_secs().max(1),
            }),
        }
    }
}

fn scope_meta(session_id: &str) -> RequestMetaObject {
    let mut meta = Map::new();
    meta.insert("lembas".to_string(), json!({ "scope": session_id }));
    RequestMetaObject(MetaObject(meta))
}

/// The text of MCP content blocks: text as it is, anything else named in brackets.
fn content_text(content: &Value) -> String {
    let Some(blocks) = content.as_array() else {
        return String::new();
    };
    blocks
        .iter()
        .map(|block| match block["type"].as_str() {
            Some("text") => block["text"].as_str().unwrap_or_default().to_string(),
            Some("resource") => block["resource"]["text"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| "[a resource]".to_string()),
            Some(kind) => format!("[{kind} content]"),
            None => "[content of no type]".to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Keeps the last [`STDERR_KEPT`] characters a server writes to its standard error.
fn keep_tail(stderr: tokio::process::ChildStderr, kept: Arc<Mutex<String>>) {
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut kept = kept.lock().recover();
            kept.push_str(&line);
            kept.push('\n');
            let excess = kept.chars().count().saturating_sub(STDERR_KEPT);
            if excess > 0 {
                let cut = kept.char_indices().nth(excess).map_or(kept.len(), |(i, _)| i);
                kept.drain(..cut);
            }
        }
    });
}

fn with_stderr(why: String, stderr: &Mutex<String>) -> String {
    let said = stderr.lock().recover();
    let said = said.trim();
    if said.is_empty() {
        why
    } else {
        format!("{why} (it said: {said})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_blocks_read_as_text() {
        let blocks = json!([
            { "type": "text", "text": "one" },
            { "type": "image", "data": "AAAA", "mimeType": "image/png" },
            { "type": "resource", "resource": { "uri": "x", "text": "two" } },
            { "text": "untyped" },
        ]);
        assert_eq!(
            content_text(&blocks),
            "one\n[image content]\ntwo\n[content of no type]"
        );
        assert_eq!(content_text(&json!("not a list")), "");
    }

    #[test]
    fn the_scope_goes_under_lembas() {
        let meta = scope_meta("s1");
        assert_eq!(
            serde_json::to_value(&meta).unwrap(),
            json!({ "lembas": { "scope": "s1" } })
        );
    }
}
