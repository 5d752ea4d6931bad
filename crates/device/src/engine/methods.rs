//! The session methods of the link (acp.md): params read, limits applied as they are at this
//! moment, and the answers in the spec's shapes.

use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Engine;
use super::attachments;
use super::conversation;
use super::session::{Context, Session, SessionState, TurnPhase, replay};
use crate::policy::Mode;
use crate::policy::roots::{self, FolderRules};
use crate::rpc::{self, RpcError};
use crate::scheduled::Run;
use crate::store::{TurnEntry, ids};

const EFFORTS: [&str; 5] = ["off", "default", "low", "medium", "high"];

/// Whether the engine has a handler for `method`. [`request`] serves nothing else, so a method
/// left out here is -32601 (and its tests say so).
pub fn serves(method: &str) -> bool {
    matches!(
        method,
        "session/new"
            | "session/prompt"
            | "session/set_mode"
            | "session/cancel"
            | "_lembas/configure"
            | "_lembas/session/status"
            | "_lembas/session/history"
            | "_lembas/session/title"
            | "_lembas/session/delete"
            | "_lembas/steer"
            | "_lembas/session/rewind"
            | "_lembas/session/compact"
            | "_lembas/files/search"
            | "_lembas/commands"
    )
}

pub async fn request(engine: &Engine, method: &str, params: Value) -> Option<Result<Value, RpcError>> {
    if !serves(method) {
        return None;
    }
    Some(match method {
        "session/new" => new_session(engine, params).await,
        "session/prompt" => prompt_session(engine, params).await,
        "session/set_mode" => set_mode(engine, params).await,
        "session/cancel" => {
            notification(engine, method, &params);
            Ok(json!({}))
        }
        "_lembas/configure" => configure(engine, params).await,
        "_lembas/session/status" => status(engine, params),
        "_lembas/session/history" => history(engine, params),
        "_lembas/session/title" => title(engine, params).await,
        "_lembas/session/delete" => delete(engine, params).await,
        "_lembas/steer" => conversation::steer(engine, params).await,
        "_lembas/session/rewind" => conversation::rewind(engine, params).await,
        "_lembas/session/compact" => conversation::compact(engine, params).await,
        "_lembas/files/search" => super::files::search(engine, params).await,
        "_lembas/commands" => super::commands::list(engine, params).await,
        _ => return None,
    })
}

pub fn notification(engine: &Engine, method: &str, params: &Value) -> bool {
    if method != "session/cancel" {
        return false;
    }
    if let Some(session) = params
        .get("sessionId")
        .and_then(Value::as_str)
        .and_then(|id| engine.sessions().get(id).cloned())
    {
        session.cancel();
    }
    true
}

fn now_ms() -> u64 {
    crate::status::now_ms()
}

/// A level as ENGINE.md reads it: one of the five, anything else is `default`.
pub(super) fn effort_of(requested: Option<&str>) -> String {
    requested
        .filter(|e| EFFORTS.contains(e))
        .unwrap_or("default")
        .to_string()
}

fn modes(current: Mode, max: Mode) -> Value {
    let available: Vec<Value> = Mode::ALL
        .into_iter()
        .filter(|m| *m <= max)
        .map(|m| {
            let name = match m {
                Mode::Plan => "Plan",
                Mode::Manual => "Manual",
                Mode::Edit => "Edit",
                Mode::Auto => "Auto",
            };
            json!({ "id": m.as_str(), "name": name })
        })
        .collect();
    json!({ "currentModeId": current.as_str(), "availableModes": available })
}

/// The model the client named, checked against what the instance serves to this device now.
pub(super) async fn check_model(engine: &Engine, model: &str) -> Result<(), RpcError> {
    let instance = engine
        .instance()
        .await
        .map_err(|why| RpcError::invalid_params(format!("The instance's models cannot be used: {why}.")))?;
    let models = instance
        .chat_models()
        .await
        .map_err(|why| RpcError::invalid_params(format!("The instance's models cannot be read: {why}.")))?;
    if models.iter().any(|m| m == model) {
        Ok(())
    } else {
        Err(RpcError::invalid_params(format!(
            "The instance does not serve {model} to this device."
        )))
    }
}

