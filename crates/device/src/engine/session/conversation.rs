//! The session's conversation: what each step sends the model (a compaction replaces what came
//! before with its summary), the record of the turns as they happened (what the history shows:
//! compaction leaves it; rewind and `/undo` take turns out of both), and the records written since
//! the last flush, with the session's file they go to. Changed only through these methods.

use lembas_protocol::plan::Plan;

use super::settings::Settings;
use super::{Context, Session};
use crate::engine::step_request::{ApiMessage, Images};
use crate::store::message::{AttachmentKind, ChatMessage, UserMessage};
use crate::store::record::{Compact, KeptMessage};
use crate::store::{Record, SessionLog};

/// A message of the conversation with the turn that added it.
#[derive(Debug, Clone)]
pub struct Message {
    pub turn_id: Option<String>,
    pub body: ChatMessage,
}

pub struct Conversation {
    messages: Vec<Message>,
    record: Vec<Message>,
    /// Records written since the last step's end; flushed together.
    unflushed: Vec<Record>,
    log: SessionLog,
    /// The model's context window, for the model it was read for.
    window: Option<(String, u64)>,
    /// The last step's prompt filled the window past the mark: the next step compacts first.
    compact_first: bool,
}

impl Conversation {
    /// An empty conversation, written to `log`.
    pub fn new(log: SessionLog) -> Conversation {
        Conversation {
            messages: Vec::new(),
            record: Vec::new(),
            unflushed: Vec::new(),
            log,
            window: None,
            compact_first: false,
        }
    }

    /// What the next step sends the model.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// A message the person wrote has an image attached.
    pub fn has_images(&self) -> bool {
        self.messages.iter().any(|m| match &m.body {
            ChatMessage::User(user) => user.attachments.iter().any(|a| a.kind == AttachmentKind::Image),
            _ => false,
        })
    }

    /// The turns as they happened.
    pub fn record(&self) -> &[Message] {
        &self.record
    }

    /// A message of the turn, added to the conversation, the record and the next flush.
    pub fn push(&mut self, message: Message) {
        self.unflushed.push(Record::Message {
            turn_id: message.turn_id.clone(),
            message: message.body.clone(),
        });
        self.replayed(message);
    }

    /// A message read back from the session's file: already written.
    pub fn replayed(&mut self, message: Message) {
        self.record.push(message.clone());
        self.messages.push(message);
    }

    /// A record for the next flush.
    pub fn note(&mut self, record: Record) {
        self.unflushed.push(record);
    }

    /// What was recorded and not flushed yet (the window's timeline reads it with the file).
    pub fn unflushed(&self) -> &[Record] {
        &self.unflushed
    }

    /// Writes what was recorded since the last flush; `sync`: made durable before it returns.
    pub fn flush(&mut self, sync: bool) -> std::io::Result<()> {
        if self.unflushed.is_empty() {
            return Ok(());
        }
        let records = std::mem::take(&mut self.unflushed);
        if sync {
            self.log.append(&records)
        } else {
            self.log.append_unsynced(&records)
        }
    }

    /// Takes the turn and every later one out of the conversation and the record; how many turns
    /// left. None when the turn is not in the conversation (folded into a compaction's summary).
    pub fn rewind(&mut self, turn_id: &str) -> usize {
        let reverted = rewind_messages(&mut self.messages, turn_id);
        if reverted > 0 {
            rewind_messages(&mut self.record, turn_id);
        }
        reverted
    }

    /// The conversation compacted: the summary (and the plan) in place of what came before, then
    /// the message kept; the record stays whole.
    pub fn compact(&mut self, summary: &str, plan: Option<&Plan>, kept: Option<Message>) {
        self.messages = compacted(summary, plan, kept);
        self.compact_first = false;
    }

    /// A `compact` record of the session's file, read back.
    pub fn compacted_before(&mut self, record: Compact) {
        let kept = record.kept.map(|kept| Message {
            turn_id: kept.turn_id,
            body: kept.message,
        });
        self.messages = compacted(&record.summary, record.plan.as_ref(), kept);
    }

