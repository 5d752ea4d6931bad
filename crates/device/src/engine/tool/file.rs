//! The file tools (`read`, `ls`, `glob`, `grep`, `write`, `edit`) as the engine calls them: planned
//! and run by `crate::tools`, judged by the tool policy on their resolved path, a write in the
//! project allowed by the chat's "Allow for this chat".

use futures_util::future::BoxFuture;

use super::judged::{self, Judged, Judging, Prepared, Running};
use super::{Tool, Turn};
use crate::engine::approvals::CardFacts;
use crate::engine::grants::Grant;
use crate::engine::model::ToolCall;
use crate::engine::session::ToolResult;
use crate::policy::bash_judge::{Decision, Judgement};
use crate::policy::tools::{self as tool_policy, Access, Place};
use crate::tools::{self, FileTool, Planned, ToolDefinition, ToolName, ToolOutput};
use serde_json::Value;

pub(super) struct FileCall(pub FileTool);

impl Tool for FileCall {
    fn name(&self) -> &str {
        self.0.name().as_str()
    }

    fn definition(&self, decisions: &crate::decisions::Decisions) -> ToolDefinition {
        self.0.definition(&decisions.tools)
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(judged::call(self, turn, call))
    }
}

impl Judged for FileCall {
    type Work = (Planned, Value);

    fn prepare(&self, call: &ToolCall, at: &Judging<'_>) -> Result<Prepared<Self::Work>, String> {
        let ctx = at.ctx;
        let (planned, args) = tools::plan(self.0, &call.arguments, ctx).map_err(|e| e.to_string())?;
        let place = tool_policy::place_of(&planned.path, &ctx.project, &ctx.roots, &ctx.protected);
        let mut judgement = tools::judge(&planned, at.mode, ctx);
        let granted = judgement.decision == Decision::Ask
            && at.grants.writes()
            && planned.access == Access::Write
            && place == Place::Project;
        if granted {
            judgement = Judgement {
                decision: Decision::Allow,
                reason: "Allowed for this chat: every write in its folder.".into(),
            };
        }
        let mut facts = CardFacts::of_change(&planned, ctx);
        // Read only for a card: an allowed call is not made to read its file twice.
        if judgement.decision == Decision::Ask {
            facts.unified_diff = tools::preview(&planned, &args, ctx);
        }
        Ok(Prepared {
            title: planned.title.clone(),
            kind: planned.kind,
            raw_input: args.clone(),
            judgement,
            always: format!("every write in {}", ctx.project.display()),
            grant: Some(Grant::Writes),
            facts,
            granted,
            command: None,
            work: (planned, args),
        })
    }

    async fn run<'a>(&'a self, work: Self::Work, at: Running<'a>) -> ToolOutput {
        let (planned, args) = work;
        let ctx = at.ctx.clone();
        let (name, path) = (planned.name, planned.path.clone());
        let output = tokio::task::spawn_blocking(move || tools::run(&planned, &args, &ctx))
            .await
            .unwrap_or_else(|e| ToolOutput {
                text: format!("The tool stopped unexpectedly: {e}"),
                is_error: true,
                diff: None,
            });
        // A file the model read or changed counts as used: the file picker offers it sooner.
        if !output.is_error && matches!(name, ToolName::Read | ToolName::Write | ToolName::Edit) {
            at.turn.engine.files().used(&at.turn.session.id, &path);
        }
        output
    }
}
