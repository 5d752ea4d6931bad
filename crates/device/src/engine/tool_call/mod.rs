//! One tool call of the model: planned, judged by the mode (the tool policy, or the bash judge),
//! asked of the person when the mode says ask, run, and reported to the client as ACP's
//! tool_call / tool_call_update with the `_lembas/event`s beside them.

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::Engine;
use super::approvals::{Answer, AnsweredBy};
use super::model::ToolCall;
use super::session::{Session, ToolResult};
use super::show;
use crate::decisions::decisions;
use crate::events::DeviceEvent;
use crate::policy::Mode;
use crate::policy::bash_judge::Decision;
use crate::store::record::DecisionRecord;
use crate::tools::{self, ToolOutput};

mod prepare;

use lembas_protocol::LembasMeta;
use lembas_protocol::event::Event;
use lembas_protocol::permission::{AskedCall, CardSays, PermissionOption, PermissionRequest};
use lembas_protocol::update::{
    SessionUpdate, ToolCall as AcpToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind,
};
use prepare::{Work, always_pattern, judge_bash, mcp_tool, prepare, prepare_mcp, prepare_show};

/// What the client hears of a call as it goes: ACP's `tool_call_update`, and the `tool_start` and
/// `tool_end` events.
impl ToolCall {
    pub(super) fn update(
        &self,
        status: ToolCallStatus,
        content: Option<Vec<ToolCallContent>>,
    ) -> SessionUpdate {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id: self.id.clone(),
            status,
            content,
        })
    }

    pub(super) fn started(&self, title: &str, turn_id: &str) -> Event {
        Event::ToolStart {
            id: self.id.clone(),
            name: self.name.clone(),
            title: title.to_string(),
            turn_id: turn_id.to_string(),
        }
    }

    pub(super) fn ended(&self, is_error: bool, turn_id: &str) -> Event {
        Event::ToolEnd {
            id: self.id.clone(),
            name: self.name.clone(),
            is_error,
            turn_id: turn_id.to_string(),
        }
    }
}

