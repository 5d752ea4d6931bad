//! `show` as the engine calls it: planned and judged as the `read` of its path would be (allowed
//! inside the folders, denied outside them or on a protected path: never asked), then sent to the
//! client's viewer (`engine::show`).

use futures_util::future::BoxFuture;

use super::judged::{self, Judged, Judging, Prepared, Running};
use super::{Tool, Turn};
use crate::engine::approvals::CardFacts;
use crate::engine::model::ToolCall;
use crate::engine::session::ToolResult;
use crate::engine::show;
use crate::tools::{self, Planned, ToolDefinition, ToolName, ToolOutput};
use lembas_protocol::update::ToolKind;

pub(super) struct ShowTool;

impl Tool for ShowTool {
    fn name(&self) -> &str {
        ToolName::Show.as_str()
    }

    fn definition(&self, decisions: &crate::decisions::Decisions) -> ToolDefinition {
        show::definition(&decisions.show)
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(judged::call(self, turn, call))
    }
}

impl Judged for ShowTool {
    /// The file planned, and the line to scroll to.
    type Work = (Planned, Option<u64>);

    fn prepare(&self, call: &ToolCall, at: &Judging<'_>) -> Result<Prepared<Self::Work>, String> {
        let (planned, line, raw_input) = show::plan(&call.arguments, at.ctx)?;
        Ok(Prepared {
            title: planned.title.clone(),
            kind: ToolKind::Read,
            raw_input,
            judgement: tools::judge(&planned, at.mode, at.ctx),
            always: String::new(),
            // Judged as a read, which never asks.
            grant: None,
            facts: CardFacts::default(),
            granted: false,
            command: None,
            shown: Vec::new(),
            locations: Vec::new(),
            work: (planned, line),
        })
    }

    async fn run<'a>(&'a self, work: Self::Work, at: Running<'a>) -> ToolOutput {
        let (planned, line) = work;
        show::run(
            at.turn.engine,
            at.turn.session,
            &at.call.id,
            &planned,
            line,
            at.ctx,
        )
        .await
    }
}
