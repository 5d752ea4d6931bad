//! The engine's `ask_user` and `plan_submit` tools (docs/protocol.md "Tools"): a question card
//! (`_lembas/question`) or a plan card (`_lembas/plan`) for the person, keyed by toolCallId like an
//! approval card, and what came of it for the model. Where nobody can be asked (no link, a client
//! that does not take these cards, a scheduled turn) the model is told so instead.

mod plan;
mod question;

use lembas_protocol::card::CardRequest;
use schemars::JsonSchema;
use serde_json::Value;
use std::sync::Arc;

use super::Engine;
use super::approvals::Answer;
use super::model::ToolCall;
use super::session::{Session, ToolResult};
use super::session_access::switch_mode;
use super::unjudged_call;
use crate::policy::Mode;
use crate::tools::{ToolDefinition, ToolName};
use lembas_protocol::LembasMeta;
use lembas_protocol::ask::{Patience, PlanAnswer, PlanRequest, QuestionRequest};

/// The tools that ask the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskTool {
    /// `ask_user`: questions.
    Questions,
    /// `plan_submit`: a plan to approve.
    Plan,
}

/// What the model is told of `ask_user` and `plan_submit`.
pub fn definition(tool: AskTool, numbers: &crate::decisions::Question) -> ToolDefinition {
    match tool {
        AskTool::Questions => question::definition(numbers),
        AskTool::Plan => ToolDefinition::of::<PlanSubmitArguments>(
            ToolName::PlanSubmit,
            "Submit your plan for the person to approve before you change anything. It is saved \
             as a markdown file in the project. When approved, carry it out; when the person asks \
             for changes, revise it and submit it again.",
        ),
    }
}

/// `plan_submit`'s arguments as the model writes them (read by hand below: an empty plan is
/// refused with its own sentence).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct PlanSubmitArguments {
    /// The plan, in markdown.
    text: String,
    /// Where to save it, relative to the session's folder (default .agent/plans/<time>-plan.md).
    #[serde(default)]
    #[schemars(with = "String")]
    path: Option<String>,
}

const NOBODY: &str = "Nobody can be asked right now: no one is there to answer. Go on with your best judgement, or stop and say what you need to know.";
const DISMISSED: &str = "The person closed the questions without answering. Go on with your best judgement, or stop and say what you need to know.";

/// Runs `ask_user` or `plan_submit`, reported to the client as a `think` tool call.
pub async fn run(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    call: &ToolCall,
    tool: AskTool,
) -> ToolResult {
    let title = match tool {
        AskTool::Questions => "Ask the person",
        AskTool::Plan => "Submit the plan",
    };
    let work = async {
        let args = unjudged_call::arguments(call)?;
        match tool {
            AskTool::Questions => ask_user(engine, session, call, &args).await,
            AskTool::Plan => plan_submit(engine, session, call, &args).await,
        }
    };
    unjudged_call::reported(engine, session, turn_id, call, title, work).await
}

/// A scheduled turn has nobody to ask, whatever the link.
fn scheduled(session: &Session) -> bool {
    session.is_scheduled()
}

async fn ask_user(
    engine: &Engine,
    session: &Session,
    call: &ToolCall,
    args: &Value,
) -> Result<String, String> {
    let asked = question::read(args, &engine.setup().decisions.question)?;
    let params = QuestionRequest {
        session_id: session.id.clone(),
        tool_call_id: call.id.clone(),
        why: args.get("why").and_then(Value::as_str).map(str::to_string),
        questions: asked.card.clone(),
        meta: not_patient(),
    };
    let answer = if scheduled(session) {
        None
    } else {
        engine.ask_card(CardRequest::Question(params)).await
    };
    let mut text = match answer {
        None => NOBODY.to_string(),
        Some(Answer::Question(answer)) => {
            question::answered(&asked, answer).unwrap_or_else(|| DISMISSED.to_string())
        }
        Some(_) => DISMISSED.to_string(),
    };
    for note in &asked.notes {
        text.push_str("\n\nNote: ");
        text.push_str(note);
    }
    Ok(text)
}

async fn plan_submit(
    engine: &Engine,
    session: &Session,
    call: &ToolCall,
    args: &Value,
) -> Result<String, String> {
    let text = args
        .get("text")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .ok_or("plan_submit needs `text`: the plan, in markdown.")?;
    let given = args.get("path").and_then(Value::as_str);
    let project = session.cwd.clone();
    let (plan_text, given_path, stamp) = (text.to_string(), given.map(str::to_string), stamp());
    let protected = engine.setup().dirs.protected_places();
    // The record is the device's own: a new file under .agent/plans, whatever path the model
    // gave. Where it cannot be written the card still shows, with no path, and the model hears why.
    let saved = tokio::task::spawn_blocking(move || {
        plan::write(&project, given_path.as_deref(), &plan_text, &stamp, &protected)
    })
    .await
    .unwrap_or_else(|e| Err(format!("The plan was not saved: {e}.")));
    let (path, not_saved) = match saved {
        Ok(path) => (path, None),
        Err(why) => (String::new(), Some(why)),
    };
    let said = |text: String| match &not_saved {
        Some(why) => format!("{why}\n{text}"),
        None => text,
    };
    let params = PlanRequest {
        session_id: session.id.clone(),
        tool_call_id: call.id.clone(),
        path: path.clone(),
        text: text.to_string(),
        // The session's structured plan beside the text (capability plan_state).
        plan: session.plan(),
        meta: not_patient(),
    };
    let answer = if scheduled(session) {
        None
    } else {
        engine.ask_card(CardRequest::Plan(params)).await
    };
    decided(engine, session, answer, &path).await.map(said)
}

/// What the person's answer to a plan card means for the session and the model.
async fn decided(
    engine: &Engine,
    session: &Session,
    answer: Option<Answer>,
    path: &str,
) -> Result<String, String> {
    let unsaved = path.is_empty();
    let path = if unsaved { "not saved" } else { path };
    let result = match answer {
        None if unsaved => {
            return Ok("Nobody can review the plan now: stop here, and give the plan in your reply.".into());
        }
        None => {
            return Ok(format!(
                "The plan was saved to {path}. Nobody can review it now: stop here, and say where the plan is."
            ));
        }
        Some(Answer::Plan(answer)) => answer,
        Some(_) => PlanAnswer::Dismissed,
    };
    let dismissed =
        format!("The person closed the plan ({path}) without deciding. Stop here and wait for them.");
    match result {
        PlanAnswer::Approve { mode } => {
            let max = engine.settings().remote.max_mode;
            // Where even manual is beyond the limit, an approval cannot move the session on.
            if max < Mode::Manual {
                return Ok(format!(
                    "The person approved the plan ({path}), but this computer allows no mode beyond {max}, so nothing was decided. Stop here."
                ));
            }
            let mode = mode.lowered_to(max);
            switch_mode(engine, session, mode).await;
            Ok(format!(
                "The person approved the plan ({path}). The session is now in {mode} mode: carry the plan out."
            ))
        }
        PlanAnswer::Revise { feedback } => Ok(format!(
            "The person asked for changes to the plan ({path}): {feedback}\nRevise it and submit it again."
        )),
        PlanAnswer::Dismissed => Ok(dismissed),
    }
}

/// Not patient: no terminal shows the card, so the client times it out like an approval.
fn not_patient() -> LembasMeta<Patience> {
    LembasMeta {
        lembas: Patience { patient: false },
    }
}

/// `YYYY-MM-DD-HHMMSS` in UTC, for a plan file's name.
fn stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
        % 86_400;
    format!(
        "{}-{:02}{:02}{:02}",
        crate::utc::today(),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}