pub async fn run(engine: &Engine, session: &Arc<Session>, turn_id: &str, call: &ToolCall) -> ToolResult {
    // Questions and plans are asked of the person whatever the mode: no judge, no approval.
    if call.name == super::ask::ASK_USER || call.name == super::ask::PLAN_SUBMIT {
        return super::ask::run(engine, session, turn_id, call).await;
    }
    // The plan tools touch no file: every mode.
    if super::plan_state::is_plan_tool(&call.name) {
        return super::plan_state::run(engine, session, turn_id, call).await;
    }
    // The job tools touch only the session's own jobs: every mode.
    if super::jobs::is_job_tool(&call.name) {
        return super::jobs::run_tool(engine, session, turn_id, call).await;
    }
    // The instance's memory changes nothing on this computer: every mode.
    if super::instance_memory::is_memory_call(session, &call.name) {
        return super::instance_memory::run_tool(engine, session, turn_id, call).await;
    }
    let sid = session.id.clone();
    let settings = engine.settings();
    let mut ctx = engine.tool_context(session);
    // write and edit keep what they replace here, for /undo.
    ctx.copies = engine.store().turn_copies_dir(&sid, turn_id).ok();
    let (mode, always_writes, always_bash, run) = limited(engine, session, settings.remote.max_mode).await;
    let project_rules = crate::scheduled::project_bash_rules(&ctx.project, &settings);
    let prepared = if call.name == show::SHOW {
        if show::offered(engine, session) {
            prepare_show(call, &ctx, mode)
        } else {
            Err(show::NOT_OFFERED.to_string())
        }
    } else if let Some(offered) = mcp_tool(session, &call.name) {
        let allowed = session.state().always_mcp.contains(&offered.exposed);
        prepare_mcp(call, offered, mode, allowed)
    } else {
        prepare(
            call,
            &ctx,
            mode,
            always_writes,
            &always_bash,
            &settings.permissions.bash,
            project_rules.as_ref(),
        )
    };
    let prepared = prepared.and_then(|p| match &p.work {
        Work::Bash {
            background: Some(_), ..
        } => super::jobs::room(session).map(|()| p),
        _ => Ok(p),
    });
    let prepared = match prepared {
        Ok(p) => p,
        Err(why) => {
            // A call that cannot even be read (unknown tool, bad arguments) goes back to the model.
            engine
                .update(
                    &sid,
                    SessionUpdate::ToolCall(AcpToolCall {
                        tool_call_id: call.id.clone(),
                        title: call.name.clone(),
                        kind: ToolKind::Other,
                        status: ToolCallStatus::Failed,
                        raw_input: json!({ "arguments": call.arguments }),
                        content: vec![ToolCallContent::text(&why)],
                    }),
                )
                .await;
            engine.event(&sid, call.ended(true, turn_id)).await;
            return ToolResult {
                text: why,
                is_error: true,
            };
        }
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
            }),
        )
        .await;

    let mut work = prepared.work;
    let mut log = Logged {
        title: prepared.title.clone(),
        command: match &work {
            Work::Bash { command, .. } => Some(command.clone()),
            Work::File { .. } | Work::Show { .. } | Work::Mcp { .. } => None,
        },
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
    match prepared.judgement.decision {
        Decision::Allow => {}
        Decision::Deny => {
            let reason = &prepared.judgement.reason;
            return denied(engine, &sid, turn_id, call, reason, None, &log).await;
        }
        Decision::Ask => {
            let params = PermissionRequest {
                session_id: sid.clone(),
                tool_call: AskedCall {
                    tool_call_id: call.id.clone(),
                    title: prepared.title.clone(),
                    kind: prepared.kind,
                    status: ToolCallStatus::Pending,
                    raw_input: prepared.raw_input.clone(),
                },
                options: PermissionOption::offered(),
                meta: LembasMeta {
                    lembas: CardSays {
                        reason: prepared.judgement.reason.clone(),
                        always: prepared.always.clone(),
                        scheduled: run.as_ref().map(|run| run.card_meta()),
                    },
                },
            };
            let title = session.state().title.clone();
            let facts = prepared
                .facts
                .clone()
                .in_chat(&session.cwd, title, ctx.protected.home());
            let (answer, by) = engine.ask(facts, params, run.as_ref()).await;
            log.answered_by = by;
            log.answer = Some(answer.label());
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
                    if always {
                        let mut state = session.state();
                        match &work {
                            Work::File { .. } => state.always_writes = true,
                            // Judged as a read, which never asks.
                            Work::Show { .. } => {}
                            Work::Bash { command, .. } => state.always_bash.push(always_pattern(command)),
                            Work::Mcp { offered, .. } => state.always_mcp.push(offered.exposed.clone()),
                        }
                    }
                    if let (Work::Bash { command: line, .. }, Some(corrected)) = (&mut work, command) {
                        // The person's own line runs instead, but never past the hardline. The
                        // log names it either way: it is the line that ran, or was refused.
                        log.command = Some(corrected.clone());
                        let check = judge_bash(
                            &corrected,
                            &ctx,
                            Mode::Auto,
                            &settings.permissions.bash,
                            project_rules.as_ref(),
                        );
                        if check.decision == Decision::Deny {
                            return denied(engine, &sid, turn_id, call, &check.reason, None, &log).await;
                        }
                        *line = corrected;
                    }
                }
            }
        }
    }

    engine
        .update(&sid, call.update(ToolCallStatus::InProgress, None))
        .await;
    engine.event(&sid, call.started(&prepared.title, turn_id)).await;
    let output = match work {
        Work::File { planned, args } => {
            let ctx = ctx.clone();
            let (name, path) = (planned.name.clone(), planned.path.clone());
            let output = tokio::task::spawn_blocking(move || tools::run(&planned, &args, &ctx))
                .await
                .unwrap_or_else(|e| ToolOutput {
                    text: format!("The tool stopped unexpectedly: {e}"),
                    is_error: true,
                    diff: None,
                });
            // A file the model read or changed counts as used: the file picker offers it sooner.
            if !output.is_error && matches!(name.as_str(), "read" | "write" | "edit") {
                engine.files().used(&sid, &path);
            }
            if !output.is_error && matches!(name.as_str(), "write" | "edit") {
                log.changed_files.push(path.display().to_string());
            }
            output
        }
        Work::Bash {
            command,
            timeout,
            background: None,
        } => {
            let sandbox = engine.command_sandbox(session, mode);
            run_bash(&ctx.project, &command, timeout, &sandbox).await
        }
        Work::Bash {
            command,
            background: Some(description),
            ..
        } => {
            let sandbox = engine.command_sandbox(session, mode);
            let (text, is_error) =
                match super::jobs::start(engine, session, command, description, mode, sandbox).await {
                    Ok(text) => (text, false),
                    Err(text) => (text, true),
                };
            ToolOutput {
                text,
                is_error,
                diff: None,
            }
        }
        Work::Show { planned, line } => show::run(engine, session, &call.id, &planned, line, &ctx).await,
        Work::Mcp { offered, args } => offered.call(&args).await,
    };
    let text = tools::cut_result(&output.text);
    let content = match &output.diff {
        Some(d) => ToolCallContent::Diff {
            path: d.path.clone(),
            old_text: d.old_text.clone(),
            new_text: d.new_text.clone(),
        },
        None => ToolCallContent::text(&text),
    };
    let status = ToolCallStatus::ended(output.is_error);
    engine
        .update(&sid, call.update(status, Some(vec![content])))
        .await;
    engine.event(&sid, call.ended(output.is_error, turn_id)).await;
    log.diff = output.diff.as_ref().map(|d| tools::unified_change(d, &ctx));
    log.tell(engine, &sid, call, status.as_str());
    ToolResult {
        text,
        is_error: output.is_error,
    }
}