    /// The context window known for `model`.
    pub fn window_of(&self, model: &str) -> Option<u64> {
        self.window
            .as_ref()
            .filter(|(known, _)| known == model)
            .map(|(_, size)| *size)
    }

    pub fn set_window(&mut self, model: String, size: u64) {
        self.window = Some((model, size));
    }

    /// Whether the next step compacts first.
    pub fn compact_first(&self) -> bool {
        self.compact_first
    }

    pub fn set_compact_first(&mut self, compact_first: bool) {
        self.compact_first = compact_first;
    }
}

/// What the model is sent from the session, read under one lock: its settings, what the client
/// said it knows, and the conversation as the model's messages.
pub struct ModelView {
    pub settings: Settings,
    pub context: Context,
    pub messages: Vec<ApiMessage>,
}

/// The last turn of the conversation: its id and its messages.
pub struct LastTurn {
    pub turn_id: String,
    pub messages: Vec<Message>,
}

/// The session's conversation and its file, each method one whole operation under the session's
/// lock.
impl Session {
    /// Adds a record to the next flush.
    pub fn record(&self, record: Record) {
        self.state().conversation.note(record);
    }

    /// Writes what this step recorded and makes it durable (a crash loses at most the step in
    /// flight).
    pub fn flush(&self) {
        self.write_out(true);
    }

    /// Writes what was recorded without waiting for the disk: the next [`Session::flush`] makes it
    /// durable. A turn's start uses it, so the person's message costs no disk wait.
    pub fn flush_unsynced(&self) {
        self.write_out(false);
    }

    fn write_out(&self, sync: bool) {
        let written = self.state().conversation.flush(sync);
        if let Err(e) = written {
            tracing::error!(session = %self.id, "the session could not be written to the store: {e}");
        }
    }

    /// Adds a message to the conversation and to the next flush.
    pub fn push_message(&self, turn_id: Option<&str>, body: ChatMessage) {
        self.state().conversation.push(Message {
            turn_id: turn_id.map(str::to_string),
            body,
        });
    }

