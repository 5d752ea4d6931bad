//! One agent session: its settings (model, mode, effort, title, context), its conversation as the
//! model sees it, its turns, and its append-only file in the store. The conversation is rebuilt
//! from the file when a session is opened again.

use lembas_protocol::context::{LembasAsks, Personalization};
use lembas_protocol::event::AttachmentInfo;
use lembas_protocol::plan::Plan;
use lembas_protocol::prompt::PromptAnswer;
use lembas_protocol::session::{History, HistoryTool, HistoryTurn};
use lembas_protocol::status::{Held, SessionStatus};
use serde_json::json;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

use super::grants::Grants;
use super::job_board::Board;
use super::mcp_servers::SessionServers;
use super::memory::SessionMemory;
use crate::decisions::decisions;
use crate::poison::Recover;
use crate::policy::Mode;
use crate::rpc::RpcError;
use crate::store::message::{ChatMessage, StoredAttachment, UserMessage};
use crate::store::record::Compact;
use crate::store::turns::StoredAnswer;
use crate::store::{Record, SessionFile, SessionLog, TurnEntry};

/// What the model reads back from a tool call.
pub struct ToolResult {
    pub text: String,
    pub is_error: bool,
}

/// What the client knows that the device composes into its prompt (docs/protocol.md "Context").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Context {
    pub system_prompt: String,
    pub personalization: Option<Personalization>,
}

impl Context {
    /// Reads `_meta.lembas`'s Context fields over `self`: a field that is there replaces the older.
    pub fn update(&mut self, lembas: Option<&LembasAsks>) {
        let Some(lembas) = lembas else { return };
        if let Some(prompt) = &lembas.system_prompt {
            self.system_prompt = prompt.clone().unwrap_or_default();
        }
        if let Some(personalization) = &lembas.personalization {
            self.personalization = personalization.clone();
        }
    }
}

/// Where a turn is: waiting its turn, running, or done with its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnPhase {
    Queued,
    Running,
    Done(Box<Result<PromptAnswer, RpcError>>),
}

/// A message of the conversation with the turn that added it.
#[derive(Debug, Clone)]
pub struct Message {
    pub turn_id: Option<String>,
    pub body: ChatMessage,
}

pub struct SessionState {
    pub model: String,
    pub mode: Mode,
    pub effort: String,
    pub title: String,
    pub context: Context,
    /// The model's conversation: what each step sends (a compaction replaces what came before
    /// with its summary).
    pub messages: Vec<Message>,
    /// The turns as they happened, which the history shows: compaction leaves them; rewind and
    /// `/undo` take turns out of both.
    pub record: Vec<Message>,
    /// Records written since the last step's end; flushed together.
    pub unflushed: Vec<Record>,
    pub log: SessionLog,
    /// Turn ids in the order they were accepted, with their phase (the last 200).
    pub turns: VecDeque<(String, watch::Sender<TurnPhase>)>,
    pub running: Option<String>,
    pub last_turn_id: Option<String>,
    /// "Allow for this chat": what the person's answers let the session do without asking.
    pub grants: Grants,
    /// The scheduled run the current turn is, with the mode it holds for the whole turn.
    pub run: Option<(crate::scheduled::Run, Mode)>,
    /// `_lembas/steer` messages for the running turn, taken in at its next step: (messageId, text).
    pub steers: Vec<(Option<String>, String)>,
    /// A command runs that gives the model no step to take a steer in (`/compact`, `/undo`, `/plan`
    /// with no task): a steer waits for the next turn.
    pub acting: bool,
    /// The `available_commands_update` last sent for this session (capability `commands`).
    pub commands_sent: Option<lembas_protocol::update::SessionUpdate>,
    /// The structured plan (capability `plan_state`), as the last plan tool left it.
    pub plan: Option<Plan>,
    /// The model's context window, for the model it was read for.
    pub window: Option<(String, u64)>,
    /// The last step's prompt filled the window past the mark: the next step compacts first.
    pub compact_first: bool,
    /// Background jobs (capability `jobs`).
    pub jobs: Board,
    /// Notes of jobs that ended, not yet given to the model: `(job id, note)`.
    pub job_notes: Vec<(String, String)>,
    /// The instance's memory, read as the session starts and kept for it.
    pub memory: SessionMemory,
    /// The MCP servers the editor named for the session (none on the link).
    pub mcp: Option<Arc<SessionServers>>,
}

