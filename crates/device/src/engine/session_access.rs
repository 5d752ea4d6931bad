//! How a request reaches a session: its id read from the params, the session held here or opened
//! from the store (one process at a time), its folder judged again under the limits as they are
//! at this moment, its mode switched with the client told, and the model and effort a client
//! names checked. Below the router ([`super::methods`]) and every handler that serves a session.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Engine;
use super::session::{Session, Settings, replay};
use crate::policy::Mode;
use crate::policy::roots;
use crate::rpc::RpcError;
use crate::store::Record;
use crate::store::ids;
use lembas_protocol::Effort;
use lembas_protocol::event::Event;
use lembas_protocol::session::{ModeChoice, Modes};
use lembas_protocol::update::SessionUpdate;

/// The model the client named, checked against what the instance serves to this device now: the
/// served id it stands for.
pub(crate) async fn check_model(engine: &Engine, model: &str) -> Result<String, RpcError> {
    let instance = engine
        .instance()
        .await
        .map_err(|why| RpcError::invalid_params(format!("The instance's models cannot be used: {why}.")))?;
    let models = instance
        .chat_models()
        .await
        .map_err(|why| RpcError::invalid_params(format!("The instance's models cannot be read: {why}.")))?;
    let connection = engine
        .settings()
        .server
        .as_ref()
        .and_then(|s| s.connection.clone());
    served_name(&models, connection.as_deref(), model).ok_or_else(|| {
        RpcError::invalid_params(format!("The instance does not serve {model} to this device."))
    })
}

/// The served id `named` stands for: itself, or the older form `<connection>/<served id>` of the
/// login's connection.
fn served_name(models: &[String], connection: Option<&str>, named: &str) -> Option<String> {
    if models.iter().any(|m| m == named) {
        return Some(named.to_string());
    }
    let older = named.strip_prefix(connection?)?.strip_prefix('/')?;
    models.iter().find(|m| *m == older).cloned()
}

pub(crate) fn unknown(id: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "There is no session {id} on this device (it may have been deleted)."
    ))
}

/// A session a request may use now: in memory, or opened from the store (capability `sessions`),
/// its folder judged under session/new's rules as the limits are at this moment (docs/protocol.md: "The
/// device's limits apply to every request as they are at that moment"). A folder taken out of
/// the roots, untrusted, or remote work turned off: -32602 with the reason, and nothing of the
/// session is read out (its history, its title, its files).
pub(crate) fn held(engine: &Engine, id: &str) -> Result<Arc<Session>, RpcError> {
    let session = opened(engine, id)?;
    judge_again(engine, &session)?;
    Ok(session)
}

/// [`held`] without the judging, for the requests that judge apart (a scheduled prompt says
/// `data.reason`).
pub(crate) fn opened(engine: &Engine, id: &str) -> Result<Arc<Session>, RpcError> {
    // A chat held at this computer and not shared is not the link's to reach.
    if !engine.link_sees(id) {
        return Err(RpcError::invalid_params(format!(
            "The chat {id} is held at this computer and not shared with LLeMbas."
        )));
    }
    if let Some(session) = engine.sessions().get(id).cloned() {
        return Ok(session);
    }
    if !ids::is_session_id(id) || !engine.store().exists(id) {
        return Err(unknown(id));
    }
    // A stored session's folder is judged before it is opened: one the limits refuse is not read.
    let summary = engine.store().summary(id).ok();
    if let Some(summary) = &summary {
        judge_cwd(engine, Path::new(&summary.cwd))?;
    }
    let (session, opened) = from_store(engine, id)?;
    if opened && !engine.serves_editor() && !summary.is_some_and(|s| s.given) {
        // Given to the link's client now: the mark that lets it delete the session later.
        session.record(Record::ForLinkClient);
        session.flush();
    }
    if opened {
        // Opened from the store: the client hears the session's commands, and its plan.
        let (engine, session) = (engine.clone(), session.clone());
        tokio::spawn(async move {
            // The plan first: it is in memory, while the commands are read from files.
            let plan = session.plan();
            if plan.is_some() {
                super::plan_state::tell(&engine, &session.id, plan.as_ref()).await;
            }
            engine.session_opened(&session.id).await;
        });
    }
    Ok(session)
}

