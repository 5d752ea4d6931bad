//! Background jobs (capability `jobs`, docs/protocol.md "Background jobs"): `bash` with
//! `background: true` starts its command as a job of the session (judged, asked and sandboxed as
//! any command) and answers at once with the job's id. The job's output is kept as it comes, the
//! client hears `job` events (start, news at most four times a second, end), and when the job ends
//! its note goes to the model: at the next step of a running turn, or as a machine turn. The model
//! has `job_list`, `job_output` and `job_stop`; a client has `_lembas/jobs` and `_lembas/job/*`.

use lembas_protocol::jobs::{JobInfo, JobKind, JobList, JobOutput, JobParams, JobState, JobStopped};
use lembas_protocol::session::{Empty, SessionRef};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

use super::Engine;
use super::job_board::LimitStop;
use super::model::ToolCall;
use super::session::{Session, ToolResult};
use super::session_access::held;
use super::unjudged_call;
use crate::monitor::{self, JobEnd};
use crate::policy::Mode;
use crate::rpc::RpcError;
use crate::sandbox::Sandbox;
use crate::store::Record;
use crate::store::ids;
use crate::tools::{ToolDefinition, ToolName};
use lembas_protocol::event::{Event, JobChange};
use lembas_protocol::update::ToolKind;

/// How often a job's news may be told (the spec: at most four times a second).
const NEWS_EVERY: Duration = Duration::from_millis(250);
/// Chunks of output (64 KiB each) read ahead of what the job has kept: past them, the command
/// waits on its pipe.
const CHUNKS_IN_FLIGHT: usize = 4;
/// How long `_lembas/job/stop` waits for the job to be gone before it answers.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// The model's job tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobTool {
    List,
    Output,
    Stop,
}

/// What the model is told of `job_list`, `job_output` and `job_stop`.
pub fn definition(tool: JobTool) -> ToolDefinition {
    match tool {
        JobTool::List => ToolDefinition::of::<JobListArguments>(
            ToolName::JobList,
            "List this session's background jobs: running ones first, then those that ended.",
        ),
        JobTool::Output => ToolDefinition::of::<JobOutputArguments>(
            ToolName::JobOutput,
            "Read a background job's output, from character `since` (default 0). The answer says \
             how much there is, so the next call can carry on where this one stopped.",
        ),
        JobTool::Stop => ToolDefinition::of::<JobStopArguments>(
            ToolName::JobStop,
            "Stop a background job (its whole process group). You are told when it has ended.",
        ),
    }
}

/// `Err` with the sentence for the model when the session already runs as many jobs as it may.
pub fn room(session: &Session, most: usize) -> Result<(), String> {
    if session.jobs(|board| board.running()) >= most {
        return Err(format!(
            "{most} jobs already run in this session, the most at once: stop one with job_stop, \
             or wait for one to end."
        ));
    }
    Ok(())
}

/// Starts `command` (judged and allowed already in `mode`, its box made for that mode) as a job of
/// the session; the text the model reads, or why it could not start.
pub async fn start(
    engine: &Engine,
    session: &Arc<Session>,
    command: String,
    description: String,
    mode: Mode,
    sandbox: Sandbox,
) -> Result<String, String> {
    room(session, engine.setup().decisions.jobs.running_max)?;
    let id = format!("job_{}", &ids::new_session_id()[4..]);
    let info = JobInfo {
        id: id.clone(),
        kind: JobKind::Command,
        state: JobState::Running,
        description,
        command: Some(command.clone()),
        started: crate::status::now_ms(),
        ended: None,
        exit: None,
        unread: 0,
    };
    let (stop, stop_rx) = oneshot::channel();
    session.jobs(|board| board.add(info.clone(), mode, stop));
    session.record(Record::Job { job: info.clone() });
    session.flush();
    tell(engine, &session.id, JobChange::Start, &info).await;
    tokio::spawn(follow(
        engine.clone(),
        session.clone(),
        id.clone(),
        command,
        sandbox,
        stop_rx,
    ));
    Ok(format!(
        "Started job {id}: {}. It runs on while you work; read its output with job_output, stop \
         it with job_stop. You will be told when it ends.",
        info.description
    ))
}