/// The instance's default model for this device.
async fn default_model(engine: &Engine) -> Result<String, RpcError> {
    let instance = engine
        .instance()
        .await
        .map_err(|why| RpcError::invalid_params(format!("The instance's models cannot be used: {why}.")))?;
    instance
        .default_model()
        .await
        .map_err(|why| {
            RpcError::invalid_params(format!("The instance's default model cannot be read: {why}."))
        })?
        .ok_or_else(|| {
            RpcError::invalid_params(
                "The instance names no default model: choose one with _meta.model (a model it serves).",
            )
        })
}

async fn new_session(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    #[derive(Deserialize)]
    struct Params {
        cwd: String,
        #[serde(rename = "_meta", default)]
        meta: Value,
    }
    let params: Params = rpc::params("session/new", params)?;
    let settings = engine.settings();
    let rules = FolderRules::from_settings(&settings);
    let lembas = params.meta.get("lembas");
    let scheduled = Run::read(lembas)?;
    let mode = match &scheduled {
        // A scheduled session's mode is the schedule's; _meta.mode is not read.
        Some(run) => crate::scheduled::admit(&settings, run.mode)?,
        None => params
            .meta
            .get("mode")
            .and_then(Value::as_str)
            .map(|m| m.parse::<Mode>().map_err(RpcError::invalid_params))
            .transpose()?
            .unwrap_or_default()
            .lowered_to(settings.remote.max_mode),
    };
    let cwd = roots::judge_folder(Path::new(&params.cwd), &rules).map_err(|v| {
        let reason = v.reason.unwrap_or_default();
        if scheduled.is_some() {
            RpcError::refused(reason, "folder")
        } else {
            RpcError::invalid_params(reason)
        }
    })?;
    let named = params
        .meta
        .get("lembas_model")
        .or_else(|| params.meta.get("model"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
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
    check_model(engine, &model).await?;
    let effort = effort_of(params.meta.get("effort").and_then(Value::as_str));
    let mut context = Context::default();
    context.update(lembas);

    let id = ids::new_session_id();
    let header = json!({
        "id": id, "cwd": cwd.display().to_string(), "created_ms": now_ms(),
        "model": model, "mode": mode.as_str(), "effort": effort, "title": "",
    });
    let log = engine
        .store()
        .create(&id, header)
        .map_err(|e| RpcError::internal(format!("The session could not be stored on this computer: {e}.")))?;
    let mut state = SessionState::new(model.clone(), mode, effort.clone(), log);
    state.context = context;
    engine
        .sessions()
        .insert(id.clone(), Session::new(id.clone(), cwd.clone(), state));
    engine.device_event(crate::events::DeviceEvent::SessionOpened {
        session_id: id.clone(),
        cwd: cwd.display().to_string(),
        model: model.clone(),
    });
    Ok(json!({
        "sessionId": id,
        "modes": modes(mode, settings.remote.max_mode),
        "_meta": { "lembas": { "model": model, "mode": mode.as_str(), "effort": effort, "instance": true } },
    }))
}

pub(super) fn session_id(params: &Value) -> Result<String, RpcError> {
    params
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| RpcError::invalid_params("sessionId is missing: name the session (ses_…)."))
}

fn unknown(id: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "There is no session {id} on this device (it may have been deleted)."
    ))
}