/// A stored session read back and held by this process (the file's hold taken: another process
/// holding it is -32602 with who), unless it is in memory already; whether it was opened here.
/// Its folder is the caller's to judge.
pub(crate) fn from_store(engine: &Engine, id: &str) -> Result<(Arc<Session>, bool), RpcError> {
    if let Some(session) = engine.sessions().get(id).cloned() {
        return Ok((session, false));
    }
    let hold = engine
        .store()
        .hold(id, &holder(engine))
        .map_err(|e| RpcError::invalid_params(e.to_string()))?;
    let opened = engine
        .store()
        .open(id)
        .map_err(|e| RpcError::internal(format!("The session {id} could not be read back: {e}.")))?;
    if let Some(notice) = &opened.notice {
        tracing::warn!(session = id, "{notice}");
    }
    let turns = engine.store().load_turns(id).unwrap_or_default();
    let (file, log) = opened.file();
    let replayed = replay(file, log, &turns, engine.setup().decisions)
        .map_err(|e| RpcError::internal(format!("The session {id} could not be read back: {e}.")))?;
    let (session, opened) = {
        let mut sessions = engine.sessions();
        match sessions.get(id) {
            Some(session) => (session.clone(), false),
            None => {
                let session = Session::new(id.into(), replayed.cwd, replayed.state, Some(hold));
                sessions.insert(id.into(), session.clone());
                (session, true)
            }
        }
    };
    Ok((session, opened))
}

/// Who holds a session this process opens, as another process is told.
pub(crate) fn holder(engine: &Engine) -> String {
    let pid = std::process::id();
    if engine.serves_editor() {
        format!("an editor's lembas serve --stdio (pid {pid})")
    } else {
        format!("the LLeMbas device runtime (pid {pid})")
    }
}

/// A folder named without a session (`cwd` of a composer), judged as session/new judges it:
/// resolved, inside the roots, trusted where trust is needed; -32602 with the reason otherwise.
pub(crate) fn judge_cwd(engine: &Engine, cwd: &Path) -> Result<PathBuf, RpcError> {
    let rules = engine.settings().folder_rules();
    roots::judge_folder(cwd, &rules).map_err(|v| RpcError::invalid_params(v.reason.unwrap_or_default()))
}

/// The most `additionalDirectories` one session takes.
const MOST_ADDITIONAL: usize = 32;

/// An editor's `additionalDirectories`, each judged as the session's folder is (absolute,
/// resolved, inside the roots, trusted where trust is needed, not a protected place): the resolved
/// folders, or -32602 naming the one refused and why.
pub(crate) fn judge_additional(engine: &Engine, dirs: &[String]) -> Result<Vec<PathBuf>, RpcError> {
    if dirs.len() > MOST_ADDITIONAL {
        return Err(RpcError::invalid_params(format!(
            "{} additional directories were given; a session takes at most {MOST_ADDITIONAL}.",
            dirs.len()
        )));
    }
    let rules = engine.settings().folder_rules();
    let mut judged: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !Path::new(dir).is_absolute() {
            return Err(RpcError::invalid_params(format!(
                "The additional directory {dir:?} is not an absolute path: name each folder from the root."
            )));
        }
        let resolved = roots::judge_folder(Path::new(dir), &rules).map_err(|v| {
            RpcError::invalid_params(format!(
                "The additional directory {dir} cannot be used: {}",
                v.reason.unwrap_or_default()
            ))
        })?;
        if !judged.contains(&resolved) {
            judged.push(resolved);
        }
    }
    Ok(judged)
}

