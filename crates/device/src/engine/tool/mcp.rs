//! A tool of an MCP server the editor named for the session: judged like a write anywhere (the
//! mode table's MCP row), allowed for the chat by its offered name.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::judged::{self, Judged, Judging, Prepared, Running};
use super::{Tool, Turn};
use crate::engine::approvals::CardFacts;
use crate::engine::grants::Grant;
use crate::engine::mcp_servers::Offered;
use crate::engine::model::ToolCall;
use crate::engine::session::ToolResult;
use crate::policy::bash_judge::Decision;
use crate::policy::tools as tool_policy;
use crate::tools::{ToolDefinition, ToolOutput};
use lembas_protocol::update::ToolKind;

pub(super) struct McpTool {
    pub offered: Offered,
    /// As the server describes it.
    pub definition: ToolDefinition,
}

impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.offered.exposed
    }

    fn definition(&self, _: &crate::decisions::Decisions) -> ToolDefinition {
        self.definition.clone()
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(judged::call(self, turn, call))
    }
}

impl Judged for McpTool {
    /// The arguments, as the server takes them.
    type Work = Value;

    fn prepare(&self, call: &ToolCall, at: &Judging<'_>) -> Result<Prepared<Value>, String> {
        let offered = &self.offered;
        let args: Value = serde_json::from_str(&call.arguments)
            .map_err(|e| format!("The arguments of {} are not valid JSON: {e}.", call.name))?;
        let allowed_always = at.grants.allows_tool(&offered.exposed);
        let judgement = tool_policy::decide_mcp(at.mode, allowed_always, &offered.exposed);
        let granted = judgement.decision == Decision::Allow
            && tool_policy::decide_mcp(at.mode, false, &offered.exposed).decision != Decision::Allow;
        Ok(Prepared {
            title: format!("{} (MCP server {})", offered.tool, offered.server),
            kind: ToolKind::Other,
            raw_input: args.clone(),
            judgement,
            always: format!(
                "{} of the MCP server {} in this session",
                offered.tool, offered.server
            ),
            grant: Some(Grant::Tool {
                name: offered.exposed.clone(),
            }),
            facts: CardFacts::of_mcp(&offered.server, &offered.tool),
            granted,
            command: None,
            shown: Vec::new(),
            locations: Vec::new(),
            work: args,
        })
    }

    async fn run<'a>(&'a self, work: Value, at: Running<'a>) -> ToolOutput {
        self.offered
            .call(&work, &at.turn.engine.setup().decisions.mcp)
            .await
    }
}