/// A session in memory, or opened from the store (capability `sessions`) under session/new's rules.
pub(super) fn held(engine: &Engine, id: &str) -> Result<Arc<Session>, RpcError> {
    if let Some(session) = engine.sessions().get(id).cloned() {
        return Ok(session);
    }
    if !ids::is_session_id(id) || !engine.store().exists(id) {
        return Err(unknown(id));
    }
    let opened = engine
        .store()
        .open(id)
        .map_err(|e| RpcError::internal(format!("The session {id} could not be read back: {e}.")))?;
    if let Some(notice) = &opened.notice {
        tracing::warn!(session = id, "{notice}");
    }
    let turns = engine.store().load_turns(id).unwrap_or_default();
    let replayed = replay(opened.records, opened.log, &turns)
        .map_err(|e| RpcError::internal(format!("The session {id} could not be read back: {e}.")))?;
    let (session, opened) = {
        let mut sessions = engine.sessions();
        match sessions.get(id) {
            Some(session) => (session.clone(), false),
            None => {
                let session = Session::new(id.to_string(), replayed.cwd, replayed.state);
                sessions.insert(id.to_string(), session.clone());
                (session, true)
            }
        }
    };
    if opened {
        // Opened from the store: the client hears the session's commands.
        let (engine, session) = (engine.clone(), session.clone());
        tokio::spawn(async move { super::commands::tell(&engine, &session, false).await });
    }
    Ok(session)
}

/// A folder named without a session (`cwd` of a composer), judged as session/new judges it:
/// resolved, inside the roots, trusted where trust is needed; -32602 with the reason otherwise.
pub(super) fn judge_cwd(engine: &Engine, cwd: &Path) -> Result<PathBuf, RpcError> {
    let rules = FolderRules::from_settings(&engine.settings());
    roots::judge_folder(cwd, &rules).map_err(|v| RpcError::invalid_params(v.reason.unwrap_or_default()))
}

/// The session's folder judged again as it is now: a folder that became a symlink out of the roots,
/// or that remote work no longer allows, refuses the prompt.
pub(super) fn judge_again(engine: &Engine, session: &Session) -> Result<(), RpcError> {
    let rules = FolderRules::from_settings(&engine.settings());
    match roots::judge_folder(&session.cwd, &rules) {
        Ok(resolved) if resolved == session.cwd => Ok(()),
        Ok(resolved) => Err(RpcError::invalid_params(format!(
            "The session's folder {} now leads to {}; open a new session there.",
            session.cwd.display(),
            resolved.display()
        ))),
        Err(v) => Err(RpcError::invalid_params(v.reason.unwrap_or_default())),
    }
}