impl SessionState {
    /// Takes the turn and every later one out of the conversation and the record; how many turns
    /// left. None when the turn is not in the conversation (folded into a compaction's summary).
    pub fn rewind(&mut self, turn_id: &str) -> usize {
        let reverted = rewind_messages(&mut self.messages, turn_id);
        if reverted > 0 {
            rewind_messages(&mut self.record, turn_id);
        }
        reverted
    }

    /// A turn runs or waits.
    pub fn busy(&self) -> bool {
        self.running.is_some() || self.queued().next().is_some()
    }

    /// The turns accepted and waiting for the gate, in order.
    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.turns
            .iter()
            .filter(|(_, tx)| *tx.borrow() == TurnPhase::Queued)
            .map(|(id, _)| id.as_str())
    }

    /// A session with no conversation yet, writing to `log`.
    pub fn new(model: String, mode: Mode, effort: String, log: SessionLog) -> Self {
        Self {
            model,
            mode,
            effort,
            title: String::new(),
            context: Context::default(),
            messages: Vec::new(),
            record: Vec::new(),
            unflushed: Vec::new(),
            log,
            turns: VecDeque::new(),
            running: None,
            last_turn_id: None,
            grants: Grants::default(),
            run: None,
            steers: Vec::new(),
            commands_sent: None,
            plan: None,
            window: None,
            compact_first: false,
            jobs: Board::default(),
            job_notes: Vec::new(),
            memory: SessionMemory::NotRead,
            mcp: None,
            acting: false,
        }
    }
}

pub struct Session {
    pub id: String,
    /// The session's folder, resolved when it was made (judged again at every prompt).
    pub cwd: PathBuf,
    state: Mutex<SessionState>,
    /// One turn at a time, in the order the prompts came (tokio's mutex is fair).
    pub gate: tokio::sync::Mutex<()>,
    /// Bumped by session/cancel and delete: the running turn stops at once.
    pub cancel: watch::Sender<u64>,
    /// This process's hold on the session file (`None` in tests that keep no files).
    _hold: Option<crate::store::SessionHold>,
}

impl Session {
    /// The session's MCP servers taken out of it, to stop (`None` when it runs none, or a call
    /// still holds them: they end with that call).
    pub fn take_mcp_servers(&self) -> Option<SessionServers> {
        let taken = self.state().mcp.take();
        taken.and_then(Arc::into_inner)
    }

    /// The session's MCP servers stopped (it closed or was deleted), in the background.
    pub fn stop_mcp_servers(&self) {
        if let Some(servers) = self.take_mcp_servers() {
            tokio::spawn(servers.stop());
        }
    }

    pub fn new(
        id: String,
        cwd: PathBuf,
        state: SessionState,
        hold: Option<crate::store::SessionHold>,
    ) -> Arc<Session> {
        Arc::new(Session {
            id,
            cwd,
            state: Mutex::new(state),
            gate: tokio::sync::Mutex::new(()),
            cancel: watch::channel(0).0,
            _hold: hold,
        })
    }

