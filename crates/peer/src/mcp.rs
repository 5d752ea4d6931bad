//! The instance's memory over MCP at `/mcp` (the engine spec's "The instance's memory", the ACP
//! spec's "Memory"): Streamable HTTP made with the official SDK (`rmcp`), behind the same Bearer
//! token as the rest of the HTTP API. It serves the resource `lembas://memory` (the entries as a
//! system prompt's memory block shows them) and the tool `memory` (add, replace, remove), keeps the
//! entries in [`PeerConfig::memory`](crate::PeerConfig::memory), and records every tool call and
//! resource read with the `params._meta.lembas.scope` it carried, so a test sees which session a
//! call was made for. [`McpFault`] makes it hang, fail or answer garbage, for the device's tests of
//! a broken instance.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, RequestMetaObject, Resource, ResourceContents,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::answers::{authorized, detail, unauthorized};
use crate::{PeerState, lock};

/// The path of the instance's MCP endpoint.
pub const MCP_PATH: &str = "/mcp";
/// The resource whose text is the memory block of a system prompt.
pub const MEMORY_URI: &str = "lembas://memory";
/// The tool that changes the memory.
pub const MEMORY_TOOL: &str = "memory";
/// The body of a [`McpFault::Garbage`] answer.
pub const GARBAGE_BODY: &str = "this is not json-rpc{";

/// How `/mcp` misbehaves, for tests of a device facing a broken instance. Applied to POSTs (every
/// JSON-RPC message the client sends) after the token is checked, so a wrong token still gets 401.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpFault {
    /// Never answer: the request stays open until the client gives up or the peer stops.
    Hang,
    /// HTTP 500 with a short JSON body.
    ServerError,
    /// HTTP 200, `content-type: application/json`, body [`GARBAGE_BODY`].
    Garbage,
}

/// One `tools/call` or `resources/read` the peer's `/mcp` received.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    /// `"tools/call"` or `"resources/read"`.
    pub method: String,
    /// The tool's name or the resource's URI.
    pub target: String,
    /// `params._meta.lembas.scope` when it was a string (the session the call was made for).
    pub scope: Option<String>,
}

/// The memory as a system prompt's memory block shows it: `- <entry>` a line; no entries, "".
pub fn memory_text(entries: &[String]) -> String {
    entries
        .iter()
        .map(|entry| format!("- {entry}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tool as `tools/list` gives it.
pub fn memory_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["add", "replace", "remove"],
                "description": "add a new entry, replace an entry with new content, or remove an entry",
            },
            "content": {
                "type": "string",
                "description": "the entry to add, or the new text of the entry replaced (add and replace)",
            },
            "old_text": {
                "type": "string",
                "description": "the entry (or a unique part of it) to replace or remove",
            },
        },
        "required": ["action"],
    });
    Tool::new(
        MEMORY_TOOL,
        "Keep facts about the person across chats: their preferences, their projects, what they asked \
         you to remember. Add a short entry when you learn something worth keeping; replace one that \
         changed; remove one that is wrong or no longer wanted. Every entry is shown at the start of \
         each new chat.",
        json_object(schema),
    )
}

fn json_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        // Only called with object literals.
        _ => JsonObject::new(),
    }
}

/// The resource as `resources/list` gives it.
fn memory_resource() -> Resource {
    Resource::new(MEMORY_URI, "memory")
        .with_title("Memory")
        .with_description("What is remembered about the person, as the memory block of a system prompt")
        .with_mime_type("text/markdown")
}

/// Applies one `memory` call to the entries: the sentence for the model, or why nothing changed.
pub(crate) fn apply_memory(
    entries: &mut Vec<String>,
    arguments: &JsonObject,
) -> Result<&'static str, String> {
    // Blank text counts as missing: an empty `old_text` would be part of every entry.
    let text = |field: &str| {
        arguments
            .get(field)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|text| !text.is_empty())
    };
    let missing = |action: &str, field: &str| format!("The {action} action needs {field}.");
    let Some(action) = arguments.get("action").and_then(Value::as_str) else {
        return Err("The memory tool needs an action: add, replace or remove.".to_string());
    };
    match action {
        "add" => {
            let content = text("content").ok_or_else(|| missing("add", "content: the fact to keep"))?;
            entries.push(content.to_string());
            Ok("Saved.")
        }
        "replace" => {
            let old_text =
                text("old_text").ok_or_else(|| missing("replace", "old_text: the entry to replace"))?;
            let content = text("content").ok_or_else(|| missing("replace", "content: the new entry"))?;
            let index = the_one_entry(entries, old_text)?;
            entries[index] = content.to_string();
            Ok("Replaced.")
        }
        "remove" => {
            let old_text =
                text("old_text").ok_or_else(|| missing("remove", "old_text: the entry to remove"))?;
            let index = the_one_entry(entries, old_text)?;
            entries.remove(index);
            Ok("Removed.")
        }
        other => Err(format!("Unknown action \"{other}\": use add, replace or remove.")),
    }
}

