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
use lembas_protocol::update::{ToolCallContent, ToolCallLocation};
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
        let place = tool_policy::place_of(
            &planned.path,
            ctx.project_of(&planned.path),
            &ctx.roots,
            &ctx.protected,
        );
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
        let mut shown = Vec::new();
        // Read only for a card: an allowed call is not made to read its file twice.
        if judgement.decision == Decision::Ask
            && let Some(preview) = tools::preview(&planned, &args, ctx)
        {
            facts.unified_diff = Some(preview.unified);
            shown.push(ToolCallContent::from(preview.change));
        }
        Ok(Prepared {
            title: planned.title.clone(),
            kind: planned.kind,
            raw_input: args.clone(),
            judgement,
            always: format!("every write in {}", ctx.project_of(&planned.path).display()),
            grant: Some(Grant::Writes),
            facts,
            granted,
            command: None,
            shown,
            locations: locations(&planned, &args, place),
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

/// Where a read, write or edit works, for an editor to follow: its resolved path, and for a read
/// the line it starts at. Told only inside the session's folder: a path the model named elsewhere
/// is not put before the person as a place to open.
fn locations(planned: &Planned, args: &Value, place: Place) -> Vec<ToolCallLocation> {
    if place != Place::Project || !matches!(planned.name, ToolName::Read | ToolName::Write | ToolName::Edit) {
        return Vec::new();
    }
    let line = match planned.name {
        ToolName::Read => args
            .get("offset")
            .and_then(|o| {
                o.as_u64()
                    .or_else(|| o.as_str().and_then(|s| s.trim().parse().ok()))
            })
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0),
        _ => None,
    };
    vec![ToolCallLocation {
        path: planned.path.display().to_string(),
        line,
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::update::ToolKind;
    use serde_json::json;
    use std::path::PathBuf;

    fn planned(name: ToolName) -> Planned {
        Planned {
            name,
            kind: ToolKind::Read,
            access: Access::Read,
            path: PathBuf::from("/w/src/a.rs"),
            title: "Read src/a.rs".into(),
        }
    }

    #[test]
    fn a_call_in_the_session_s_folder_says_where_it_works() {
        let read = planned(ToolName::Read);
        let at = |line| {
            vec![ToolCallLocation {
                path: "/w/src/a.rs".into(),
                line,
            }]
        };
        assert_eq!(
            locations(&read, &json!({ "offset": 7 }), Place::Project),
            at(Some(7))
        );
        assert_eq!(
            locations(&read, &json!({ "offset": "12" }), Place::Project),
            at(Some(12))
        );
        assert_eq!(locations(&read, &json!({}), Place::Project), at(None));
        // A line the model made up that is no line is left out, not guessed.
        for offset in [json!(0), json!(-3), json!("x"), json!(1u64 << 40)] {
            assert_eq!(
                locations(&read, &json!({ "offset": offset }), Place::Project),
                at(None)
            );
        }
        assert_eq!(
            locations(&planned(ToolName::Edit), &json!({ "offset": 7 }), Place::Project),
            at(None)
        );
        // Elsewhere, or a tool over many files: no place to open.
        for place in [Place::Outside, Place::Roots, Place::Protected, Place::AgentFolder] {
            assert!(locations(&read, &json!({}), place).is_empty());
        }
        assert!(locations(&planned(ToolName::Grep), &json!({}), Place::Project).is_empty());
    }
}
