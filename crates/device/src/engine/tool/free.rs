//! The tools that touch nothing on this computer, so no judge and no approval: they run in every
//! mode and are reported as ACP `think` (or `read`) calls (`engine::think`). Questions and plans
//! for the person, the structured plan, the session's own background jobs, the instance's memory.

use futures_util::future::BoxFuture;

use super::{Tool, Turn};
use crate::engine::ask::{self, AskTool};
use crate::engine::instance_memory;
use crate::engine::jobs::{self, JobTool};
use crate::engine::model::ToolCall;
use crate::engine::plan_state::{self, PlanTool};
use crate::engine::session::ToolResult;
use crate::tools::{ToolDefinition, ToolName};

/// `ask_user` and `plan_submit`.
pub(super) struct Asking(pub AskTool);

impl Tool for Asking {
    fn name(&self) -> &str {
        match self.0 {
            AskTool::Questions => ToolName::AskUser.as_str(),
            AskTool::Plan => ToolName::PlanSubmit.as_str(),
        }
    }

    fn definition(&self, decisions: &crate::decisions::Decisions) -> ToolDefinition {
        ask::definition(self.0, &decisions.question)
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(ask::run(turn.engine, turn.session, turn.turn_id, call, self.0))
    }
}

/// `plan_write`, `plan_update`, `plan_clear`.
pub(super) struct Planning(pub PlanTool);

impl Tool for Planning {
    fn name(&self) -> &str {
        match self.0 {
            PlanTool::Write => ToolName::PlanWrite.as_str(),
            PlanTool::Update => ToolName::PlanUpdate.as_str(),
            PlanTool::Clear => ToolName::PlanClear.as_str(),
        }
    }

    fn definition(&self, _: &crate::decisions::Decisions) -> ToolDefinition {
        plan_state::definition(self.0)
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(plan_state::run(
            turn.engine,
            turn.session,
            turn.turn_id,
            call,
            self.0,
        ))
    }
}

/// `job_list`, `job_output`, `job_stop`: the session's own jobs only.
pub(super) struct Jobs(pub JobTool);

impl Tool for Jobs {
    fn name(&self) -> &str {
        match self.0 {
            JobTool::List => ToolName::JobList.as_str(),
            JobTool::Output => ToolName::JobOutput.as_str(),
            JobTool::Stop => ToolName::JobStop.as_str(),
        }
    }

    fn definition(&self, _: &crate::decisions::Decisions) -> ToolDefinition {
        jobs::definition(self.0)
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(jobs::run_tool(
            turn.engine,
            turn.session,
            turn.turn_id,
            call,
            self.0,
        ))
    }
}

/// `memory`: the instance's memory tool, as the instance describes it. It changes the person's
/// records on their instance, nothing on this computer.
pub(super) struct MemoryTool(pub ToolDefinition);

impl Tool for MemoryTool {
    fn name(&self) -> &str {
        ToolName::Memory.as_str()
    }

    fn definition(&self, _: &crate::decisions::Decisions) -> ToolDefinition {
        self.0.clone()
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(instance_memory::run_tool(
            turn.engine,
            turn.session,
            turn.turn_id,
            call,
        ))
    }
}