/// The index of the only entry containing `part`.
fn the_one_entry(entries: &[String], part: &str) -> Result<usize, String> {
    let mut matching = entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| entry.contains(part))
        .map(|(index, _)| index);
    match (matching.next(), matching.count()) {
        (None, _) => Err(format!("No memory entry contains \"{part}\".")),
        (Some(index), 0) => Ok(index),
        (Some(_), others) => Err(format!(
            "{} memory entries contain \"{part}\": give more of the one you mean.",
            others + 1
        )),
    }
}

/// `lembas.scope` of a request's `_meta`, when it is a string.
fn scope_of(meta: &RequestMetaObject) -> Option<String> {
    meta.get("lembas")?.get("scope")?.as_str().map(str::to_string)
}

/// The scope a request carried. rmcp moves `params._meta` into the request context as it decodes
/// the request; the params' own copy is read too, in case a version keeps it there.
fn request_scope(
    context: &RequestContext<RoleServer>,
    params_meta: Option<&RequestMetaObject>,
) -> Option<String> {
    scope_of(&context.meta).or_else(|| params_meta.and_then(scope_of))
}

/// One MCP session's server: every session shares the peer's state.
#[derive(Clone)]
struct MemoryServer {
    state: Arc<PeerState>,
}

impl MemoryServer {
    fn record(&self, method: &str, target: &str, scope: Option<String>) {
        tracing::info!(%method, %target, ?scope, "mcp");
        lock(&self.state.mcp_log).push(McpCall {
            method: method.to_string(),
            target: target.to_string(),
            scope,
        });
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "lembas-reference-peer",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions("The person's memory: read lembas://memory, change it with the memory tool.")
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == MEMORY_TOOL).then(memory_tool)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![memory_tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.record(
            "tools/call",
            &request.name,
            request_scope(&context, request.meta.as_ref()),
        );
        if request.name != MEMORY_TOOL {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let outcome = apply_memory(&mut lock(&self.state.config).memory, &arguments);
        Ok(match outcome {
            Ok(sentence) => CallToolResult::success(vec![ContentBlock::text(sentence)]),
            Err(why) => CallToolResult::error(vec![ContentBlock::text(why)]),
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![memory_resource()]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.record(
            "resources/read",
            &request.uri,
            request_scope(&context, request.meta.as_ref()),
        );
        if request.uri != MEMORY_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}: this server has {MEMORY_URI} only", request.uri),
                None,
            ));
        }
        let text = memory_text(&lock(&self.state.config).memory);
        let contents = ResourceContents::text(text, MEMORY_URI).with_mime_type("text/markdown");
        // Fresh for no time: the memory changes under the client, whose SDK would otherwise keep
        // a copy for as long as a result allows.
        Ok(ReadResourceResult::new(vec![contents]).with_ttl_ms(0).into())
    }
}

/// `/mcp`, behind the token check and the fault injection.
pub(crate) fn router<S: Clone + Send + Sync + 'static>(state: Arc<PeerState>) -> Router<S> {
    let config = StreamableHttpServerConfig::default()
        // The peer may listen on any address (a LAN demo); the token is what guards it, as on the
        // rest of its API, so the Host header is not judged.
        .disable_allowed_hosts();
    // Cancelled when the peer stops, so open event streams end instead of holding up the
    // graceful shutdown for its whole grace.
    let stop_sessions = config.cancellation_token.clone();
    let mut shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        let _ = shutdown.wait_for(|stopped| *stopped).await;
        stop_sessions.cancel();
    });
    let server_state = state.clone();
    let service = StreamableHttpService::new(
        move || {
            Ok(MemoryServer {
                state: server_state.clone(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .route_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(state, gate))
}

/// The token check every `/mcp` request passes, then the configured fault on POSTs.
async fn gate(State(state): State<Arc<PeerState>>, request: Request, next: Next) -> Response {
    let (token, fault) = {
        let config = lock(&state.config);
        (config.token.clone(), config.mcp_fault)
    };
    if !authorized(request.headers(), &token) {
        return unauthorized();
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    match fault {
        None => next.run(request).await,
        Some(McpFault::Hang) => {
            // Ends when the peer stops (or is dropped), so a stop is not held up by the hang.
            let mut shutdown = state.shutdown.clone();
            let _ = shutdown.wait_for(|stopped| *stopped).await;
            detail(StatusCode::SERVICE_UNAVAILABLE, "the reference peer stopped")
        }
        Some(McpFault::ServerError) => detail(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the reference peer was told to fail /mcp",
        ),
        Some(McpFault::Garbage) => {
            ([(header::CONTENT_TYPE, "application/json")], GARBAGE_BODY).into_response()
        }
    }
}

#[cfg(test)]
mod tests;
