//! What the session adds to the model's prompt and tools: the instance's memory, read as it
//! starts (or at its first turn, opened from the store), and the MCP servers an editor named for
//! it. Each method is one whole operation under the session's lock.

use lembas_protocol::session::McpReport;
use std::sync::Arc;

use super::Session;
use crate::engine::mcp_servers::{Offered, SessionServers};
use crate::engine::memory::{self, SessionMemory};
use crate::tools::ToolDefinition;

/// The tools a session offers of its own beside the device's: the instance's memory tool and the
/// editor's MCP servers' tools.
pub struct SessionTools {
    pub memory: Option<ToolDefinition>,
    pub mcp: Vec<(Offered, ToolDefinition)>,
}

impl Session {
    /// The instance's memory is still to be read (a session opened from the store).
    pub fn memory_unread(&self) -> bool {
        self.state().memory == SessionMemory::NotRead
    }

    pub fn set_memory(&self, memory: SessionMemory) {
        self.state().memory = memory;
    }

    /// What calls of the memory tool carry as `_meta.lembas.scope`.
    pub fn memory_scope(&self) -> Option<String> {
        match &self.state().memory {
            SessionMemory::Read { scope, .. } => scope.clone(),
            _ => None,
        }
    }

    /// What the system text says after the device's own, from the session: the instance's memory,
    /// then the editor's servers that did not start.
    pub fn prompt_sections(&self) -> Vec<String> {
        let state = self.state();
        [
            memory::section(&state.memory),
            state.mcp.as_ref().and_then(|s| s.section()),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The session's own tools for the next step.
    pub fn session_tools(&self) -> SessionTools {
        let state = self.state();
        SessionTools {
            memory: memory::definition(&state.memory),
            mcp: state.mcp.as_ref().map(|s| s.tools()).unwrap_or_default(),
        }
    }

    /// The session runs the servers an editor named (started, or tried).
    pub fn has_mcp_servers(&self) -> bool {
        self.state().mcp.is_some()
    }

    /// `started` kept as the session's servers unless it has some already (another open started
    /// them meanwhile: `started` is dropped); the report of the servers it keeps.
    pub fn keep_mcp_servers(&self, started: Arc<SessionServers>) -> Vec<McpReport> {
        let mut state = self.state();
        state.mcp.get_or_insert(started).report()
    }

    /// What the session's servers are, as `session/new` and `session/load` report them.
    pub fn mcp_report(&self) -> Option<Vec<McpReport>> {
        self.state().mcp.as_ref().map(|s| s.report())
    }

    /// The session's MCP servers taken out of it, to stop (`None` when it runs none, or a call
    /// still holds them: they end with that call).
    pub fn take_mcp_servers(&self) -> Option<SessionServers> {
        let taken = self.state().mcp.take();
        taken.and_then(Arc::into_inner)
    }

    /// The session's MCP servers stopped (it closed or was deleted), in the background.
    pub fn stop_mcp_servers(&self) {
        if let Some(servers) = self.take_mcp_servers() {
            tokio::spawn(servers.stop());
        }
    }
}