    pub fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().recover()
    }

    pub fn cancel(&self) {
        self.cancel.send_modify(|n| *n += 1);
    }

    /// Adds a record to the next flush.
    pub fn record(&self, record: Record) {
        self.state().unflushed.push(record);
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
        let mut state = self.state();
        if state.unflushed.is_empty() {
            return;
        }
        let records = std::mem::take(&mut state.unflushed);
        let written = if sync {
            state.log.append(&records)
        } else {
            state.log.append_unsynced(&records)
        };
        if let Err(e) = written {
            tracing::error!(session = %self.id, "the session could not be written to the store: {e}");
        }
    }

    /// Adds a message to the conversation and to the next flush.
    pub fn push_message(&self, turn_id: Option<&str>, body: ChatMessage) {
        let mut state = self.state();
        let message = Message {
            turn_id: turn_id.map(str::to_string),
            body,
        };
        state.unflushed.push(Record::Message {
            turn_id: message.turn_id.clone(),
            message: message.body.clone(),
        });
        state.record.push(message.clone());
        state.messages.push(message);
    }

    /// The phase of a turn id this session knows.
    pub fn turn(&self, turn_id: &str) -> Option<watch::Receiver<TurnPhase>> {
        self.state()
            .turns
            .iter()
            .find(|(id, _)| id == turn_id)
            .map(|(_, tx)| tx.subscribe())
    }

    /// Accepts a new turn id as queued; the oldest beyond the kept number are forgotten.
    pub fn accept_turn(&self, turn_id: &str) -> watch::Receiver<TurnPhase> {
        let (tx, rx) = watch::channel(TurnPhase::Queued);
        let mut state = self.state();
        state.turns.push_back((turn_id.to_string(), tx));
        while state.turns.len() > decisions().turns.kept_per_session {
            state.turns.pop_front();
        }
        rx
    }

    pub fn set_phase(&self, turn_id: &str, phase: TurnPhase) {
        let mut state = self.state();
        match &phase {
            TurnPhase::Running => state.running = Some(turn_id.to_string()),
            TurnPhase::Done(_) => {
                state.running = None;
                state.last_turn_id = Some(turn_id.to_string());
            }
            TurnPhase::Queued => {}
        }
        if let Some((_, tx)) = state.turns.iter().find(|(id, _)| id == turn_id) {
            tx.send_replace(phase);
        }
    }

    /// The text of the last assistant message the turn wrote, as written ("" when none).
    pub fn last_reply(&self, turn_id: &str) -> String {
        self.state()
            .messages
            .iter()
            .rev()
            .take_while(|m| m.turn_id.as_deref() == Some(turn_id))
            .find_map(|m| match &m.body {
                ChatMessage::Assistant(said) if !said.content.is_empty() => Some(said.content.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// `_lembas/session/status`'s fields for a session in memory.
    pub fn status(&self) -> SessionStatus {
        let state = self.state();
        let queued: Vec<String> = state.queued().map(str::to_string).collect();
        SessionStatus {
            session_id: self.id.clone(),
            exists: true,
            held: Held::Here,
            busy: state.busy(),
            title: state.title.clone(),
            turn_id: state.running.clone(),
            queued,
            last_turn_id: state.last_turn_id.clone(),
            plan: state.plan.clone(),
            jobs: state.jobs.list(),
        }
    }

    /// `_lembas/session/history`.
    pub fn history(&self) -> History {
        let state = self.state();
        History {
            session_id: self.id.clone(),
            title: state.title.clone(),
            root: self.cwd.display().to_string(),
            turns: history_turns(&state.record),
        }
    }
}

/// Takes the turn `turn_id` and everything after it out of the conversation; how many turns left.
pub fn rewind_messages(messages: &mut Vec<Message>, turn_id: &str) -> usize {
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

/// The conversation a `compact` record of the session file leaves.
pub fn compacted_from_record(record: Compact) -> Vec<Message> {
    let kept = record.kept.map(|kept| Message {
        turn_id: kept.turn_id,
        body: kept.message,
    });
    compacted(&record.summary, record.plan.as_ref(), kept)
}

/// The conversation as history turns: each user message, then what the assistant said and did
/// until the next one, as one assistant turn.
pub fn history_turns(messages: &[Message]) -> Vec<HistoryTurn> {
    let mut turns = Vec::new();
    let mut assistant: Option<Said> = None;
    let mut by_call: HashMap<String, usize> = HashMap::new();
    for message in messages {
        match &message.body {
            ChatMessage::User(user) => {
                turns.extend(assistant.take().map(Said::turn));
                by_call.clear();
                turns.push(HistoryTurn::User {
                    text: user.as_typed().to_string(),
                    turn_id: message.turn_id.clone(),
                    attachments: listed_attachments(user),
                });
            }
            ChatMessage::Assistant(step) => {
                let said = assistant.get_or_insert_with(Said::default);
                append_text(&mut said.text, &step.content);
                append_text(&mut said.reasoning, &step.reasoning_content);
                for call in &step.tool_calls {
                    by_call.insert(call.id.clone(), said.tools.len());
                    // The arguments as the model wrote them: parsed where they parse.
                    let arguments = &call.function.arguments;
                    said.tools.push(HistoryTool {
                        id: call.id.clone(),
                        name: call.function.name.clone(),
                        args: serde_json::from_str(arguments).unwrap_or_else(|_| json!(arguments)),
                        output: None,
                        is_error: false,
                    });
                }
            }
            ChatMessage::Tool(result) => {
                if let (Some(said), Some(i)) = (assistant.as_mut(), by_call.get(&result.tool_call_id))
                    && let Some(tool) = said.tools.get_mut(*i)
                {
                    tool.output = Some(result.content.clone());
                    tool.is_error = result.is_error;
                }
            }
        }
    }
    turns.extend(assistant.map(Said::turn));
    turns
}

/// An assistant turn as it is gathered.
#[derive(Default)]
struct Said {
    text: String,
    reasoning: String,
    tools: Vec<HistoryTool>,
}

impl Said {
    fn turn(self) -> HistoryTurn {
        HistoryTurn::Assistant {
            text: self.text,
            reasoning: self.reasoning,
            tools: self.tools,
        }
    }
}

fn append_text(into: &mut String, text: &str) {
    if !text.is_empty() {
        if !into.is_empty() {
            into.push_str("\n\n");
        }
        into.push_str(text);
    }
}

/// A session file whose first line is not its header cannot be replayed.
#[derive(Debug, thiserror::Error)]
#[error("the session file has no header")]
pub struct NoHeader;

/// The header and records of a stored session read back into a state (the file's `log` given).
pub struct Replayed {
    pub cwd: PathBuf,
    pub state: SessionState,
}

/// Rebuilds a session from its file: the header, then messages, titles, modes, models. The file is
/// taken by value so messages move into the conversation (a long session is mostly messages:
/// copying them doubled the time to open one).
pub fn replay(file: SessionFile, log: SessionLog, turns: &[TurnEntry]) -> Result<Replayed, NoHeader> {
    let Some(header) = file.header else {
        return Err(NoHeader);
    };
    let mut state = SessionState::new(
        header.model,
        header.mode.parse().unwrap_or_default(),
        header.effort.unwrap_or_else(|| "default".to_string()),
        log,
    );
    state.title = header.title;
    let cwd = PathBuf::from(header.cwd);
    let mut jobs = Vec::new();
    for record in file.records {
        match record {
            Record::Message { turn_id, message } => {
                let message = Message {
                    turn_id,
                    body: message,
                };
                state.record.push(message.clone());
                state.messages.push(message);
            }
            Record::Title { title } => state.title = title,
            Record::Mode { mode } => state.mode = mode,
            Record::Rewind { turn_id } => {
                state.rewind(&turn_id);
            }
            Record::Compact(compact) => state.messages = compacted_from_record(compact),
            Record::Plan { plan } => state.plan = plan,
            Record::Job { job } => jobs.push(job),
            Record::Model { model, effort } => {
                state.model = model;
                state.effort = effort.unwrap_or_else(|| "default".to_string());
            }
            Record::Given | Record::Decision(_) | Record::PutBack(_) | Record::Unknown => {}
        }
    }
    state.jobs = Board::replayed(jobs);
    // Turns that finished keep their answers; one that was running when the process ended is not
    // done: a prompt sent again with its id runs it again.
    for entry in turns.iter().filter(|t| t.state == "done") {
        let answered = StoredAnswer::read(entry.answer.as_ref(), &entry.turn_id);
        let phase = TurnPhase::Done(Box::new(answered));
        state
            .turns
            .push_back((entry.turn_id.clone(), watch::channel(phase).0));
        state.last_turn_id = Some(entry.turn_id.clone());
    }
    Ok(Replayed { cwd, state })
}

/// The history's list for a stored user message (`{ name, mimeType, size }` each).
pub(super) fn listed_attachments(user: &UserMessage) -> Vec<AttachmentInfo> {
    user.attachments.iter().map(StoredAttachment::listed).collect()
}