    /// The text of the last assistant message the turn wrote, as written ("" when none).
    pub fn last_reply(&self, turn_id: &str) -> String {
        self.state()
            .conversation
            .messages()
            .iter()
            .rev()
            .take_while(|m| m.turn_id.as_deref() == Some(turn_id))
            .find_map(|m| match &m.body {
                ChatMessage::Assistant(said) if !said.content.is_empty() => Some(said.content.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// Nothing said yet and no title: the first prompt names the session.
    pub fn is_new(&self) -> bool {
        let state = self.state();
        state.conversation.messages().is_empty() && state.title.is_empty()
    }

    /// The conversation the model is sent is empty.
    pub fn conversation_is_empty(&self) -> bool {
        self.state().conversation.messages().is_empty()
    }

    /// Whether the conversation holds an image the model would be sent (so the model's list is
    /// read only for a turn that needs it).
    pub fn has_images(&self) -> bool {
        self.state().conversation.has_images()
    }

    /// Takes the turn and every later one out of the conversation; how many turns left (0: the
    /// turn is not in it).
    pub fn rewind(&self, turn_id: &str) -> usize {
        self.state().conversation.rewind(turn_id)
    }

    /// The records not flushed yet.
    pub fn unflushed(&self) -> Vec<Record> {
        self.state().conversation.unflushed().to_vec()
    }

    /// The session's model, and the context window kept for it when it was read.
    pub fn window_kept(&self) -> (String, Option<u64>) {
        let state = self.state();
        let window = state.conversation.window_of(&state.model);
        (state.model.clone(), window)
    }

    /// Keeps `model`'s context window.
    pub fn set_window(&self, model: String, size: u64) {
        self.state().conversation.set_window(model, size);
    }

    /// Whether the next step compacts first.
    pub fn compact_first(&self) -> bool {
        self.state().conversation.compact_first()
    }

    pub fn set_compact_first(&self, compact_first: bool) {
        self.state().conversation.set_compact_first(compact_first);
    }

    /// The conversation replaced by `summary` with the plan after it and, with `keep_request`,
    /// the person's last request; the record of it for the session's file.
    pub fn compact(&self, summary: &str, keep_request: bool) -> Compact {
        let mut state = self.state();
        let kept = keep_request
            .then(|| last_request(state.conversation.messages()))
            .flatten();
        let plan = state.plan.clone();
        let record = Compact {
            summary: summary.to_string(),
            plan: plan.clone(),
            kept: kept.as_ref().map(|m| KeptMessage {
                turn_id: m.turn_id.clone(),
                message: m.body.clone(),
            }),
        };
        state.conversation.compact(summary, plan.as_ref(), kept);
        record
    }

    /// What the model is sent now, images read through `images` for a model that takes them.
    pub fn model_view(&self, images: Option<&Images>) -> ModelView {
        let state = self.state();
        ModelView {
            settings: Settings::of(&state),
            context: state.context.clone(),
            messages: state
                .conversation
                .messages()
                .iter()
                .map(|m| ApiMessage::of(&m.body, images))
                .collect(),
        }
    }

    /// The last turn in the conversation, with every message it added (`None`: no turn is left).
    pub fn last_turn(&self) -> Option<LastTurn> {
        let state = self.state();
        let messages = state.conversation.messages();
        let turn_id = messages.iter().rev().find_map(|m| m.turn_id.clone())?;
        let messages = messages
            .iter()
            .filter(|m| m.turn_id.as_deref() == Some(turn_id.as_str()))
            .cloned()
            .collect();
        Some(LastTurn { turn_id, messages })
    }
}

/// The person's last request: the last message they wrote (not a tool's result, a job's note, or
/// an earlier summary).
fn last_request(messages: &[Message]) -> Option<Message> {
    messages
        .iter()
        .rev()
        .find(|m| m.body.typed_by_the_person().is_some())
        .cloned()
}

/// Takes the turn `turn_id` and everything after it out of the conversation; how many turns left.
fn rewind_messages(messages: &mut Vec<Message>, turn_id: &str) -> usize {
    let Some(first) = messages
        .iter()
        .position(|m| m.turn_id.as_deref() == Some(turn_id))
    else {
        return 0;
    };
    let mut turns: Vec<&str> = messages[first..]
        .iter()
        .filter_map(|m| m.turn_id.as_deref())
        .collect();
    turns.dedup();
    let reverted = turns.len();
    messages.truncate(first);
    reverted
}

/// What a compacted conversation becomes: the summary (with the plan, verbatim, when there is one)
/// as one message, then the person's last request as it was.
pub fn compacted(summary: &str, plan: Option<&Plan>, kept: Option<Message>) -> Vec<Message> {
    let mut text = format!("A summary of our conversation so far:\n\n{summary}");
    if let Some(plan) = plan.and_then(|p| serde_json::to_string_pretty(p).ok()) {
        text.push_str(&format!("\n\nThe plan, as kept:\n\n```json\n{plan}\n```"));
    }
    let first = Message {
        turn_id: None,
        body: ChatMessage::User(UserMessage {
            compacted: true,
            ..UserMessage::says(text)
        }),
    };
    std::iter::once(first).chain(kept).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(body: serde_json::Value) -> Message {
        Message {
            turn_id: Some("t".into()),
            body: ChatMessage::read(body).expect("a message"),
        }
    }

    #[test]
    fn the_last_request_is_the_persons() {
        let messages = [
            message(json!({ "role": "user", "content": "fix it" })),
            message(json!({ "role": "assistant", "content": "", "tool_calls": [] })),
            message(json!({ "role": "tool", "tool_call_id": "c", "content": "ok" })),
            message(json!({ "role": "user", "content": "[job job_1 ended] x", "machine": true })),
        ];
        assert_eq!(last_request(&messages).unwrap().body, ChatMessage::user("fix it"));
        let compacted = compacted("s", None, None);
        assert!(last_request(&compacted).is_none());
    }
}
