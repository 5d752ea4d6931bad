//! One tool call of the model (docs/architecture.md "A tool call"). Every tool is one type that
//! implements [`Tool`]: its name, what the model is told of it (the JSON Schema derived from its
//! arguments' struct), and how a call runs. The [`Toolbox`] of a step is what both the model's
//! tool list and a call's routing read. Tools that touch this computer are [`Judged`]: a call is
//! read into work, judged by the mode, asked of the person when the mode says ask, run, and
//! reported to the client as ACP's tool_call / tool_call_update with the `_lembas/event`s beside
//! them. The others (questions, the plan, the session's jobs, the instance's memory) touch nothing
//! here and run in every mode (`free`).

mod bash;
mod file;
mod free;
mod judged;
mod live_output;
mod mcp;
mod registry;
mod report;
mod show;
#[cfg(test)]
mod tests;

use futures_util::future::BoxFuture;
use std::sync::Arc;

use super::Engine;
use super::model::ToolCall;
use super::session::{Session, ToolResult};
use crate::tools::ToolDefinition;

pub(crate) use registry::Toolbox;

/// Where a call is made: the engine, the session, and the turn it is part of.
#[derive(Clone, Copy)]
pub(crate) struct Turn<'a> {
    pub engine: &'a Engine,
    pub session: &'a Arc<Session>,
    pub turn_id: &'a str,
}

/// A tool the model may call.
pub(crate) trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What the model is told of it.
    fn definition(&self, decisions: &crate::decisions::Decisions) -> ToolDefinition;
    /// Runs one call whole: judged (or not), asked, run, reported; what the model reads back.
    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult>;
}

/// Runs the model's call with the tool it names, among those its step was offered.
pub async fn run(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    toolbox: &Toolbox,
    call: &ToolCall,
) -> ToolResult {
    let turn = Turn {
        engine,
        session,
        turn_id,
    };
    match toolbox.find(&call.name) {
        Ok(tool) => tool.call(turn, call).await,
        // A call that names no tool offered goes back to the model.
        Err(why) => report::unreadable(turn, call, why).await,
    }
}