async fn prompt_session(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let id = session_id(&params)?;
    let lembas = params.pointer("/_meta/lembas");
    let turn_id = lembas
        .and_then(|l| l.get("turnId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    // A turn id this session knows is never run twice: its answer, when it has one.
    let known = turn_id.as_ref().and_then(|t| held(engine, &id).ok()?.turn(t));
    if let Some(phase) = known {
        return wait_done(phase).await;
    }
    let session = held(engine, &id)?;
    let (text, uploads) = attachments::prompt_of(params.get("prompt").unwrap_or(&Value::Null))?;
    // A scheduled prompt is judged again whatever session/new said: the setting, the mode, the folder.
    let run = match Run::read(lembas)? {
        Some(run) => {
            let mode = crate::scheduled::admit(&engine.settings(), run.mode)?;
            judge_again(engine, &session).map_err(|e| RpcError::refused(e.message, "folder"))?;
            Some((run, mode))
        }
        None => {
            judge_again(engine, &session)?;
            None
        }
    };
    // Written only once the prompt is accepted: a refused one keeps nothing.
    let attached = attachments::save(engine.store(), &id, uploads).await?;
    session.state().context.update(lembas);
    // `@path` in what the person typed (capability files); resource links and commands' text are
    // not read for mentions.
    let typed = super::prompt::typed_texts(params.get("prompt").unwrap_or(&Value::Null));
    let mentioned = super::files::attach(engine, &session, typed).await;
    let enclosed = super::turn::Enclosed {
        files: attached,
        mentioned: crate::files::mention::attachments_text(&mentioned),
    };
    let turn_id = turn_id.unwrap_or_else(|| format!("turn_{}", &ids::new_session_id()[4..]));
    let phase = session.accept_turn(&turn_id);
    engine.0.active_turns.fetch_add(1, Ordering::SeqCst);
    // The turn is the engine's, not this request's: it goes on when the link (and this task) ends.
    let (engine2, session2, turn2) = (engine.clone(), session.clone(), turn_id.clone());
    tokio::spawn(async move {
        let answer = {
            let _gate = session2.gate.lock().await;
            let still_here = engine2.sessions().contains_key(&session2.id);
            if still_here {
                session2.set_phase(&turn2, TurnPhase::Running);
                session2.state().run = run.clone();
                engine2.show_turn(&session2.id, true);
                let answer = super::commands::run_prompt(&engine2, &session2, &turn2, text, enclosed).await;
                session2.state().run = None;
                match &run {
                    Some((run, _)) => scheduled_answer(&session2, &turn2, run, answer),
                    None => answer,
                }
            } else {
                Err(unknown(&session2.id))
            }
        };
        let stored = match &answer {
            Ok(v) => v.clone(),
            Err(e) => json!({ "error": e }),
        };
        // The turns file holds the answer before it goes out, so a device killed right after still
        // answers a prompt sent again with it; waiting for the disk comes after the answer.
        let (engine3, session3, turn3) = (engine2.clone(), session2.clone(), turn2.clone());
        let saved = tokio::task::spawn_blocking(move || engine3.save_turn(&session3, &turn3, stored)).await;
        session2.set_phase(&turn2, TurnPhase::Done(answer));
        engine2.show_turn(&session2.id, false);
        if let Ok(true) = saved {
            let (engine3, id) = (engine2.clone(), session2.id.clone());
            let _ = tokio::task::spawn_blocking(move || {
                if let Err(e) = engine3.store().sync_turns(&id) {
                    tracing::warn!(session = %id, "the turn could not be stored: {e}");
                }
            })
            .await;
        }
        engine2.0.active_turns.fetch_sub(1, Ordering::SeqCst);
    });
    wait_done(phase).await
}

/// A scheduled turn answers with its outcome, a failure included (a result, not an error).
fn scheduled_answer(
    session: &Session,
    turn_id: &str,
    run: &Run,
    answer: Result<Value, RpcError>,
) -> Result<Value, RpcError> {
    let reply = session.last_reply(turn_id);
    Ok(match answer {
        Ok(mut answer) => {
            let stop = answer["stopReason"].as_str().map(str::to_string);
            answer["_meta"]["lembas"]["scheduled"] = run.outcome(stop.as_deref(), &reply, None);
            answer
        }
        Err(e) => json!({
            "stopReason": "end_turn",
            "_meta": { "lembas": { "turnId": turn_id, "scheduled": run.outcome(None, &reply, Some(&e.message)) } },
        }),
    })
}

async fn wait_done(mut phase: tokio::sync::watch::Receiver<TurnPhase>) -> Result<Value, RpcError> {
    loop {
        if let TurnPhase::Done(answer) = &*phase.borrow_and_update() {
            return answer.clone();
        }
        if phase.changed().await.is_err() {
            return Err(RpcError::internal("The turn was lost before it finished."));
        }
    }
}

impl Engine {
    /// Writes a finished turn's answer to the turns file, not yet synced; `true` when written.
    fn save_turn(&self, session: &Session, turn_id: &str, answer: Value) -> bool {
        // A deleted session leaves nothing behind, not even the answer of the turn it stopped.
        if !self.sessions().contains_key(&session.id) {
            return false;
        }
        let entry = TurnEntry {
            turn_id: turn_id.to_string(),
            state: "done".to_string(),
            answer: Some(answer),
            updated_ms: now_ms(),
        };
        match self.store().merge_turns_unsynced(&session.id, &[entry]) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(session = %session.id, "the turn could not be stored: {e}");
                false
            }
        }
    }
}

async fn set_mode(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let id = session_id(&params)?;
    let requested: Mode = params
        .get("modeId")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("modeId is missing: plan, manual, edit or auto."))?
        .parse()
        .map_err(RpcError::invalid_params)?;
    let session = held(engine, &id)?;
    let mode = requested.lowered_to(engine.settings().remote.max_mode);
    switch_mode(engine, &session, mode).await;
    Ok(json!({}))
}

