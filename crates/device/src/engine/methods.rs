//! The session methods of the link (docs/protocol.md): params read, limits applied as they are at this
//! moment, and the answers in the spec's shapes.

use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

use super::Engine;
use super::attachments;
use super::conversation;
use super::mcp_servers::SessionServers;
use super::method::EngineMethod;
use super::session::{Context, Session, SessionState, TurnPhase};
use super::session_access::{
    check_model, choose_model, held, holder, judge_additional, judge_again, judge_cwd, modes, opened,
    switch_mode,
};
use crate::policy::roots;
use crate::rpc::RpcError;
use crate::scheduled::Run;
use crate::store::{Record, SessionHeader, ids};
use lembas_protocol::prompt::{PromptAnswer, PromptParams};
use lembas_protocol::request::serve;
use lembas_protocol::session::{
    CancelParams, ConfigureParams, Configured, Empty, History, NewSessionAnswer, NewSessionParams,
    SessionRef, SessionSettings, SetModeParams, TitleParams, Titled,
};
use lembas_protocol::status::{Held, SessionStatus};
use lembas_protocol::{LembasMeta, Reason, TurnId};

/// The engine's methods of the link, each to its handler.
pub async fn request(engine: &Engine, method: EngineMethod, params: Value) -> Result<Value, RpcError> {
    use EngineMethod::*;
    use lembas_protocol::request::method as m;
    match method {
        SessionNew => serve(m::SessionNew, params, |p| new_session(engine, p)).await,
        SessionPrompt => serve(m::SessionPrompt, params, |p| prompt_session(engine, p)).await,
        SessionSetMode => serve(m::SessionSetMode, params, |p| set_mode(engine, p)).await,
        SessionCancel => serve(m::SessionCancel, params, |p| async move { cancel(engine, p) }).await,
        Configure => serve(m::Configure, params, |p| configure(engine, p)).await,
        SessionStatus => serve(m::SessionStatus, params, |p| async move { status(engine, p) }).await,
        SessionHistory => serve(m::SessionHistory, params, |p| async move { history(engine, p) }).await,
        SessionTitle => serve(m::SessionTitle, params, |p| title(engine, p)).await,
        SessionDelete => serve(m::SessionDelete, params, |p| super::delete::for_link(engine, p)).await,
        AcpSessionDelete => {
            serve(m::AcpSessionDelete, params, |p| {
                super::delete::for_editor(engine, p)
            })
            .await
        }
        Steer => serve(m::Steer, params, |p| conversation::steer(engine, p)).await,
        SessionRewind => serve(m::SessionRewind, params, |p| conversation::rewind(engine, p)).await,
        SessionCompact => serve(m::SessionCompact, params, |p| conversation::compact(engine, p)).await,
        FilesSearch => serve(m::FilesSearch, params, |p| super::files::search(engine, p)).await,
        Commands => serve(m::Commands, params, |p| super::commands::list(engine, p)).await,
        SessionLoad => serve(m::SessionLoad, params, |p| super::reopen::load(engine, p)).await,
        SessionList => serve(m::SessionList, params, |p| super::reopen::list(engine, p)).await,
        SessionResume => serve(m::SessionResume, params, |p| super::reopen::resume(engine, p)).await,
        SessionClose => {
            serve(m::SessionClose, params, |p| async move {
                super::reopen::close(engine, p)
            })
            .await
        }
        SessionSetConfigOption => {
            serve(m::SessionSetConfigOption, params, |p| {
                super::config_options::set(engine, p)
            })
            .await
        }
        Jobs => serve(m::Jobs, params, |p| super::jobs::list(engine, p)).await,
        JobOutput => serve(m::JobOutput, params, |p| super::jobs::output(engine, p)).await,
        JobStop => serve(m::JobStop, params, |p| super::jobs::stop(engine, p)).await,
        JobSend => {
            serve(m::JobSend, params, |p| {
                super::jobs::subagent_only(engine, p, "takes messages")
            })
            .await
        }
        JobTranscript => {
            serve(m::JobTranscript, params, |p| {
                super::jobs::subagent_only(engine, p, "has a transcript")
            })
            .await
        }
    }
}

impl Engine {
    /// session/new for a caller in this process, which has typed params rather than a link's
    /// JSON (the engine's tests); the link's goes through [`Engine::request`] to the same place.
    pub async fn new_session(&self, params: NewSessionParams) -> Result<NewSessionAnswer, RpcError> {
        new_session(self, params).await
    }