/// The session's folder judged again as it is now: a folder that became a symlink out of the roots,
/// or that remote work no longer allows, refuses the prompt.
pub(crate) fn judge_again(engine: &Engine, session: &Session) -> Result<(), RpcError> {
    let rules = engine.settings().folder_rules();
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

/// The session's mode becomes `mode` (already lowered): recorded, and the client told.
pub(crate) async fn switch_mode(engine: &Engine, session: &Session, mode: Mode) {
    // Jobs obey the limits at every moment: those started to write end in plan.
    session.set_mode(mode);
    session.record(Record::Mode { mode });
    session.flush();
    engine
        .update(
            &session.id,
            SessionUpdate::CurrentModeUpdate {
                current_mode_id: mode,
            },
        )
        .await;
    engine.event(&session.id, Event::Mode { mode }).await;
}

/// The session's model and effort, either or both chosen by a client (`_lembas/configure`,
/// `session/set_config_option`): a change is recorded and followed by the `model` event. What they
/// are now.
pub(crate) async fn choose_model(
    engine: &Engine,
    session: &Session,
    model: Option<String>,
    effort: Option<Effort>,
) -> (String, Effort) {
    let choice = session.choose_model(model, effort);
    let (changed, now) = (choice.changed(), choice.now);
    if changed {
        session.record(Record::Model {
            model: now.0.clone(),
            effort: Some(now.1),
        });
        session.flush();
        tell_model(engine, session).await;
    }
    now
}

/// The session's title changed: the `title` event, and for an editor ACP's `session_info_update`.
pub(crate) async fn tell_title(engine: &Engine, id: &str, title: &str) {
    engine
        .event(
            id,
            Event::Title {
                id: id.to_string(),
                title: title.to_string(),
            },
        )
        .await;
    if engine.serves_editor() {
        engine
            .update(
                id,
                SessionUpdate::SessionInfoUpdate {
                    title: title.to_string(),
                },
            )
            .await;
    }
}

/// The `model` event: the session's model and effort as they are now, after any change (a
/// client's `_lembas/configure`, a command's front matter taking over for its prompt, and giving
/// them back).
pub(crate) async fn tell_model(engine: &Engine, session: &Session) {
    let Settings { model, effort, .. } = session.settings();
    let connection = engine
        .settings()
        .server
        .as_ref()
        .and_then(|s| s.connection.clone());
    engine
        .event(
            &session.id,
            Event::Model {
                model: model.to_string(),
                effort,
                connection,
                instance: true,
            },
        )
        .await;
    // An editor hears it as ACP's own update (the link's client has the model event).
    if engine.serves_editor() {
        let config_options = super::config_choices::options(engine, session).await;
        engine
            .update(&session.id, SessionUpdate::ConfigOptionUpdate { config_options })
            .await;
    }
}

/// ACP's mode state: the current mode and those the device's `max_mode` allows.
pub(crate) fn modes(current: Mode, max: Mode) -> Modes {
    let available_modes = Mode::ALL
        .into_iter()
        .filter(|m| *m <= max)
        .map(|m| {
            let name = match m {
                Mode::Plan => "Plan",
                Mode::Manual => "Manual",
                Mode::Edit => "Edit",
                Mode::Auto => "Auto",
            };
            ModeChoice {
                id: m,
                name: name.to_string(),
            }
        })
        .collect();
    Modes {
        current_mode_id: current,
        available_modes,
    }
}

#[cfg(test)]
mod tests {
    use super::served_name;

    #[test]
    fn older_model_names_name_the_same_model() {
        let models = ["example/chat-fast".to_string(), "chat-plain".to_string()];
        let cases = [
            ("example/chat-fast", Some("example/chat-fast")),
            ("example/example/chat-fast", Some("example/chat-fast")),
            ("example/chat-plain", Some("chat-plain")),
            ("other/chat-plain", None),
            ("example/", None),
            ("example/nope", None),
            ("chat-plain", Some("chat-plain")),
        ];
        for (named, served) in cases {
            assert_eq!(
                served_name(&models, Some("example"), named).as_deref(),
                served,
                "{named}"
            );
        }
        assert_eq!(served_name(&models, None, "example/chat-plain"), None);
    }
}