/// Runs the job to its end: its output kept and its news told as it comes, then its end recorded,
/// told, and its note given to the model.
async fn follow(
    engine: Engine,
    session: Arc<Session>,
    id: String,
    command: String,
    sandbox: Sandbox,
    stop: oneshot::Receiver<()>,
) {
    let decisions = engine.setup().decisions;
    let keep = decisions.jobs.output_kept_bytes;
    let (output, mut read) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let run = monitor::run_job(
        &session.cwd,
        &command,
        &sandbox,
        output,
        stop,
        &decisions.scheduled.monitor,
    );
    tokio::pin!(run);
    let mut news = tokio::time::interval(NEWS_EVERY);
    let ended = loop {
        tokio::select! {
            ended = &mut run => break ended,
            Some(chunk) = read.recv() => take(&session, &id, &chunk, keep),
            _ = news.tick() => {
                let info = session.jobs(|board| board.take_news(&id));
                if let Some(info) = info {
                    tell(&engine, &session.id, JobChange::Update, &info).await;
                }
            }
        }
    };
    while let Ok(chunk) = read.try_recv() {
        take(&session, &id, &chunk, keep);
    }
    let (state, exit, said) = match ended {
        Ok(JobEnd {
            exit,
            stopped,
            sandboxed,
        }) => {
            let refusal = sandboxed
                .then(|| {
                    let tail = session.jobs(|board| board.get(&id).map(|j| j.output_since(0).text));
                    sandbox.refusal_line(&tail.unwrap_or_default(), exit)
                })
                .flatten();
            let state = if stopped {
                JobState::Stopped
            } else {
                JobState::Done
            };
            (state, exit, refusal)
        }
        Err(e) => (
            JobState::Error,
            None,
            Some(format!("The job's command could not be run: {e}")),
        ),
    };
    let ended = session.jobs(|board| board.end(&id, said, keep, state, exit, crate::status::now_ms()));
    let Some((info, stopped_by)) = ended else {
        return;
    };
    // A deleted session is not written to, told or woken.
    if !engine.sessions().contains_key(&session.id) {
        return;
    }
    session.record(Record::Job { job: info.clone() });
    session.flush();
    tell(&engine, &session.id, JobChange::End, &info).await;
    let note = note(&info, stopped_by);
    session.jobs(|board| board.note(id, note));
    engine.wake(&session);
}

/// A chunk of the job's output kept, and news to tell.
fn take(session: &Session, id: &str, chunk: &[u8], keep: usize) {
    session.jobs(|board| board.keep_output(id, chunk, keep));
}

/// `[job <id> ended] <description>: exit <code>, <n> characters unread` (docs/protocol.md "Background
/// jobs"); a job the limits stopped says which: `stopped because <why>`.
fn note(info: &JobInfo, stopped_by: Option<LimitStop>) -> String {
    let how = match (info.state, info.exit) {
        (JobState::Stopped, _) => match stopped_by {
            Some(why) => format!("stopped because {}", why.says()),
            None => "stopped".to_string(),
        },
        (JobState::Error, _) => "could not be run".to_string(),
        (_, Some(code)) => format!("exit {code}"),
        (_, None) => "ended by a signal".to_string(),
    };
    format!(
        "[job {} ended] {}: {how}, {} characters unread",
        info.id, info.description, info.unread
    )
}

/// The `job` event.
async fn tell(engine: &Engine, session_id: &str, state: JobChange, info: &JobInfo) {
    let job = info.clone();
    engine.event(session_id, Event::Job { state, job }).await;
}

/// Runs a job tool: nothing on this computer but the session's own jobs, so every mode.
pub async fn run_tool(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    call: &ToolCall,
    tool: JobTool,
) -> ToolResult {
    let (title, kind) = match tool {
        JobTool::List => ("List the background jobs", ToolKind::Read),
        JobTool::Output => ("Read a job's output", ToolKind::Read),
        JobTool::Stop => ("Stop a job", ToolKind::Execute),
    };
    let work = async {
        let args = unjudged_call::arguments(call)?;
        match tool {
            JobTool::List => {
                let list = session.jobs(|board| board.list());
                serde_json::to_string_pretty(&list).map_err(|e| e.to_string())
            }
            JobTool::Output => read_for_model(
                session,
                tool_args(&call.name, &args)?,
                engine.setup().decisions.engine.bash_output_kept_bytes,
            ),
            JobTool::Stop => stop_for_model(session, tool_args(&call.name, &args)?),
        }
    };
    unjudged_call::reported_as(engine, session, turn_id, call, title, kind, work).await
}

/// `job_list` takes nothing.
#[derive(JsonSchema)]
struct JobListArguments {}

