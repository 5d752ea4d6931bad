//! The instance's memory over MCP (docs/protocol.md "The instance's memory"): logged in with a token
//! whose scope has `memory` (or the older `library`), a session reads `lembas://memory` from the
//! instance's `<server>/mcp` as it starts, and the model's `memory` calls go to its `tools/call`. A
//! call made for a session the link's client opened carries `_meta.lembas.scope`: the session's id.
//! A server that hangs, fails or answers garbage costs the session its memory, said to the model in
//! a sentence, never the session.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::Engine;
use super::memory::{MEMORY, MEMORY_URI, SessionMemory, definition};
use super::model::{Instance, ToolCall};
use super::session::{Session, ToolResult};
use super::think;
use crate::decisions::decisions;
use crate::mcp::{Connection, Endpoint};

/// The path of the instance's MCP endpoint.
const MCP_PATH: &str = "mcp";
/// The scopes that carry the instance's memory (`library` is the older name).
const MEMORY_SCOPES: [&str; 2] = ["memory", "library"];

/// The engine's way to the instance's `/mcp`: one connection, opened when first needed and
/// dropped when it fails (the next session opens it again), and whether the token's scope has
/// memory, read once per server.
#[derive(Default)]
pub struct MemoryLink {
    held: tokio::sync::Mutex<Option<Held>>,
}

impl MemoryLink {
    /// A new login may have replaced the token (and its scope): read both again when next needed.
    pub async fn forget(&self) {
        *self.held.lock().await = None;
    }
}

struct Held {
    base: url::Url,
    has_memory: bool,
    connection: Option<Arc<Connection>>,
}

fn timeouts() -> (Duration, Duration) {
    let numbers = &decisions().mcp;
    (
        Duration::from_millis(numbers.memory_read_timeout_ms),
        Duration::from_millis(numbers.call_timeout_ms),
    )
}

impl Engine {
    /// What calls made for a session carry as `_meta.lembas.scope`: its id when the link's client
    /// opened it (an editor's sessions are the device's own).
    pub(crate) fn memory_scope(&self, session_id: &str) -> Option<String> {
        (!self.serves_editor()).then(|| session_id.to_string())
    }

    /// The session's memory as it starts: read from the instance when the token may, within the
    /// read's time limit. `scope`: the session's id when the link's client opened it.
    pub(crate) async fn read_memory(&self, scope: Option<String>) -> SessionMemory {
        let Ok(instance) = self.instance().await else {
            return SessionMemory::Absent;
        };
        let (read_within, _) = timeouts();
        let connection = match self.memory_connection(&instance, read_within).await {
            Ok(Some(connection)) => connection,
            Ok(None) => return SessionMemory::Absent,
            Err(why) => return SessionMemory::Unreadable(why),
        };
        // Side by side: the session's start waits for the slower of the two, not both.
        let reading = async {
            let (text, tools) = tokio::join!(
                connection.read_text(MEMORY_URI, scope.as_deref(), read_within),
                connection.tools(read_within),
            );
            Ok::<_, crate::mcp::McpError>((text?, tools?))
        };
        match reading.await {
            Ok((text, tools)) => SessionMemory::Read {
                text,
                tool: tools.into_iter().find(|t| t.name == MEMORY),
                scope,
            },
            Err(e) => {
                self.drop_memory_connection().await;
                SessionMemory::Unreadable(e.to_string())
            }
        }
    }

    /// The connection to `<server>/mcp`, opened when none is; `None` when the token's scope has
    /// no memory.
    async fn memory_connection(
        &self,
        instance: &Instance,
        within: Duration,
    ) -> Result<Option<Arc<Connection>>, String> {
        let mut held = self.0.memory.held.lock().await;
        if held.as_ref().is_none_or(|h| h.base != instance.base) {
            // An instance that says no scope offers no memory (asked again for the next session).
            let scope = match instance.scope().await {
                Ok(scope) => scope,
                Err(why) => {
                    tracing::warn!("{why}: the session has no memory of the instance");
                    return Ok(None);
                }
            };
            let has_memory = scope.split_whitespace().any(|s| MEMORY_SCOPES.contains(&s));
            *held = Some(Held {
                base: instance.base.clone(),
                has_memory,
                connection: None,
            });
        }
        let Some(held) = held.as_mut() else {
            return Ok(None);
        };
        if !held.has_memory {
            return Ok(None);
        }
        if let Some(connection) = &held.connection {
            return Ok(Some(connection.clone()));
        }
        let url = instance
            .base
            .join(MCP_PATH)
            .map_err(|e| format!("the server address cannot take /{MCP_PATH}: {e}"))?;
        let endpoint = Endpoint::Http {
            url: url.to_string(),
            headers: Vec::new(),
            bearer: Some(instance.token.clone()),
        };
        let connection = Connection::open("of the instance", endpoint, &instance.http, within)
            .await
            .map(Arc::new)
            .map_err(|e| e.to_string())?;
        held.connection = Some(connection.clone());
        Ok(Some(connection))
    }

    async fn drop_memory_connection(&self) {
        let taken = self
            .0
            .memory
            .held
            .lock()
            .await
            .as_mut()
            .and_then(|h| h.connection.take());
        // Closed aside: a server that hangs could hold the close as long as it held the request.
        if let Some(connection) = taken.and_then(Arc::into_inner) {
            tokio::spawn(connection.close());
        }
    }
}

/// Whether the model's call is the instance's memory tool, offered to this session.
pub fn is_memory_call(session: &Session, name: &str) -> bool {
    name == MEMORY && definition(&session.state().memory).is_some()
}

/// A call of the memory tool: sent to the instance's `tools/call`, allowed in every mode (it
/// changes the person's records on their instance, nothing on this computer).
pub async fn run_tool(engine: &Engine, session: &Arc<Session>, turn_id: &str, call: &ToolCall) -> ToolResult {
    let scope = match &session.state().memory {
        SessionMemory::Read { scope, .. } => scope.clone(),
        _ => None,
    };
    let work = async {
        let arguments = match think::arguments(call)? {
            Value::Object(map) => Some(map),
            Value::Null => Some(Map::new()),
            _ => return Err("The arguments of memory must be an object.".to_string()),
        };
        let instance = engine.instance().await?;
        let (_, call_within) = timeouts();
        let connection = engine
            .memory_connection(&instance, call_within)
            .await?
            .ok_or("This device's login no longer has the instance's memory.")?;
        match connection
            .call(MEMORY, arguments, scope.as_deref(), call_within)
            .await
        {
            Ok(answer) if answer.is_error => Err(answer.text),
            Ok(answer) => Ok(answer.text),
            Err(e) => {
                engine.drop_memory_connection().await;
                Err(format!("Not done: {e}."))
            }
        }
    };
    think::reported_as(
        engine,
        session,
        turn_id,
        call,
        "Update the instance's memory",
        "other",
        work,
    )
    .await
}
