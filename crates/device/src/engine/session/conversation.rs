//! The session's conversation: what each step sends the model (a compaction replaces what came
//! before with its summary), the record of the turns as they happened (what the history shows:
//! compaction leaves it; rewind and `/undo` take turns out of both), and the records written since
//! the last flush, with the session's file they go to. Changed only through these methods.

use lembas_protocol::plan::Plan;

use crate::store::message::{ChatMessage, UserMessage};
use crate::store::record::Compact;
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