    /// session/prompt for a caller in this process: answered when the turn has ended.
    pub async fn prompt(&self, params: PromptParams) -> Result<PromptAnswer, RpcError> {
        prompt_session(self, params).await
    }
}

/// session/cancel.
fn cancel(engine: &Engine, params: CancelParams) -> Result<Empty, RpcError> {
    if let Some(session) = params
        .session_id
        .and_then(|id| engine.sessions().get(&id).cloned())
    {
        session.cancel();
    }
    Ok(Empty {})
}

fn now_ms() -> u64 {
    crate::status::now_ms()
}

/// The instance's default model for this device.
pub(super) async fn default_model(engine: &Engine) -> Result<String, RpcError> {
    let instance = engine
        .instance()
        .await
        .map_err(|why| RpcError::invalid_params(format!("The instance's models cannot be used: {why}.")))?;
    engine
        .about(&instance)
        .await
        .map_err(|why| {
            RpcError::invalid_params(format!("The instance's default model cannot be read: {why}."))
        })?
        .default_model
        .ok_or_else(|| {
            RpcError::invalid_params(
                "The instance names no default model: choose one with _meta.model (a model it serves).",
            )
        })
}

async fn new_session(engine: &Engine, params: NewSessionParams) -> Result<NewSessionAnswer, RpcError> {
    let servers = params.mcp_servers.unwrap_or_default();
    let meta = params.meta.unwrap_or_default();
    let settings = engine.settings();
    let rules = settings.folder_rules();
    let lembas = meta.lembas.as_ref();
    let scheduled = Run::of(
        lembas.and_then(|l| l.scheduled.as_ref()),
        engine.setup().least_approval_wait_s,
        &engine.setup().decisions.scheduled,
    );
    let mode = match &scheduled {
        // A scheduled session's mode is the schedule's; _meta.mode is not read.
        Some(run) => crate::scheduled::admit(&settings, run.mode, run.texts)?,
        None => meta.mode.unwrap_or_default().lowered_to(settings.remote.max_mode),
    };
    let cwd = roots::judge_folder(Path::new(&params.cwd), &rules).map_err(|v| {
        let reason = v.reason.unwrap_or_default();
        if scheduled.is_some() {
            RpcError::refused(reason, Reason::Folder)
        } else {
            RpcError::invalid_params(reason)
        }
    })?;
    let additional = judge_additional(engine, &params.additional_directories)?;
    let named = meta.lembas_model.or(meta.model).filter(|m| !m.is_empty());
    let model = match named {
        Some(model) => model,
        // An editor need not name one: the instance's default for this device.
        None if engine.serves_editor() => default_model(engine).await?,
        None => {
            return Err(RpcError::invalid_params(
                "session/new needs _meta.lembas_model: the instance's name of the chat's model.",
            ));
        }
    };
    let model = check_model(engine, &model).await?;
    let effort = meta.effort.unwrap_or_default();
    let mut context = Context::default();
    context.update(lembas);

    let (id, mut state, hold) = stored_new(
        engine,
        &cwd,
        Fresh {
            model: model.clone(),
            mode,
            effort,
            context,
            given: !engine.serves_editor(),
        },
    )
    .await?;
    let mut notice = None;
    let mut mcp_report = None;
    if engine.serves_editor() {
        let servers = Arc::new(
            SessionServers::start(&engine.0.http, &cwd, servers, &engine.setup().decisions.mcp).await,
        );
        mcp_report = Some(servers.report());
        state = state.with_mcp_servers(servers);
    } else {
        notice = super::mcp_servers::ignored_on_the_link(&servers);
    }
    let session = Session::new(id.as_str().into(), cwd.clone(), state, Some(hold));
    session.set_additional_dirs(additional);
    engine.sessions().insert(id.as_str().into(), session);
    engine.device_event(crate::events::DeviceEvent::SessionOpened {
        session_id: id.as_str().into(),
        cwd: cwd.display().to_string(),
        model: model.clone(),
    });
    if let Some(notice) = &notice {
        tracing::warn!("{notice}");
    }
    // An editor's pickers (the link's client has _lembas/configure).
    let opened = engine.sessions().get(id.as_str()).cloned();
    let config_options = match opened {
        Some(session) if engine.serves_editor() => {
            Some(super::config_choices::options(engine, &session).await)
        }
        _ => None,
    };
    Ok(NewSessionAnswer {
        session_id: id.into(),
        modes: modes(mode, settings.remote.max_mode),
        config_options,
        meta: LembasMeta {
            lembas: SessionSettings {
                notice,
                ..SessionSettings::of(model, mode, effort, mcp_report).lembas
            },
        },
    })
}

