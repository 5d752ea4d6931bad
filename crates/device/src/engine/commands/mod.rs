//! Commands (capability `commands`; docs/protocol.md "Commands"): a prompt starting with `/name`,
//! where name is in the session's command set, is that command. compact, undo and plan without a
//! task are actions and send nothing to the model; the others send their expanded text, shown in
//! the transcript as typed. A `/name` not in the set is sent as it is, slash and all. The set is
//! told to the client as ACP's `available_commands_update`.

mod builtin;
mod catalog;
mod undo;

use std::path::Path;
use std::sync::Arc;

use super::Engine;
use super::conversation::compact_now;
use super::session::{ModelChange, Session};
use super::session_access::{check_model, held, judge_cwd, switch_mode, tell_model};
use super::turn::{self, Enclosed};
use crate::policy::Mode;
use crate::rpc::RpcError;
use builtin::Expansion;
use catalog::{Command, CommandSource, Sources};
use lembas_protocol::LembasMeta;
use lembas_protocol::composer::{CommandList, FolderParams};
use lembas_protocol::event::{Event, TaskState};
use lembas_protocol::prompt::{PromptAnswer, StopReason, TurnEnd};
use lembas_protocol::update::SessionUpdate;
use lembas_protocol::{Reason, TurnId};

/// The commands a session in `folder` offers now (the files are read each time: a command file
/// written during a turn counts from the next prompt).
pub fn command_set(engine: &Engine, folder: &Path) -> Vec<Command> {
    let rules = engine.settings().folder_rules();
    let home = engine.setup().dirs.resolved_home();
    let sources = Sources {
        project: catalog::project_of(folder, &rules.trusted, &home),
        user: engine.setup().dirs.config.clone(),
        protected: engine.setup().dirs.protected_places(),
        numbers: &engine.setup().decisions.commands,
    };
    catalog::command_set(&sources)
}

fn update_of(set: &[Command]) -> SessionUpdate {
    SessionUpdate::AvailableCommandsUpdate {
        available_commands: set.iter().map(Command::acp).collect(),
    }
}

/// Tells the client the session's commands; with `only_if_changed`, only when they differ from
/// what it was told last.
pub async fn tell(engine: &Engine, session: &Session, only_if_changed: bool) {
    let update = update_of(&command_set(engine, &session.cwd));
    if !session.commands_to_tell(&update, only_if_changed) {
        return;
    }
    engine.update(&session.id, update).await;
}

/// `_lembas/commands`: a session's set, or a folder's (judged as session/new judges it) for a
/// composer with no session yet.
pub async fn list(engine: &Engine, params: FolderParams) -> Result<CommandList, RpcError> {
    let folder = match (params.session_id, params.cwd) {
        (Some(id), _) => held(engine, &id)?.cwd.clone(),
        (None, Some(cwd)) => judge_cwd(engine, Path::new(&cwd))?,
        (None, None) => {
            return Err(RpcError::invalid_params(
                "Name a session (sessionId) or a folder (cwd, absolute) to list its commands.",
            ));
        }
    };
    let set = command_set(engine, &folder);
    Ok(CommandList {
        commands: set.iter().map(Command::acp).collect(),
    })
}

/// The command set of `folder`, judged by the caller (a chat a front end holds).
pub(crate) fn list_in(engine: &Engine, folder: &Path) -> CommandList {
    CommandList {
        commands: command_set(engine, folder).iter().map(Command::acp).collect(),
    }
}

/// `/name rest` at the start of a text: the name and the rest.
fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    Some((&rest[..end], &rest[end..]))
}

