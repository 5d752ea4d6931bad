//! A turn accepted by a session: it waits behind the session's gate (one turn at a time, in the
//! order they came), runs, and its answer is in the turns file before it goes out. A prompt's turn
//! and the machine turn that gives the model the notes of jobs that ended while it was idle both
//! start here; when a turn ends, notes that came too late for it start the next.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::watch;

use super::Engine;
use super::session::{Session, TurnPhase};
use super::session_access::{judge_again, unknown};
use super::turn::{self, Enclosed};
use crate::policy::Mode;
use crate::rpc::RpcError;
use crate::scheduled::Run;
use crate::store::turns::StoredAnswer;
use crate::store::{TurnEntry, ids};
use lembas_protocol::event::Event;
use lembas_protocol::prompt::{PromptAnswer, StopReason};

/// What a turn runs on.
pub enum Input {
    /// A person's prompt (a command's name expanded, files enclosed).
    Prompt { text: String, enclosed: Enclosed },
    /// The notes of jobs that ended, `(job id, note)`: a machine turn.
    Notes(Vec<(String, String)>),
}

/// A new turn id, as the device makes them for prompts that bring none.
pub fn new_turn_id() -> String {
    format!("turn_{}", &ids::new_session_id()[4..])
}

/// Queues the turn and runs it in a task of its own: the turn is the engine's, not a request's,
/// and goes on when the link ends. The receiver says when it is done and with what answer.
pub fn spawn(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: String,
    run: Option<(Run, Mode)>,
    input: Input,
) -> watch::Receiver<TurnPhase> {
    let phase = session.accept_turn(&turn_id);
    engine.0.active_turns.fetch_add(1, Ordering::SeqCst);
    let (engine, session) = (engine.clone(), session.clone());
    tokio::spawn(async move {
        let answer = {
            let _gate = session.gate.lock().await;
            if engine.sessions().contains_key(&session.id) {
                session.set_phase(&turn_id, TurnPhase::Running);
                session.set_run(run.clone());
                engine.show_turn(&session.id, true);
                let answer = match input {
                    Input::Prompt { text, enclosed } => {
                        super::commands::run_prompt(&engine, &session, &turn_id, text, enclosed).await
                    }
                    Input::Notes(notes) => machine_turn(&engine, &session, &turn_id, notes).await,
                };
                session.set_run(None);
                match &run {
                    Some((run, _)) => scheduled_answer(&session, &turn_id, run, answer),
                    None => answer,
                }
            } else {
                Err(unknown(&session.id))
            }
        };
        let stored = StoredAnswer::of(&answer);
        // The turns file holds the answer before it goes out, so a device killed right after still
        // answers a prompt sent again with it; waiting for the disk comes after the answer.
        let (engine2, session2, turn2) = (engine.clone(), session.clone(), turn_id.clone());
        let saved = tokio::task::spawn_blocking(move || save_turn(&engine2, &session2, &turn2, stored)).await;
        session.set_phase(&turn_id, TurnPhase::Done(Box::new(answer)));
        engine.show_turn(&session.id, false);
        if let Ok(true) = saved {
            let (engine2, id) = (engine.clone(), session.id.clone());
            let _ = tokio::task::spawn_blocking(move || {
                if let Err(e) = engine2.store().sync_turns(&id) {
                    tracing::warn!(session = %id, "the turn could not be stored: {e}");
                }
            })
            .await;
        }
        engine.0.active_turns.fetch_sub(1, Ordering::SeqCst);
        wake(&engine, &session);
    });
    phase
}

/// Notes of jobs that ended wait for the model: at rest, the session starts a machine turn with
/// them; while a turn runs or waits, that turn takes them in at its next step.
pub fn wake(engine: &Engine, session: &Arc<Session>) {
    // Not while the limits keep the session from working, nor after Stop all until remote work is
    // on again: the notes wait for that (`job_limits`) or for the next prompt.
    if engine.0.remote_stopped.load(Ordering::SeqCst) || judge_again(engine, session).is_err() {
        return;
    }
    let Some(notes) = session.take_job_notes_at_rest() else {
        return;
    };
    spawn(engine, session, new_turn_id(), None, Input::Notes(notes));
}

/// A turn the device starts: each note told (`job_note`), then the notes as the prompt, marked
/// `machine`.
async fn machine_turn(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    notes: Vec<(String, String)>,
) -> Result<PromptAnswer, RpcError> {
    for (job_id, text) in &notes {
        engine
            .event(
                &session.id,
                Event::JobNote {
                    job_id: job_id.clone(),
                    text: text.clone(),
                    turn_id: None,
                },
            )
            .await;
    }
    let text = notes
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join("\n");
    let enclosed = Enclosed {
        machine: true,
        ..Enclosed::default()
    };
    turn::run(engine, session, turn_id, text, None, enclosed).await
}

/// A scheduled turn answers with its outcome, a failure included (a result, not an error).
fn scheduled_answer(
    session: &Session,
    turn_id: &str,
    run: &Run,
    answer: Result<PromptAnswer, RpcError>,
) -> Result<PromptAnswer, RpcError> {
    let reply = session.last_reply(turn_id);
    Ok(match answer {
        Ok(mut answer) => {
            let stop = answer.stop_reason.as_str();
            answer.end().scheduled = Some(run.outcome(Some(stop), &reply, None));
            answer
        }
        Err(e) => {
            let mut answer = PromptAnswer::ended(StopReason::EndTurn, turn_id);
            answer.end().scheduled = Some(run.outcome(None, &reply, Some(&e.message)));
            answer
        }
    })
}

/// Writes a finished turn's answer to the turns file, not yet synced; `true` when written.
fn save_turn(engine: &Engine, session: &Session, turn_id: &str, answer: StoredAnswer) -> bool {
    // A deleted session leaves nothing behind, not even the answer of the turn it stopped.
    if !engine.sessions().contains_key(&session.id) {
        return false;
    }
    let entry = TurnEntry {
        turn_id: turn_id.to_string(),
        state: "done".to_string(),
        answer: Some(answer),
        updated_ms: crate::status::now_ms(),
    };
    match engine.store().merge_turns_unsynced(&session.id, &[entry]) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(session = %session.id, "the turn could not be stored: {e}");
            false
        }
    }
}
