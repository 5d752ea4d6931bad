//! What this computer's own window sees of the sessions and does to them: which are open here and
//! working, their timelines, every `session/update` the client gets (on a bounded stream a slow
//! window lags on, never one that waits), the window's Stop (session/cancel's path), Put back and
//! Take back.

use serde::Serialize;
use std::sync::Arc;
use tokio::sync::broadcast;

use super::Engine;
use super::grants::Grant;
use super::put_back::put_back;
use super::session::Session;
use super::timeline::{Timeline, timeline_of};
use crate::rpc::RpcError;
use crate::store::message::UserMessage;
use crate::store::record::DecisionRecord;
use crate::store::{Record, copies_of_turn, ids};
use crate::tools::copies;
use lembas_protocol::Reason;
use lembas_protocol::content::ContentBlock;
use lembas_protocol::update::SessionUpdate;

/// Updates the stream holds for its slowest reader (a window that lags re-reads the transcript).
pub(super) const STREAM: usize = 512;

/// One update as the window hears it.
#[derive(Debug, Clone, Serialize)]
pub struct ShownUpdate {
    pub session_id: String,
    pub update: Shown,
}

/// What the window hears: every update the client gets, and two of its own the client never does.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Shown {
    Client(SessionUpdate),
    Window(WindowOnly),
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "sessionUpdate")]
pub enum WindowOnly {
    /// A turn started or ended, for the running mark (the client has its prompt's answer).
    #[serde(rename = "_lembas_turn")]
    Turn { running: bool },
    /// A tool call's decision, as the session file records it.
    #[serde(rename = "_lembas_decision")]
    Decision { decision: Box<Record> },
}

/// A session open in this runtime, as the window lists it beside the stored ones.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveSession {
    pub id: String,
    /// A turn is running or waiting.
    pub running: bool,
    pub model: String,
    pub mode: String,
    /// The turn running now is a scheduled run.
    pub scheduled: bool,
}

impl Engine {
    pub fn updates(&self) -> broadcast::Receiver<ShownUpdate> {
        self.0.updates.subscribe()
    }

    /// Offers an update to the window; costs nothing while none listens.
    pub(super) fn show(&self, session_id: &str, update: impl FnOnce() -> Shown) {
        if self.0.updates.receiver_count() > 0 {
            let _ = self.0.updates.send(ShownUpdate {
                session_id: session_id.to_string(),
                update: update(),
            });
        }
    }

    /// The person's message as typed, for the window (the client knows what it sent).
    pub(super) fn show_prompt(&self, session: &Session, said: &UserMessage) {
        let text = said.as_typed();
        let update = || Shown::Client(SessionUpdate::user(ContentBlock::text(text)));
        self.show(&session.id, update);
    }

    /// A turn started or ended, for the window's running mark (not an ACP update: the client has
    /// its prompt's answer).
    pub(super) fn show_turn(&self, session_id: &str, running: bool) {
        self.show(session_id, || Shown::Window(WindowOnly::Turn { running }));
    }

    /// A tool call's decision: written with the session's step (the timeline reads it) and shown
    /// to the window at once.
    pub(super) fn record_decision(&self, session_id: &str, decision: DecisionRecord) {
        let session = self.sessions().get(session_id).cloned();
        if let Some(session) = session {
            let record = Record::Decision(decision);
            self.show(session_id, || {
                Shown::Window(WindowOnly::Decision {
                    decision: Box::new(record.clone()),
                })
            });
            session.record(record);
        }
    }

    /// The sessions open in this runtime.
    pub fn live_sessions(&self) -> Vec<LiveSession> {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        sessions
            .iter()
            .map(|session| {
                let running = session.busy();
                let settings = session.settings();
                LiveSession {
                    id: session.id.to_string(),
                    running,
                    model: settings.model,
                    mode: settings.mode.as_str().to_string(),
                    scheduled: session.is_scheduled(),
                }
            })
            .collect()
    }

    /// The window's Stop: the same as session/cancel (the client's prompt ends with `cancelled`).
    /// `false` when the session is not open here or nothing runs in it.
    pub fn stop(&self, session_id: &str) -> bool {
        let Some(session) = self.sessions().get(session_id).cloned() else {
            return false;
        };
        if !session.busy() {
            return false;
        }
        session.cancel();
        true
    }

    /// Stop all remote work: every running turn is cancelled and every job stopped; how many
    /// sessions were working.
    pub fn stop_all(&self) -> usize {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        super::job_limits::stop_all(self, &sessions);
        let mut stopped = 0;
        for session in sessions {
            if session.busy() {
                session.cancel();
                stopped += 1;
            }
        }
        stopped
    }