/// What a new session starts with.
pub(super) struct Fresh {
    pub model: String,
    pub mode: crate::policy::Mode,
    pub effort: lembas_protocol::Effort,
    pub context: Context,
    /// Made for the link's client, which may delete it wherever its folder is later.
    pub given: bool,
}

/// A new session's file written and held, and its state: the session itself is the caller's to
/// make and keep.
pub(super) async fn stored_new(
    engine: &Engine,
    cwd: &Path,
    fresh: Fresh,
) -> Result<(String, SessionState, crate::store::SessionHold), RpcError> {
    let Fresh {
        model,
        mode,
        effort,
        context,
        given,
    } = fresh;
    let id = ids::new_session_id();
    // `given`: the mark that this session was made for the link's client, which may delete it
    // wherever its folder is later (docs/protocol.md, _lembas/session/delete); an editor's sessions have none.
    let header = SessionHeader {
        id: id.clone(),
        cwd: cwd.display().to_string(),
        created_ms: Some(now_ms()),
        model: model.clone(),
        mode: mode.as_str().to_string(),
        effort: Some(effort),
        title: String::new(),
        given,
    };
    let hold = engine
        .store()
        .hold(&id, &holder(engine))
        .map_err(|e| RpcError::internal(e.to_string()))?;
    let log = engine
        .store()
        .create(&id, &header)
        .map_err(|e| RpcError::internal(format!("The session could not be stored on this computer: {e}.")))?;
    // Read as the session starts and kept for it: the prompt does not change under a session.
    let memory = engine.read_memory(engine.memory_scope(&id)).await;
    let state = SessionState::new(model, mode, effort, log, engine.setup().decisions)
        .with_context(context)
        .with_memory(memory);
    Ok((id, state, hold))
}

async fn prompt_session(engine: &Engine, params: PromptParams) -> Result<PromptAnswer, RpcError> {
    // Taken apart, not cloned: the blocks may carry megabytes of base64.
    let PromptParams {
        session_id: id,
        prompt,
        meta,
    } = params;
    let lembas = meta.and_then(|m| m.lembas);
    let lembas = lembas.as_ref();
    let turn_id = lembas.and_then(|l| l.turn_id.clone());
    let scheduled = Run::of(
        lembas.and_then(|l| l.scheduled.as_ref()),
        engine.setup().least_approval_wait_s,
        &engine.setup().decisions.scheduled,
    );
    let session = opened(engine, &id).map_err(|e| match &scheduled {
        Some(_) if e.code == crate::rpc::INVALID_PARAMS => RpcError::refused(e.message, Reason::Folder),
        _ => e,
    })?;
    // A scheduled prompt is judged again whatever session/new said: the setting, the mode, the folder.
    let run = match scheduled {
        Some(run) => {
            let mode = crate::scheduled::admit(&engine.settings(), run.mode, run.texts)?;
            judge_again(engine, &session).map_err(|e| RpcError::refused(e.message, Reason::Folder))?;
            Some((run, mode))
        }
        None => {
            judge_again(engine, &session)?;
            None
        }
    };
    let phase = accepted(engine, &session, prompt, lembas, turn_id, run).await?;
    wait_done(phase).await
}

/// A prompt taken into `session`'s turns (the limits already judged): a turn id the session
/// knows is never run twice (the phase of the one it names); otherwise the `@path` mentions and
/// attachments read, and the turn started or queued. Its phase.
pub(super) async fn accepted(
    engine: &Engine,
    session: &Arc<Session>,
    prompt: Vec<lembas_protocol::content::ContentBlock>,
    lembas: Option<&lembas_protocol::context::LembasAsks>,
    turn_id: Option<TurnId>,
    run: Option<(Run, crate::policy::Mode)>,
) -> Result<tokio::sync::watch::Receiver<TurnPhase>, RpcError> {
    if let Some(phase) = turn_id.as_ref().and_then(|t| session.turn(t)) {
        return Ok(phase);
    }
    let id = session.id.clone();
    // `@path` in what the person typed (capability files); resource links and commands' text are
    // not read for mentions. An image mentioned goes with the prompt as an attached image does.
    let typed = super::prompt::typed_texts(&prompt);
    let (text, mut uploads) = attachments::prompt_of(prompt, &engine.setup().decisions.prompt)?;
    let mut mentioned = super::files::attach(engine, session, typed).await;
    uploads.extend(mentioned.iter_mut().filter_map(attachments::mentioned_image));
    // Written only once the prompt is accepted: a refused one keeps nothing.
    let attached = attachments::save(engine.store(), &id, uploads).await?;
    session.update_context(lembas);
    let enclosed = super::turn::Enclosed {
        files: attached,
        mentioned: crate::files::mention::attachments_text(&mentioned),
        machine: false,
    };
    let turn_id = turn_id.map_or_else(super::start::new_turn_id, TurnId::into_string);
    let input = super::start::Input::Prompt { text, enclosed };
    Ok(super::start::spawn(engine, session, turn_id, run, input))
}