/// Runs a prompt: the command it names, or a turn with its text as it is. Afterwards the client
/// hears the command set again when the turn changed it, and copies of old turns are pruned.
pub async fn run_prompt(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    text: String,
    enclosed: Enclosed,
) -> Result<PromptAnswer, RpcError> {
    let set = command_set(engine, &session.cwd);
    let named = split(&text).and_then(|(name, args)| {
        set.iter()
            .find(|c| c.name == name)
            .map(|c| (c.clone(), args.to_string()))
    });
    let answer = match named {
        None => turn::run(engine, session, turn_id, text, None, enclosed).await,
        Some((command, args)) => {
            run_command(engine, session, turn_id, &text, &command, &args, enclosed).await
        }
    };
    if let Err(e) = engine
        .store()
        .prune_copies(&session.id, engine.setup().decisions.commands.undo_turns_kept)
    {
        tracing::warn!(session = %session.id, "old turns' copies could not be pruned: {e}");
    }
    tell(engine, session, true).await;
    answer
}

async fn run_command(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    typed: &str,
    command: &Command,
    args: &str,
    enclosed: Enclosed,
) -> Result<PromptAnswer, RpcError> {
    let scheduled = session.is_scheduled();
    let task = args.trim();
    let action = match (command.kind, command.name.as_str()) {
        (CommandSource::Builtin, "compact") => Some(Action::Compact),
        (CommandSource::Builtin, "undo") => Some(Action::Undo),
        (CommandSource::Builtin, "plan") if task.is_empty() => Some(Action::Plan),
        _ => None,
    };
    if let Some(action) = action {
        return run_action(engine, session, turn_id, typed, action).await;
    }
    let expansion = if command.kind == CommandSource::Builtin && command.name == "plan" {
        // A scheduled turn's mode is the schedule's, and plan is never one of them.
        if scheduled {
            return Err(RpcError::refused(
                engine.setup().decisions.scheduled.texts.plan.clone(),
                Reason::Plan,
            ));
        }
        let mode = Mode::Plan.lowered_to(engine.settings().remote.max_mode);
        switch_mode(engine, session, mode).await;
        Expansion::Prompt(task.to_string())
    } else {
        // The device's own git runs for the model in the box, writing nothing.
        let sandbox = engine.command_sandbox(session, Mode::Plan);
        builtin::expand(
            command,
            args,
            &session.cwd,
            &sandbox,
            &engine.setup().decisions.commands,
        )
        .await
    };
    match expansion {
        Expansion::Prompt(text) => {
            let held = hold_model(engine, session, command).await?;
            if held.as_ref().is_some_and(ModelChange::changed) {
                tell_model(engine, session).await;
            }
            // A scheduled turn keeps the schedule's mode whatever the command says.
            if let Some(mode) = command.mode.filter(|_| !scheduled) {
                let mode = mode.lowered_to(engine.settings().remote.max_mode);
                switch_mode(engine, session, mode).await;
            }
            let answer = turn::run(engine, session, turn_id, text, Some(typed), enclosed).await;
            if let Some(held) = held
                && session.take_back_model(held)
            {
                tell_model(engine, session).await;
            }
            let mut answer = answer?;
            answer.end().command = Some(command.name.clone());
            Ok(answer)
        }
        Expansion::Nothing(message) => {
            quiet(engine, session, turn_id, typed, TaskState::Start).await;
            quiet(engine, session, turn_id, typed, TaskState::End).await;
            let said = TurnEnd {
                message: Some(message),
                ..TurnEnd::default()
            };
            Ok(answered(turn_id, &command.name, said))
        }
    }
}

/// A command's model (checked as session/new checks one) and effort, for its prompt: the session's
/// model and effort before and while the command's own run it (taken back after the prompt).
async fn hold_model(
    engine: &Engine,
    session: &Session,
    command: &Command,
) -> Result<Option<ModelChange>, RpcError> {
    if command.model.is_none() && command.effort.is_none() {
        return Ok(None);
    }
    let model = match &command.model {
        Some(named) => Some(check_model(engine, named).await?),
        None => None,
    };
    Ok(Some(session.choose_model(model, command.effort)))
}

#[derive(Debug, Clone, Copy)]
enum Action {
    Compact,
    Undo,
    Plan,
}

impl Action {
    /// The command's name, as the answer says it.
    fn name(self) -> &'static str {
        match self {
            Action::Compact => "compact",
            Action::Undo => "undo",
            Action::Plan => "plan",
        }
    }
}