/// What the activity log says of a call that was judged, and what the session keeps of it for
/// the timeline: its card's title and headline, the mode's decision and why, who answered and when.
struct Logged {
    title: String,
    /// The bash line that runs: the model's, or the person's corrected one.
    command: Option<String>,
    /// The files a write or edit changed.
    changed_files: Vec<String>,
    headline: String,
    decision: Decision,
    reason: String,
    /// Allowed by an earlier "Allow for this chat".
    granted: bool,
    mode: Mode,
    answered_by: Option<AnsweredBy>,
    /// The person's answer when it asked (`allowed once`, `allowed in this session`, `denied`).
    answer: Option<&'static str>,
    answered_ms: Option<u64>,
    /// The change a write or edit made, as a unified diff.
    diff: Option<String>,
}

impl Logged {
    /// To the activity log, and kept with the session for its timeline in the window.
    fn tell(&self, engine: &Engine, session_id: &str, call: &ToolCall, outcome: &str) {
        let record = DecisionRecord {
            tool_call_id: call.id.clone(),
            decision: self.decision.as_str().to_string(),
            answered_by: self.answered_by.map(|by| by.as_str().to_string()),
            answer: self.answer.map(str::to_string),
            outcome: outcome.to_string(),
            at_ms: Some(crate::status::now_ms()),
            answered_ms: self.answered_ms,
            mode: Some(self.mode.as_str().to_string()),
            reason: Some(self.reason.clone()),
            granted: self.granted,
            headline: Some(self.headline.clone()),
            diff: self.diff.clone(),
        };
        engine.record_decision(session_id, record);
        engine.device_event(self.event(session_id, call, outcome));
    }

    /// The call's [`DeviceEvent::ToolCall`]; `outcome` is `completed`, `failed` or `denied`.
    fn event(&self, session_id: &str, call: &ToolCall, outcome: &str) -> DeviceEvent {
        DeviceEvent::ToolCall {
            session_id: session_id.to_string(),
            tool_call_id: call.id.clone(),
            tool: call.name.clone(),
            title: self.title.clone(),
            decision: self.decision.as_str().to_string(),
            answered_by: self.answered_by.map(|by| by.as_str().to_string()),
            outcome: outcome.to_string(),
            command: self.command.clone(),
            changed_files: self.changed_files.clone(),
        }
    }
}

/// Why a call is not run: the reason the client's event gives, the person's words if any, and
/// what the model reads.
struct Refusal {
    reason: String,
    feedback: Option<String>,
    text: String,
}