/// The session's mode becomes `mode` (already lowered): recorded, and the client told.
pub(super) async fn switch_mode(engine: &Engine, session: &Session, mode: Mode) {
    session.state().mode = mode;
    session.record(json!({ "type": "mode", "mode": mode.as_str() }));
    session.flush();
    engine
        .update(
            &session.id,
            json!({ "sessionUpdate": "current_mode_update", "currentModeId": mode.as_str() }),
        )
        .await;
    engine
        .event(&session.id, json!({ "type": "mode", "mode": mode.as_str() }))
        .await;
}

async fn configure(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let id = session_id(&params)?;
    let session = held(engine, &id)?;
    let model = params
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty());
    if let Some(model) = model {
        check_model(engine, model).await?;
    }
    let effort = params
        .get("effort")
        .and_then(Value::as_str)
        .map(|e| effort_of(Some(e)));
    let (model, effort, changed) = {
        let mut state = session.state();
        let before = (state.model.clone(), state.effort.clone());
        if let Some(m) = model {
            state.model = m.to_string();
        }
        if let Some(e) = effort {
            state.effort = e;
        }
        let changed = before != (state.model.clone(), state.effort.clone());
        (state.model.clone(), state.effort.clone(), changed)
    };
    if changed {
        session.record(json!({ "type": "model", "model": model, "effort": effort }));
        session.flush();
        let connection = engine
            .settings()
            .server
            .as_ref()
            .and_then(|s| s.connection.clone());
        engine
            .event(&id, json!({ "type": "model", "ref": model, "effort": effort, "connection": connection, "instance": true }))
            .await;
    }
    Ok(json!({ "model": model, "effort": effort }))
}

fn status(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let id = session_id(&params)?;
    if let Some(session) = engine.sessions().get(&id).cloned() {
        return Ok(session.status());
    }
    if !ids::is_session_id(&id) || !engine.store().exists(&id) {
        return Ok(
            json!({ "sessionId": id, "exists": false, "held": "none", "busy": false, "title": "", "queued": [] }),
        );
    }
    let summary = engine.store().summary(&id).ok();
    let last = engine.store().load_turns(&id).ok().and_then(|turns| {
        turns
            .into_iter()
            .filter(|t| t.state == "done")
            .max_by_key(|t| t.updated_ms)
    });
    let mut answer = json!({
        "sessionId": id, "exists": true, "held": "none", "busy": false,
        "title": summary.map(|s| s.title).unwrap_or_default(), "queued": [],
    });
    if let Some(last) = last {
        answer["lastTurnId"] = json!(last.turn_id);
    }
    Ok(answer)
}

fn history(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let id = session_id(&params)?;
    Ok(held(engine, &id)?.history())
}

async fn title(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let id = session_id(&params)?;
    let title = params
        .get("title")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("title is missing (a string of at most 200 characters)."))?
        .trim()
        .to_string();
    let max = crate::decisions::decisions().engine.title_max_chars;
    if title.chars().count() > max {
        return Err(RpcError::invalid_params(format!(
            "A title may be at most {max} characters."
        )));
    }
    let session = held(engine, &id)?;
    session.state().title = title.clone();
    session.record(json!({ "type": "title", "title": title }));
    session.flush();
    engine
        .event(&id, json!({ "type": "title", "id": id, "title": title }))
        .await;
    Ok(json!({ "title": title }))
}

/// acp.md: the device deletes a session the client holds or was ever given (every session of this
/// engine was made by session/new for a client), or one whose folder is inside the roots while
/// remote work is on.
async fn delete(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let id = session_id(&params)?;
    if !ids::is_session_id(&id) {
        return Err(RpcError::invalid_params(format!(
            "{id} is not a session id of this device (ses_…)."
        )));
    }
    let in_memory = engine.sessions().remove(&id);
    engine.files().forget(&id);
    engine.shelf().forget_session(&id);
    if let Some(session) = &in_memory {
        session.cancel();
        engine.withdraw_cards_of(&id).await;
    }
    let deleted = engine
        .store()
        .delete(&id)
        .map_err(|e| RpcError::internal(format!("The session {id} could not be removed: {e}.")))?;
    if deleted || in_memory.is_some() {
        engine.device_event(crate::events::DeviceEvent::SessionDeleted { session_id: id });
    }
    Ok(json!({ "deleted": deleted || in_memory.is_some() }))
}
