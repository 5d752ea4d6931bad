//! The instance's memory over MCP (docs/protocol.md "The instance's memory"): logged in with a token
//! whose scope has `memory` (or the older `library`), a session reads `lembas://memory` from the
//! instance's `<server>/mcp` as it starts, and the model's `memory` calls go to its `tools/call`. A
//! call made for a session the link's client opened carries `_meta.lembas.scope`: the session's id.
//! A server that hangs, fails or answers garbage costs the session its memory, said to the model in
//! a sentence, never the session.

use std::sync::Arc;
use std::time::Duration;

use super::Engine;
use super::memory::{MEMORY, MEMORY_URI, SessionMemory};
use super::model::{HttpInstance, Instance, ToolCall};
use super::session::{Session, ToolResult};
use super::unjudged_call;
use crate::decisions::McpNumbers;
use crate::mcp::{Connection, Endpoint, object_arguments};

/// The path of the instance's MCP endpoint.
const MCP_PATH: &str = "mcp";
/// The scopes that carry the instance's memory (`library` is the older name).
const MEMORY_SCOPES: [&str; 2] = ["memory", "library"];

fn timeouts(numbers: &McpNumbers) -> (Duration, Duration) {
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
        if !self.has_memory(&instance).await {
            return SessionMemory::Absent;
        }
        // A script's scope never has memory.
        let Instance::Http(instance) = instance else {
            return SessionMemory::Absent;
        };
        let (read_within, _) = timeouts(&self.setup().decisions.mcp);
        let connection = match open(&instance, read_within).await {
            Ok(connection) => connection,
            Err(why) => return SessionMemory::Unreadable(why),
        };
        // Side by side: the session's start waits for the slower of the two, not both.
        let (text, tools) = tokio::join!(
            connection.read_text(MEMORY_URI, scope.as_deref(), read_within),
            connection.tools(read_within),
        );
        close(connection);
        match (text, tools) {
            (Ok(text), Ok(tools)) => SessionMemory::Read {
                text,
                tool: tools.into_iter().find(|t| t.name == MEMORY),
                scope,
            },
            (Err(e), _) | (_, Err(e)) => SessionMemory::Unreadable(e.to_string()),
        }
    }

    /// Whether the token's scope has memory (or the older `library`). An instance that says no
    /// scope, or cannot be asked, offers none (and is asked again next time). Each use of the
    /// memory opens its own connection to `<server>/mcp` and closes it: nothing is held between
    /// sessions (a long-lived MCP session keeps an event stream open and outlives an instance that
    /// restarts).
    async fn has_memory(&self, instance: &Instance) -> bool {
        match self.about(instance).await {
            Ok(about) => about.scope.split_whitespace().any(|s| MEMORY_SCOPES.contains(&s)),
            Err(why) => {
                tracing::warn!("{why}: the session has no memory of the instance");
                false
            }
        }
    }
}

/// A connection to the instance's `<server>/mcp` with the device's token.
async fn open(instance: &HttpInstance, within: Duration) -> Result<Connection, String> {
    let url = instance
        .base
        .join(MCP_PATH)
        .map_err(|e| format!("the server address cannot take /{MCP_PATH}: {e}"))?;
    let endpoint = Endpoint::Http {
        url: url.to_string(),
        headers: Vec::new(),
        bearer: Some(instance.token.clone()),
    };
    Connection::open("of the instance", endpoint, &instance.http, within)
        .await
        .map_err(|e| e.to_string())
}

/// Closed aside: a server that hangs could hold the close as long as it held the request.
fn close(connection: Connection) {
    tokio::spawn(connection.close());
}

/// A call of the memory tool: sent to the instance's `tools/call`, allowed in every mode (it
/// changes the person's records on their instance, nothing on this computer).
pub async fn run_tool(engine: &Engine, session: &Arc<Session>, turn_id: &str, call: &ToolCall) -> ToolResult {
    let scope = session.memory_scope();
    let work = async {
        let arguments = Some(object_arguments(MEMORY, &unjudged_call::arguments(call)?)?);
        let instance = engine.instance().await?;
        let no_memory = || "This device's login no longer has the instance's memory.".to_string();
        if !engine.has_memory(&instance).await {
            return Err(no_memory());
        }
        // A script's scope never has memory.
        let Instance::Http(instance) = instance else {
            return Err(no_memory());
        };
        let (_, call_within) = timeouts(&engine.setup().decisions.mcp);
        let connection = open(&instance, call_within)
            .await
            .map_err(|why| format!("Not done: {why}."))?;
        let called = connection
            .call(MEMORY, arguments, scope.as_deref(), call_within)
            .await;
        close(connection);
        match called {
            Ok(answer) if answer.is_error => Err(answer.text),
            Ok(answer) => Ok(answer.text),
            Err(e) => Err(format!("Not done: {e}.")),
        }
    };
    unjudged_call::reported_as(
        engine,
        session,
        turn_id,
        call,
        "Update the instance's memory",
        lembas_protocol::update::ToolKind::Other,
        work,
    )
    .await
}