async fn denied(
    engine: &Engine,
    sid: &str,
    turn_id: &str,
    call: &ToolCall,
    reason: &str,
    feedback: Option<String>,
    log: &Logged,
) -> ToolResult {
    let mut text = format!("Not done: {reason}");
    if let Some(f) = &feedback {
        text.push_str(&format!(" The person said: {f}"));
    }
    let refusal = Refusal {
        reason: reason.to_string(),
        feedback,
        text,
    };
    refused(engine, sid, turn_id, call, refusal, log).await
}

/// A call not run: the client told it failed, and the model reads the refusal's text.
async fn refused(
    engine: &Engine,
    sid: &str,
    turn_id: &str,
    call: &ToolCall,
    refusal: Refusal,
    log: &Logged,
) -> ToolResult {
    let Refusal {
        reason,
        feedback,
        text,
    } = refusal;
    engine
        .update(
            sid,
            call.update(ToolCallStatus::Failed, Some(vec![ToolCallContent::text(&text)])),
        )
        .await;
    engine
        .event(
            sid,
            Event::ToolDenied {
                id: call.id.clone(),
                name: call.name.clone(),
                reason: reason.clone(),
                feedback: feedback.clone(),
                turn_id: turn_id.to_string(),
            },
        )
        .await;
    log.tell(engine, sid, call, "denied");
    ToolResult { text, is_error: true }
}

/// The mode this call runs in: the session's (or its scheduled run's) lowered to `remote.max_mode`
/// as it is now (docs/protocol.md: the limits apply to every request as they are at that moment). A session
/// the limit lowered stays lowered, says so (`current_mode_update`, the `mode` event) and loses
/// its "always allow" answers: the person narrowed what remote work may do since they were given.
async fn limited(
    engine: &Engine,
    session: &Session,
    max: Mode,
) -> (Mode, bool, Vec<String>, Option<crate::scheduled::Run>) {
    let (lowered, own_mode) = {
        let mut state = session.state();
        let own_mode = state.mode > max;
        if own_mode {
            state.always_writes = false;
            state.always_bash.clear();
            state.always_mcp.clear();
        }
        if let Some((_, run_mode)) = state.run.as_mut() {
            *run_mode = (*run_mode).lowered_to(max);
        }
        (state.mode.lowered_to(max), own_mode)
    };
    if own_mode {
        super::access::switch_mode(engine, session, lowered).await;
    }
    let state = session.state();
    let run = state.run.clone();
    let mode = run.as_ref().map(|(_, mode)| *mode).unwrap_or(state.mode);
    (
        mode,
        state.always_writes,
        state.always_bash.clone(),
        run.map(|(run, _)| run),
    )
}

async fn run_bash(
    folder: &Path,
    command: &str,
    timeout: Duration,
    sandbox: &crate::sandbox::Sandbox,
) -> ToolOutput {
    let keep = decisions().engine.bash_output_kept_bytes;
    match crate::monitor::run_command(folder, command, timeout, keep, sandbox).await {
        Ok(outcome) => {
            let mut text = outcome.watched.excerpt;
            if outcome.watched.bytes > keep as u64 {
                text.push_str(&format!(
                    "\n[{} bytes of output in all; only the first {keep} were kept]",
                    outcome.watched.bytes
                ));
            }
            let (note, is_error) = match (outcome.watched.timed_out, outcome.watched.exit) {
                (true, _) => (
                    format!(
                        "\n[stopped after {} s: the command did not finish in time]",
                        timeout.as_secs()
                    ),
                    true,
                ),
                (false, Some(0)) => (String::new(), false),
                (false, Some(code)) => (format!("\n[exit status {code}]"), true),
                (false, None) => ("\n[ended by a signal]".to_string(), true),
            };
            text.push_str(&note);
            if let Some(refusal) = outcome.sandbox_refusal {
                text.push('\n');
                text.push_str(&refusal);
            }
            ToolOutput {
                text,
                is_error,
                diff: None,
            }
        }
        Err(e) => ToolOutput {
            text: format!("The command could not be run: {e}"),
            is_error: true,
            diff: None,
        },
    }
}