/// An action: nothing goes to the model except compact's request for a summary.
async fn run_action(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    typed: &str,
    action: Action,
) -> Result<PromptAnswer, RpcError> {
    session.set_acting(true);
    let outcome = act(engine, session, turn_id, typed, action).await;
    session.set_acting(false);
    outcome
}

async fn act(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    typed: &str,
    action: Action,
) -> Result<PromptAnswer, RpcError> {
    let texts = &engine.setup().decisions.commands.texts;
    let scheduled = session.is_scheduled();
    quiet(engine, session, turn_id, typed, TaskState::Start).await;
    let outcome = match action {
        Action::Compact if session.conversation_is_empty() => Ok(TurnEnd {
            message: Some(texts.compact_nothing.clone()),
            ..TurnEnd::default()
        }),
        Action::Compact => compact_now(engine, session).await.map(|summary| TurnEnd {
            summary: Some(summary),
            ..TurnEnd::default()
        }),
        Action::Undo if scheduled => Err(RpcError::refused(texts.undo_scheduled.clone(), Reason::Undo)),
        Action::Undo => undo::undo(engine, session).await.map(|(undone, left)| TurnEnd {
            message: left.or_else(|| undone.is_none().then(|| texts.undo_nothing.clone())),
            undone: Some(undone),
            ..TurnEnd::default()
        }),
        Action::Plan if scheduled => Err(RpcError::refused(
            engine.setup().decisions.scheduled.texts.plan.clone(),
            Reason::Plan,
        )),
        Action::Plan => {
            let mode = Mode::Plan.lowered_to(engine.settings().remote.max_mode);
            switch_mode(engine, session, mode).await;
            Ok(TurnEnd {
                mode: Some(mode),
                ..TurnEnd::default()
            })
        }
    };
    quiet(engine, session, turn_id, typed, TaskState::End).await;
    Ok(answered(turn_id, action.name(), outcome?))
}

/// session/prompt's answer for a command the model did not run: what it `said` in `_meta.lembas`.
fn answered(turn_id: &str, name: &str, said: TurnEnd) -> PromptAnswer {
    PromptAnswer {
        stop_reason: StopReason::EndTurn,
        meta: LembasMeta {
            lembas: TurnEnd {
                turn_id: turn_id.into(),
                command: Some(name.to_string()),
                ..said
            },
        },
    }
}

/// The turn events of a prompt the model does not answer, so a client follows it like any turn:
/// `prompt` and `task` start, then `task` end and `done`.
async fn quiet(engine: &Engine, session: &Session, turn_id: &str, typed: &str, state: TaskState) {
    let sid = &session.id;
    let turn = || TurnId::from(turn_id);
    if state == TaskState::Start {
        let prompt = Event::Prompt {
            text: typed.to_string(),
            turn_id: turn(),
            attachments: Vec::new(),
            machine: false,
        };
        engine.event(sid, prompt).await;
    }
    engine
        .event(
            sid,
            Event::Task {
                state,
                turn_id: turn(),
            },
        )
        .await;
    if state == TaskState::End {
        let done = Event::Done {
            turn_id: turn(),
            stop_reason: Some(StopReason::EndTurn),
        };
        engine.event(sid, done).await;
    }
    engine.device_event(crate::events::DeviceEvent::Turn {
        session_id: sid.clone(),
        turn_id: turn_id.to_string(),
        state,
        stop_reason: (state == TaskState::End).then_some(StopReason::EndTurn),
        cwd: session.cwd.display().to_string(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_name_and_what_follows() {
        assert_eq!(split("/review main"), Some(("review", " main")));
        assert_eq!(split("  /undo"), Some(("undo", "")));
        assert_eq!(split("/plan\nfix the build"), Some(("plan", "\nfix the build")));
        assert_eq!(split("/usr/bin/env is odd"), Some(("usr/bin/env", " is odd")));
        assert_eq!(split("no slash"), None);
    }
}
