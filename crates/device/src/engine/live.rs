//! What this computer's own window sees of the sessions: which are open here and working, their
//! transcripts, every `session/update` the client gets (on a bounded stream a slow window lags on,
//! never one that waits), and the window's Stop, which is session/cancel's path.

use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::broadcast;

use super::Engine;
use super::session::{Message, Session, compacted_from_record, history_turns, rewind_messages, user_text};
use crate::rpc::RpcError;
use crate::store::ids;
use lembas_protocol::Reason;

/// Updates the stream holds for its slowest reader (a window that lags re-reads the transcript).
pub(super) const STREAM: usize = 512;
/// Tool-call decisions kept per session in its file's order, for the transcript (the newest).
const DECISIONS_KEPT: usize = 500;

/// One update as the window hears it.
#[derive(Debug, Clone, Serialize)]
pub struct SessionUpdate {
    pub session_id: String,
    pub update: Value,
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
    pub fn updates(&self) -> broadcast::Receiver<SessionUpdate> {
        self.0.updates.subscribe()
    }

    /// Offers an update to the window; costs nothing while none listens.
    pub(super) fn show(&self, session_id: &str, update: &Value) {
        if self.0.updates.receiver_count() > 0 {
            let _ = self.0.updates.send(SessionUpdate {
                session_id: session_id.to_string(),
                update: update.clone(),
            });
        }
    }

    /// The person's message as typed, for the window (the client knows what it sent).
    pub(super) fn show_prompt(&self, session: &Session, body: &Value) {
        let text = user_text(body);
        let update =
            json!({ "sessionUpdate": "user_message_chunk", "content": { "type": "text", "text": text } });
        self.show(&session.id, &update);
    }

    /// A turn started or ended, for the window's running mark (not an ACP update: the client has
    /// its prompt's answer).
    pub(super) fn show_turn(&self, session_id: &str, running: bool) {
        self.show(
            session_id,
            &json!({ "sessionUpdate": "_lembas_turn", "running": running }),
        );
    }

    /// A tool call's decision (see [`transcript_of`]): written with the session's step and shown
    /// to the window at once.
    pub(super) fn record_decision(&self, session_id: &str, decision: Value) {
        let session = self.sessions().get(session_id).cloned();
        if let Some(session) = session {
            self.show(
                session_id,
                &json!({ "sessionUpdate": "_lembas_decision", "decision": decision }),
            );
            session.record(decision);
        }
    }

    /// The sessions open in this runtime.
    pub fn live_sessions(&self) -> Vec<LiveSession> {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        sessions
            .iter()
            .map(|session| {
                let busy = session.status()["busy"] == json!(true);
                let state = session.state();
                LiveSession {
                    id: session.id.clone(),
                    running: busy,
                    model: state.model.clone(),
                    mode: state.mode.as_str().to_string(),
                    scheduled: state.run.is_some(),
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
        if session.status()["busy"] != json!(true) {
            return false;
        }
        session.cancel();
        true
    }

    /// Stop all remote work: every running turn is cancelled; how many sessions were working.
    pub fn stop_all(&self) -> usize {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        let mut stopped = 0;
        for session in sessions {
            if session.status()["busy"] == json!(true) {
                session.cancel();
                stopped += 1;
            }
        }
        stopped
    }

    /// A session's transcript so far: its history turns (as `_lembas/session/history` gives them)
    /// with each tool call's decision, read from the store plus what the running step has not
    /// written yet. Blocking (reads the file).
    pub fn transcript(&self, session_id: &str) -> Result<Value, RpcError> {
        if !ids::is_session_id(session_id) || !self.store().exists(session_id) {
            return Err(RpcError::refused(
                format!("There is no session {session_id} on this computer (sessions/list says which are)."),
                Reason::Unknown,
            ));
        }
        let mut records = self
            .store()
            .records(session_id)
            .map_err(|e| RpcError::internal(format!("The session {session_id} could not be read: {e}.")))?;
        let held = self.sessions().get(session_id).cloned();
        if let Some(session) = &held {
            records.extend(session.state().unflushed.iter().cloned());
        }
        let mut transcript = transcript_of(&records);
        transcript["session_id"] = json!(session_id);
        transcript["running"] = json!(held.is_some_and(|s| s.status()["busy"] == json!(true)));
        Ok(transcript)
    }
}

/// `{ title, root, turns, decisions }` of a session file's records (header first), read as the
/// engine replays them: rewinds and compactions applied, unknown records passed over.
pub fn transcript_of(records: &[Value]) -> Value {
    let header = records.first().cloned().unwrap_or(Value::Null);
    let mut title = header["title"].as_str().unwrap_or_default().to_string();
    let mut messages: Vec<Message> = Vec::new();
    let mut decisions: Vec<Value> = Vec::new();
    for record in records.iter().skip(1) {
        match record["type"].as_str() {
            Some("message") => messages.push(Message {
                turn_id: record["turnId"].as_str().map(str::to_string),
                body: record["message"].clone(),
            }),
            Some("title") => title = record["title"].as_str().unwrap_or_default().to_string(),
            Some("rewind") => {
                if let Some(turn) = record["turnId"].as_str() {
                    rewind_messages(&mut messages, turn);
                }
            }
            Some("compact") => {
                messages = compacted_from_record(record);
            }
            Some("decision") => decisions.push(record.clone()),
            _ => {}
        }
    }
    let skip = decisions.len().saturating_sub(DECISIONS_KEPT);
    let decisions: serde_json::Map<String, Value> = decisions
        .into_iter()
        .skip(skip)
        .filter_map(|mut d| {
            let id = d["toolCallId"].as_str()?.to_string();
            if let Some(fields) = d.as_object_mut() {
                fields.remove("type");
                fields.remove("toolCallId");
            }
            Some((id, d))
        })
        .collect();
    json!({
        "title": title,
        "root": header["cwd"],
        "turns": history_turns(&messages),
        "decisions": decisions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_reads_messages_and_decisions_as_replay_does() {
        let records = vec![
            json!({ "type": "session", "cwd": "/p", "title": "" }),
            json!({ "type": "message", "turnId": "t1", "message": { "role": "user", "content": "hello" } }),
            json!({ "type": "message", "turnId": "t1", "message": { "role": "assistant", "content": "",
                "tool_calls": [{ "id": "c1", "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } }] } }),
            json!({ "type": "decision", "toolCallId": "c1", "decision": "ask", "answeredBy": "desktop", "answer": "allowed once", "outcome": "completed" }),
            json!({ "type": "message", "turnId": "t1", "message": { "role": "tool", "tool_call_id": "c1", "content": "a.txt" } }),
            json!({ "type": "title", "title": "Greeting" }),
            json!({ "type": "something_new" }),
            json!({ "type": "message", "turnId": "t2", "message": { "role": "user", "content": "undone" } }),
            json!({ "type": "rewind", "turnId": "t2" }),
        ];
        let t = transcript_of(&records);
        assert_eq!(t["title"], "Greeting");
        assert_eq!(t["root"], "/p");
        let turns = t["turns"].as_array().cloned().unwrap_or_default();
        assert_eq!(turns.len(), 2, "the rewound turn is gone: {turns:?}");
        assert_eq!(turns[0]["text"], "hello");
        assert_eq!(turns[1]["tools"][0]["output"], "a.txt");
        assert_eq!(t["decisions"]["c1"]["answeredBy"], "desktop");
        assert_eq!(t["decisions"]["c1"]["answer"], "allowed once");
        // Nothing but a header, or nothing at all, is an empty transcript.
        assert_eq!(transcript_of(&[]).get("turns"), Some(&json!([])));
    }
}