/// `job_output`'s arguments as the model writes them.
#[derive(Deserialize, JsonSchema)]
struct JobOutputArguments {
    /// The job's id (job_…).
    id: String,
    /// The first character to read.
    #[serde(default)]
    #[schemars(with = "u64", range(min = 0))]
    since: Option<u64>,
}

/// `job_stop`'s arguments as the model writes them.
#[derive(Deserialize, JsonSchema)]
struct JobStopArguments {
    /// The job's id (job_…).
    id: String,
}

fn tool_args<A: serde::de::DeserializeOwned + JsonSchema>(tool: &str, args: &Value) -> Result<A, String> {
    crate::tools::arguments::of(tool, args).map_err(|e| e.to_string())
}

fn no_job(id: &str) -> String {
    format!("This session has no job {id}: job_list lists them.")
}

/// `job_output`: the output from `since` (default 0), at most what one tool result holds, and
/// where to go on from; the model's read mark moves to the end of what it got.
fn read_for_model(session: &Session, args: JobOutputArguments, most: usize) -> Result<String, String> {
    session.jobs(|board| {
        let job = board.get_mut(&args.id).ok_or_else(|| no_job(&args.id))?;
        let output = job.output_since(args.since.unwrap_or(0));
        let from = output.length - output.text.chars().count() as u64;
        let (text, to) = match output.text.char_indices().nth(most) {
            Some((cut, _)) => (&output.text[..cut], from + most as u64),
            None => (output.text.as_str(), output.length),
        };
        job.mark_read(to);
        let mut said = format!(
            "[{} {}: characters {from} to {to} of {}]\n{text}",
            args.id,
            output.state.name(),
            output.length
        );
        if to < output.length {
            said.push_str(&format!("\n[more: job_output with since {to}]"));
        }
        Ok(said)
    })
}

fn stop_for_model(session: &Session, args: JobStopArguments) -> Result<String, String> {
    session.jobs(|board| {
        let job_state = board
            .get(&args.id)
            .map(|j| j.info.state)
            .ok_or_else(|| no_job(&args.id))?;
        if job_state != JobState::Running || !board.stop(&args.id) {
            return Ok(format!("{} is {} already.", args.id, job_state.name()));
        }
        Ok(format!(
            "Stopping {}: you will be told when it has ended.",
            args.id
        ))
    })
}

/// `_lembas/jobs`: the session's jobs, running ones first.
pub async fn list(engine: &Engine, params: SessionRef) -> Result<JobList, RpcError> {
    let session = held(engine, &params.session_id)?;
    let jobs = session.jobs(|board| board.list());
    Ok(JobList { jobs })
}

/// `_lembas/job/output`: what the job wrote from `since` on.
pub async fn output(engine: &Engine, params: JobParams) -> Result<JobOutput, RpcError> {
    let session = held(engine, &params.session_id)?;
    let output = session.jobs(|board| {
        let job = board.get(&params.id)?;
        Some(job.output_since(params.since.unwrap_or(0)))
    });
    output.ok_or_else(|| unknown_job(&session, &params.id))
}

/// `_lembas/job/stop`: answered once the job is gone (its group stopped), with the state it ended in.
pub async fn stop(engine: &Engine, params: JobParams) -> Result<JobStopped, RpcError> {
    let session = held(engine, &params.session_id)?;
    let ended = session.jobs(|board| {
        let ended = board.get(&params.id)?.ended();
        board.stop(&params.id);
        Some(ended)
    });
    let mut ended = ended.ok_or_else(|| unknown_job(&session, &params.id))?;
    let _ = tokio::time::timeout(STOP_WAIT, ended.wait_for(|s| *s != JobState::Running)).await;
    let state = *ended.borrow();
    Ok(JobStopped { state })
}

/// `_lembas/job/send` and `_lembas/job/transcript`: for a subagent job, which this device never
/// runs: -32602 for every id.
pub async fn subagent_only(engine: &Engine, params: JobParams, what: &str) -> Result<Empty, RpcError> {
    let session = held(engine, &params.session_id)?;
    if !session.jobs(|board| board.get(&params.id).is_some()) {
        return Err(unknown_job(&session, &params.id));
    }
    Err(RpcError::invalid_params(format!(
        "{} is a command job; only a subagent job {what}.",
        params.id
    )))
}

fn unknown_job(session: &Session, id: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "{} has no job {id}: _lembas/jobs lists them.",
        session.id
    ))
}
