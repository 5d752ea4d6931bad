//! One agent session: its settings (model, mode, effort, title, context), its conversation as the
//! model sees it, its turns, and its append-only file in the store. The conversation is rebuilt
//! from the file when a session is opened again.
//!
//! The session's state sits behind one lock, taken only here: callers use [`Session`]'s methods,
//! grouped by part (`conversation.rs`, `turns.rs`, `settings.rs`, `terms.rs`, `plan.rs`,
//! `jobs.rs`, `tools.rs`), each one whole operation that hands no guard out, so none can be held
//! across an await.

mod conversation;
mod jobs;
mod plan;
mod settings;
mod terms;
mod tools;
mod turns;

#[cfg(test)]
mod tests;

pub use conversation::{Conversation, LastTurn, Message};
pub use settings::{ModelChange, Settings};
pub use terms::CallTerms;
pub use tools::SessionTools;
pub use turns::{TurnPhase, TurnQueue};

use lembas_protocol::context::{LembasAsks, Personalization};
use lembas_protocol::event::AttachmentInfo;
use lembas_protocol::plan::Plan;
use lembas_protocol::session::{History, HistoryTool, HistoryTurn};
use lembas_protocol::status::{Held, SessionStatus};
use lembas_protocol::{Effort, SessionId, TurnId};
use serde_json::json;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

use super::grants::Grants;
use super::job_board::Board;
use super::mcp_servers::SessionServers;
use super::memory::SessionMemory;
use crate::decisions::Decisions;
use crate::poison::Recover;
use crate::policy::Mode;
use crate::store::message::{ChatMessage, StoredAttachment, UserMessage};
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

/// Everything a session keeps in memory, behind its one lock ([`Session`]'s methods, grouped by
/// part in this module's files, are the only way in: none hands the lock out).
pub struct SessionState {
    model: String,
    mode: Mode,
    effort: Effort,
    title: String,
    context: Context,
    /// What the model reads, the record of the turns, and the session's file.
    conversation: Conversation,
    /// The turns as they come, and the steers for the running one.
    turns: TurnQueue,
    /// "Allow for this chat": what the person's answers let the session do without asking.
    grants: Grants,
    /// The scheduled run the current turn is, with the mode it holds for the whole turn.
    run: Option<(crate::scheduled::Run, Mode)>,
    /// The `available_commands_update` last sent for this session (capability `commands`).
    commands_sent: Option<lembas_protocol::update::SessionUpdate>,
    /// The structured plan (capability `plan_state`), as the last plan tool left it.
    plan: Option<Plan>,
    /// Background jobs (capability `jobs`).
    jobs: Board,
    /// The instance's memory, read as the session starts and kept for it.
    memory: SessionMemory,
    /// The MCP servers the editor named for the session (none on the link).
    mcp: Option<Arc<SessionServers>>,
    /// An editor's `additionalDirectories`, resolved and judged: worked in as the session's folder
    /// is. Given again by each `session/new`, `load` or `resume`, so never stored.
    additional: Vec<PathBuf>,
}

impl SessionState {
    /// A turn runs or waits.
    fn busy(&self) -> bool {
        self.turns.busy()
    }

    /// A session with no conversation yet, writing to `log`.
    pub fn new(model: String, mode: Mode, effort: Effort, log: SessionLog, decisions: &Decisions) -> Self {
        Self {
            model,
            mode,
            effort,
            title: String::new(),
            context: Context::default(),
            conversation: Conversation::new(log),
            turns: TurnQueue::keeping(decisions.turns.kept_per_session),
            grants: Grants::default(),
            run: None,
            commands_sent: None,
            plan: None,
            jobs: Board::keeping(decisions.jobs.finished_kept),
            memory: SessionMemory::NotRead,
            mcp: None,
            additional: Vec::new(),
        }
    }

    /// With what the client said it knows for the prompt.
    pub fn with_context(self, context: Context) -> Self {
        Self { context, ..self }
    }

    /// With the instance's memory as read for the session.
    pub fn with_memory(self, memory: SessionMemory) -> Self {
        Self { memory, ..self }
    }

    /// With the MCP servers started for the session.
    pub fn with_mcp_servers(self, servers: Arc<SessionServers>) -> Self {
        Self {
            mcp: Some(servers),
            ..self
        }
    }
}

pub struct Session {
    pub id: SessionId,
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
    pub fn new(
        id: SessionId,
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

    /// The folders worked in beside the session's own (an editor's `additionalDirectories`).
    pub fn additional_dirs(&self) -> Vec<PathBuf> {
        self.state().additional.clone()
    }

    /// The additional folders from now on, judged already; the ones before are let go of.
    pub fn set_additional_dirs(&self, dirs: Vec<PathBuf>) {
        self.state().additional = dirs;
    }

    /// The one place the lock is taken: every method of the session's parts holds it for one
    /// whole operation and gives nothing of it out.
    fn state(&self) -> MutexGuard<'_, SessionState> {
        self.state.lock().recover()
    }

    pub fn cancel(&self) {
        self.cancel.send_modify(|n| *n += 1);
    }

    /// `_lembas/session/status`'s fields for a session in memory.
    pub fn status(&self) -> SessionStatus {
        let state = self.state();
        let queued: Vec<String> = state.turns.queued().map(str::to_string).collect();
        SessionStatus {
            session_id: self.id.clone(),
            exists: true,
            held: Held::Here,
            busy: state.busy(),
            title: state.title.clone(),
            turn_id: state.turns.running().map(TurnId::from),
            queued,
            last_turn_id: state.turns.last_done().map(TurnId::from),
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
            turns: history_turns(state.conversation.record()),
        }
    }
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
                    turn_id: message.turn_id.as_deref().map(TurnId::from),
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
pub fn replay(
    file: SessionFile,
    log: SessionLog,
    turns: &[TurnEntry],
    decisions: &Decisions,
) -> Result<Replayed, NoHeader> {
    let Some(header) = file.header else {
        return Err(NoHeader);
    };
    let mut state = SessionState::new(
        header.model,
        header.mode.parse().unwrap_or_default(),
        header.effort.unwrap_or_default(),
        log,
        decisions,
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
                state.conversation.replayed(message);
            }
            Record::Title { title } => state.title = title,
            Record::Mode { mode } => state.mode = mode,
            Record::Rewind { turn_id } => {
                state.conversation.rewind(&turn_id);
            }
            Record::Compact(compact) => state.conversation.compacted_before(compact),
            Record::Plan { plan } => state.plan = plan,
            Record::Job { job } => jobs.push(job),
            Record::Model { model, effort } => {
                state.model = model;
                state.effort = effort.unwrap_or_default();
            }
            Record::ForLinkClient | Record::Decision(_) | Record::PutBack(_) | Record::Unknown => {}
        }
    }
    state.jobs = Board::replayed(jobs, decisions.jobs.finished_kept);
    // Turns that finished keep their answers; one that was running when the process ended is not
    // done: a prompt sent again with its id runs it again.
    for entry in turns.iter().filter(|t| t.state == "done") {
        let answered = StoredAnswer::read(entry.answer.as_ref(), &entry.turn_id);
        state.turns.done_before(&entry.turn_id, answered);
    }
    Ok(Replayed { cwd, state })
}

/// The history's list for a stored user message (`{ name, mimeType, size }` each).
pub(super) fn listed_attachments(user: &UserMessage) -> Vec<AttachmentInfo> {
    user.attachments.iter().map(StoredAttachment::listed).collect()
}
