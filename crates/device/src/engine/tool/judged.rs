//! A call of a tool that touches this computer: read into the work it would do and judged by the
//! mode (the tool policy, the bash judge, or the MCP row) with the session's grants, asked of the
//! person when the mode says ask, run, and reported. Each such tool says how it prepares and runs
//! ([`Judged`]); the order of it all is here, once.

use serde_json::Value;
use std::future::Future;

use super::Turn;
use super::report::{Logged, Refusal, denied, refused, unreadable};
use crate::decisions::Decisions;
use crate::engine::approvals::{Answer, AnsweredBy, CardFacts};
use crate::engine::grants::{Grant, Grants};
use crate::engine::model::ToolCall;
use crate::engine::session::{CallTerms, Session, ToolResult};
use crate::engine::{Engine, session_access};
use crate::policy::Mode;
use crate::policy::bash_judge::{Decision, Judgement};
use crate::settings::BashRules;
use crate::tools::{self, ToolContext, ToolOutput};
use lembas_protocol::LembasMeta;
use lembas_protocol::permission::{AskedCall, CardSays, PermissionOption, PermissionRequest};
use lembas_protocol::update::{
    SessionUpdate, ToolCall as AcpToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind,
};

/// What a call is judged against: the session's folder and limits, the mode it runs in, the
/// grants of the chat and the bash rules (the person's, and the project's when trusted).
pub(super) struct Judging<'a> {
    pub ctx: &'a ToolContext,
    pub mode: Mode,
    pub grants: &'a Grants,
    pub rules: &'a BashRules,
    pub project_rules: Option<&'a BashRules>,
}

/// Where an allowed call runs.
pub(super) struct Running<'a> {
    pub turn: Turn<'a>,
    pub call: &'a ToolCall,
    pub ctx: &'a ToolContext,
    pub mode: Mode,
}

/// A call ready to be judged: what the card and the client are shown, and the work.
pub(super) struct Prepared<W> {
    pub title: String,
    pub kind: ToolKind,
    pub raw_input: Value,
    pub judgement: Judgement,
    /// What "Allow for this chat" would cover, said on the card.
    pub always: String,
    /// What "Allow for this chat" gives, when the person answers so.
    pub grant: Option<Grant>,
    /// What the device says of the call on the card (the session's part is added when it asks).
    pub facts: CardFacts,
    /// Allowed only by an earlier "Allow for this chat" (the timeline says so).
    pub granted: bool,
    /// The command line the activity log names, for a command.
    pub command: Option<String>,
    /// What a card shows of the call besides its arguments (a change's `diff`), as ACP's content.
    pub shown: Vec<ToolCallContent>,
    /// The files it reads or changes, told to the client (ACP's `locations`).
    pub locations: Vec<ToolCallLocation>,
    pub work: W,
}

/// A tool whose calls touch this computer.
pub(super) trait Judged: Send + Sync {
    /// What an allowed call does.
    type Work: Send;