async fn wait_done(mut phase: tokio::sync::watch::Receiver<TurnPhase>) -> Result<PromptAnswer, RpcError> {
    loop {
        if let TurnPhase::Done(answer) = &*phase.borrow_and_update() {
            return (**answer).clone();
        }
        if phase.changed().await.is_err() {
            return Err(RpcError::internal("The turn was lost before it finished."));
        }
    }
}

async fn set_mode(engine: &Engine, params: SetModeParams) -> Result<Empty, RpcError> {
    let session = held(engine, &params.session_id)?;
    let mode = params.mode_id.lowered_to(engine.settings().remote.max_mode);
    switch_mode(engine, &session, mode).await;
    Ok(Empty {})
}

async fn configure(engine: &Engine, params: ConfigureParams) -> Result<Configured, RpcError> {
    let session = held(engine, &params.session_id)?;
    let model = match params.model.filter(|m| !m.is_empty()) {
        Some(named) => Some(check_model(engine, &named).await?),
        None => None,
    };
    let (model, effort) = choose_model(engine, &session, model, params.effort).await;
    Ok(Configured { model, effort })
}

fn status(engine: &Engine, params: SessionRef) -> Result<SessionStatus, RpcError> {
    let id = params.session_id;
    // A chat a front end here holds: `held: "terminal"`, and nothing more of one not shared.
    match engine.holding(&id) {
        Some(holding) if !holding.shared => {
            return Ok(SessionStatus {
                exists: true,
                held: Held::Terminal,
                ..SessionStatus::unknown(&id)
            });
        }
        Some(_) => {
            if let Some(session) = engine.sessions().get(&id).cloned() {
                return Ok(SessionStatus {
                    held: Held::Terminal,
                    ..session.status()
                });
            }
        }
        None => {}
    }
    if let Some(session) = engine.sessions().get(&id).cloned() {
        judge_again(engine, &session)?;
        return Ok(session.status());
    }
    if !ids::is_session_id(&id) || !engine.store().exists(&id) {
        return Ok(SessionStatus::unknown(&id));
    }
    let summary = engine.store().summary(&id).ok();
    if let Some(summary) = &summary {
        judge_cwd(engine, Path::new(&summary.cwd))?;
    }
    let last = engine.store().load_turns(&id).ok().and_then(|turns| {
        turns
            .into_iter()
            .filter(|t| t.state == "done")
            .max_by_key(|t| t.updated_ms)
    });
    // The plan and the jobs as the session file last recorded them.
    let file = engine
        .store()
        .open(&id)
        .map(|opened| opened.file().0)
        .unwrap_or_default();
    let mut plan = None;
    let mut jobs = Vec::new();
    for record in file.records {
        match record {
            Record::Plan { plan: recorded } => plan = recorded,
            Record::Job { job } => jobs.push(job),
            _ => {}
        }
    }
    Ok(SessionStatus {
        exists: true,
        title: summary.map(|s| s.title).unwrap_or_default(),
        last_turn_id: last.map(|t| t.turn_id.into()),
        plan,
        jobs: super::job_board::Board::replayed(jobs, engine.setup().decisions.jobs.finished_kept).list(),
        ..SessionStatus::unknown(&id)
    })
}

fn history(engine: &Engine, params: SessionRef) -> Result<History, RpcError> {
    Ok(held(engine, &params.session_id)?.history())
}

async fn title(engine: &Engine, params: TitleParams) -> Result<Titled, RpcError> {
    let id = params.session_id;
    let title = params.title.trim().to_string();
    let max = engine.setup().decisions.engine.title_max_chars;
    if title.chars().count() > max {
        return Err(RpcError::invalid_params(format!(
            "A title may be at most {max} characters."
        )));
    }
    let session = held(engine, &id)?;
    session.set_title(title.clone());
    session.record(Record::Title { title: title.clone() });
    session.flush();
    super::session_access::tell_title(engine, &id, &title).await;
    Ok(Titled { title })
}