    /// A session's timeline ([`timeline_of`]), read from the store plus what the running step has
    /// not written yet, with the files each turn's copies keep and the grants in force. Blocking
    /// (reads the file and the copies' lists).
    pub fn timeline(&self, session_id: &str) -> Result<Timeline, RpcError> {
        if !ids::is_session_id(session_id) || !self.store().exists(session_id) {
            return Err(RpcError::refused(
                format!("There is no session {session_id} on this computer (sessions/list says which are)."),
                Reason::Unknown,
            ));
        }
        let mut file = self
            .store()
            .read(session_id)
            .map_err(|e| RpcError::internal(format!("The session {session_id} could not be read: {e}.")))?;
        let held = self.sessions().get(session_id).cloned();
        if let Some(session) = &held {
            file.records.extend(session.unflushed());
        }
        let folders = self.store().turn_folders(session_id).unwrap_or_default();
        let kept = |turn: &str| -> Vec<String> {
            copies_of_turn(&folders, turn)
                .and_then(|dir| copies::kept_in(dir).ok())
                .into_iter()
                .flatten()
                .map(|file| file.path.display().to_string())
                .collect()
        };
        let mut timeline = timeline_of(&file, kept);
        timeline.session_id = session_id.to_string();
        if let Some(session) = held {
            timeline.running = session.busy();
            timeline.grants = session.grants_in_force();
        }
        Ok(timeline)
    }

    /// The window's "Put back": the files `turn_id` and every later turn changed with `write` and
    /// `edit` put back as they were before it, the latest turn first, from the copies kept (see
    /// [`put_back`]). The conversation stays as it is (a rewind is the client's to ask). Refused
    /// while a turn runs: the session's gate is held meanwhile, so none starts.
    pub async fn put_back_from(&self, session_id: &str, turn_id: &str) -> Result<PutBackAnswer, RpcError> {
        let session = super::session_access::opened(self, session_id)?;
        let busy = || {
            RpcError::refused(
                format!("A turn is running in {session_id}: stop it or let it end, then put the files back."),
                Reason::Refused,
            )
        };
        if session.busy() {
            return Err(busy());
        }
        let Ok(_gate) = session.gate.try_lock() else {
            return Err(busy());
        };
        let engine = self.clone();
        let id = session_id.to_string();
        let timeline = tokio::task::spawn_blocking(move || engine.timeline(&id))
            .await
            .map_err(|e| RpcError::internal(e.to_string()))??;
        let Some(from) = timeline
            .turns
            .iter()
            .position(|t| t.turn_id.as_deref() == Some(turn_id))
        else {
            return Err(RpcError::refused(
                format!("There is no turn {turn_id} in {session_id} (sessions/timeline lists its turns)."),
                Reason::Unknown,
            ));
        };
        let mut answer = PutBackAnswer {
            session_id: session_id.to_string(),
            turn_id: turn_id.to_string(),
            files: Vec::new(),
            left: Vec::new(),
        };
        let mut any = false;
        for turn in timeline.turns[from..].iter().rev().filter(|t| !t.kept.is_empty()) {
            let Some(id) = &turn.turn_id else { continue };
            let done = put_back(self, &session, id).await?;
            any |= !done.none_kept;
            // A file two turns changed is named once.
            for file in done.restored {
                if !answer.files.contains(&file) {
                    answer.files.push(file);
                }
            }
            answer.left.extend(done.left);
        }
        session.flush();
        if !any {
            let kept = self.setup().decisions.commands.undo_turns_kept;
            return Err(RpcError::refused(
                format!(
                    "Nothing to put back from this turn on: no copies are kept for it or later turns \
                     (the last {kept} turns that wrote keep theirs)."
                ),
                Reason::Undo,
            ));
        }
        Ok(answer)
    }

    /// Takes back one "Allow for this chat": the next such call asks again. The grants left.
    pub fn revoke(&self, session_id: &str, grant: &Grant) -> Result<Vec<Grant>, RpcError> {
        let session = self.sessions().get(session_id).cloned();
        session
            .and_then(|session| session.revoke_grant(grant))
            .ok_or_else(|| not_granted(session_id))
    }
}

/// What the window's "Put back" did: every file put back, and those left as they are.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PutBackAnswer {
    pub session_id: String,
    pub turn_id: String,
    pub files: Vec<String>,
    pub left: Vec<String>,
}

fn not_granted(session_id: &str) -> RpcError {
    RpcError::refused(
        format!(
            "That is not allowed for the chat {session_id} now: it was taken back, or the chat is not open here."
        ),
        Reason::NotOpen,
    )
}