    /// The call read and judged, from its arguments and what it is judged against only (a unit
    /// test's to check); `Err`: a sentence for the model (bad arguments).
    fn prepare(&self, call: &ToolCall, at: &Judging<'_>) -> Result<Prepared<Self::Work>, String>;

    /// Whether the session has room for the work now (a background job counts against the most
    /// a session runs at once); `Err`: a sentence for the model.
    fn admit(&self, _work: &Self::Work, _session: &Session, _decisions: &Decisions) -> Result<(), String> {
        Ok(())
    }

    /// The person allowed the call with their own line in its place: judged again (never past
    /// the hardline). Only a command has a line to correct.
    fn corrected(&self, _work: &mut Self::Work, _line: String, _at: &Judging<'_>) -> Result<(), Judgement> {
        Ok(())
    }

    fn run<'a>(&'a self, work: Self::Work, at: Running<'a>) -> impl Future<Output = ToolOutput> + Send + 'a;
}

/// One call of a judged tool, from the model's arguments to the text it reads back.
pub(super) async fn call<T: Judged>(tool: &T, turn: Turn<'_>, call: &ToolCall) -> ToolResult {
    let Turn { engine, session, .. } = turn;
    let sid = session.id.clone();
    let settings = engine.settings();
    let mut ctx = engine.tool_context(session);
    // write and edit keep what they replace here, for /undo.
    ctx.copies = engine.store().turn_copies_dir(&sid, turn.turn_id).ok();
    let (mode, grants, run) = limited(engine, session, settings.remote.max_mode).await;
    let project_rules = crate::settings::project_bash_rules(&ctx.project, &settings);
    let judging = Judging {
        ctx: &ctx,
        mode,
        grants: &grants,
        rules: &settings.permissions.bash,
        project_rules: project_rules.as_ref(),
    };
    let prepared = match tool.prepare(call, &judging).and_then(|prepared| {
        tool.admit(&prepared.work, session, engine.setup().decisions)
            .map(|()| prepared)
    }) {
        Ok(prepared) => prepared,
        Err(why) => return unreadable(turn, call, why).await,
    };
    engine
        .update(
            &sid,
            SessionUpdate::ToolCall(AcpToolCall {
                tool_call_id: call.id.clone(),
                title: prepared.title.clone(),
                kind: prepared.kind,
                status: ToolCallStatus::Pending,
                raw_input: prepared.raw_input.clone(),
                content: Vec::new(),
                locations: prepared.locations.clone(),
            }),
        )
        .await;

    let mut work = prepared.work;
    let mut log = Logged {
        title: prepared.title.clone(),
        command: prepared.command.clone(),
        changed_files: Vec::new(),
        headline: prepared.facts.headline.clone(),
        decision: prepared.judgement.decision,
        reason: prepared.judgement.reason.clone(),
        granted: prepared.granted,
        mode,
        answered_by: None,
        answer: None,
        answered_ms: None,
        diff: None,
    };
    let turn_id = turn.turn_id;
    match prepared.judgement.decision {
        Decision::Allow => {}
        Decision::Deny => {
            let reason = &prepared.judgement.reason;
            return denied(engine, &sid, turn_id, call, reason, None, &log).await;
        }
        Decision::Ask => {
            // The card says what the call does in the device's words, as every face here does;
            // the model's own words go beside them as its purpose.
            let title = match prepared.facts.headline.as_str() {
                "" => prepared.title.clone(),
                headline => headline.to_string(),
            };
            let params = PermissionRequest {
                session_id: sid.clone(),
                tool_call: AskedCall {
                    tool_call_id: call.id.clone(),
                    title,
                    kind: prepared.kind,
                    status: ToolCallStatus::Pending,
                    raw_input: prepared.raw_input.clone(),
                    content: prepared.shown.clone(),
                },
                options: PermissionOption::offered(),
                meta: LembasMeta {
                    lembas: CardSays {
                        reason: prepared.judgement.reason.clone(),
                        purpose: prepared.facts.agent_says.clone(),
                        always: prepared.always.clone(),
                        scheduled: run.as_ref().map(|run| run.card_meta()),
                        patient: false,
                    },
                },
            };
            let title = session.title();
            let facts = prepared.facts.clone().in_chat(&session.cwd, title);
            let (answer, by) = engine.ask(facts, params, run.as_ref()).await;
            log.answered_by = by;
            log.answer = Some(answer.option());
            log.answered_ms = Some(crate::status::now_ms());
            match answer {
                // Nobody answered: the model reads what the wait's end says (a scheduled run's
                // `texts.denied`), not words of a person.
                Answer::Deny { feedback: Some(said) } if by == Some(AnsweredBy::Timeout) => {
                    let refusal = Refusal {
                        reason: "Nobody answered in time.".to_string(),
                        feedback: None,
                        text: said,
                    };
                    return refused(engine, &sid, turn_id, call, refusal, &log).await;
                }
                Answer::Deny { feedback } => {
                    let reason = "The person did not allow this call.";
                    return denied(engine, &sid, turn_id, call, reason, feedback, &log).await;
                }
                // Never the answer to an approval card; read as a denial all the same.
                Answer::Question(_) | Answer::Plan(_) | Answer::Unsupported => {
                    let reason = "The person did not allow this call.";
                    return denied(engine, &sid, turn_id, call, reason, None, &log).await;
                }
                Answer::Allow { always, command } => {
                    if always && let Some(grant) = prepared.grant.clone() {
                        session.give_grant(grant);
                    }
                    if let Some(line) = command {
                        // The person's own line runs instead. The log names it either way: it
                        // is the line that ran, or was refused.
                        if log.command.is_some() {
                            log.command = Some(line.clone());
                        }
                        let again = Judging {
                            mode: Mode::Auto,
                            ..judging
                        };
                        if let Err(check) = tool.corrected(&mut work, line, &again) {
                            return denied(engine, &sid, turn_id, call, &check.reason, None, &log).await;
                        }
                    }
                }
            }
        }
    }

    engine
        .update(&sid, call.update(ToolCallStatus::InProgress, None))
        .await;
    engine.event(&sid, call.started(&prepared.title, turn_id)).await;
    let running = Running {
        turn,
        call,
        ctx: &ctx,
        mode,
    };
    let output = tool.run(work, running).await;
    let text = tools::cut_result(&output.text, ctx.numbers);
    let content = match &output.diff {
        Some(diff) => ToolCallContent::from(diff.clone()),
        None => ToolCallContent::text(&text),
    };
    let status = ToolCallStatus::ended(output.is_error);
    engine
        .update(&sid, call.update(status, Some(vec![content])))
        .await;
    engine.event(&sid, call.ended(output.is_error, turn_id)).await;
    if let Some(diff) = &output.diff
        && !output.is_error
    {
        log.changed_files.push(diff.path.clone());
    }
    log.diff = output.diff.as_ref().map(|d| tools::unified_change(d, &ctx));
    log.tell(engine, &sid, call, status.as_str());
    ToolResult {
        text,
        is_error: output.is_error,
    }
}

/// The mode this call runs in: the session's (or its scheduled run's) lowered to `remote.max_mode`
/// as it is now (docs/protocol.md: the limits apply to every request as they are at that moment). A session
/// the limit lowered stays lowered, says so (`current_mode_update`, the `mode` event) and loses
/// its "Allow for this chat" answers: the person narrowed what remote work may do since they were
/// given. Also the grants in force and the scheduled run the turn is.
async fn limited(
    engine: &Engine,
    session: &Session,
    max: Mode,
) -> (Mode, Grants, Option<crate::scheduled::Run>) {
    let lowered = session.lower_to(max);
    if lowered.own_mode_fell {
        session_access::switch_mode(engine, session, lowered.mode).await;
    }
    let CallTerms { mode, grants, run } = session.call_terms();
    (mode, grants, run)
}
