//! The chat as the screen shows it: the conversation's entries (the person's words, the agent's,
//! its thinking, each tool call with its command or change and its result, the front end's own
//! notes), the plan, and whether a turn runs. Fed the session's updates as they stream; nothing
//! here draws or talks to the runtime.

use std::collections::HashMap;

use lembas_device::engine::timeline::{Did, StepStatus, Timeline};
use lembas_protocol::content::ContentBlock;
use lembas_protocol::event::JobChange;
use lembas_protocol::jobs::{JobInfo, JobState};
use lembas_protocol::update::{PlanEntry, SessionUpdate, ToolCallContent, ToolCallStatus, ToolKind};
use serde::Deserialize;
use serde_json::Value;

/// A tool call's output kept for the screen: its end (the newest lines are the ones to see).
const OUTPUT_KEPT: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    You(String),
    Agent(String),
    Thinking(String),
    Tool(ToolEntry),
    /// The front end's own words: what a command did, why something failed.
    Note(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolEntry {
    pub id: String,
    pub title: String,
    pub kind: ToolKind,
    pub status: ToolCallStatus,
    /// The command (`$ …`) or the change (a unified diff), one line each.
    pub detail: Vec<String>,
    pub output: String,
}

/// What the screen shows of one session.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Conversation {
    pub entries: Vec<Entry>,
    /// Turns older than those loaded, left out.
    pub earlier_turns: usize,
    pub plan: Vec<PlanEntry>,
    /// The session's background jobs, running first, then the latest (the runtime's `chat/job`).
    pub jobs: Vec<JobInfo>,
    /// A turn runs or waits.
    pub busy: bool,
    pub title: String,
    pub mode: String,
    /// Tokens of the context used, of its size.
    pub usage: Option<(u64, u64)>,
    tools: HashMap<String, usize>,
}

/// The runtime's own update for a turn starting or ending (not an ACP update).
#[derive(Deserialize)]
struct TurnMark {
    running: bool,
}

impl Conversation {
    /// One `session/update` as pushed (an ACP update, or one of the runtime's own).
    pub fn apply_pushed(&mut self, update: &Value) {
        match update.get("sessionUpdate").and_then(Value::as_str) {
            Some("_lembas_turn") => {
                if let Ok(mark) = TurnMark::deserialize(update) {
                    self.busy = mark.running;
                }
            }
            Some("_lembas_decision") => {}
            _ => {
                // An update kind newer than this front end is skipped, not an error.
                if let Ok(update) = SessionUpdate::deserialize(update) {
                    self.apply(update);
                }
            }
        }
    }

    pub fn apply(&mut self, update: SessionUpdate) {
        match update {
            SessionUpdate::UserMessageChunk { content } => self.append(Entry::You, &text_of(&content)),
            SessionUpdate::AgentMessageChunk { content } => self.append(Entry::Agent, &text_of(&content)),
            SessionUpdate::AgentThoughtChunk { content } => self.append(Entry::Thinking, &text_of(&content)),
            SessionUpdate::ToolCall(call) => {
                let mut detail = detail_of(&call.raw_input);
                for content in &call.content {
                    detail.extend(diff_of(content));
                }
                let entry = ToolEntry {
                    id: call.tool_call_id.clone(),
                    title: call.title,
                    kind: call.kind,
                    status: call.status,
                    detail,
                    output: String::new(),
                };
                match self.tools.get(&call.tool_call_id) {
                    Some(&at) => self.entries[at] = Entry::Tool(entry),
                    None => {
                        self.tools.insert(call.tool_call_id, self.entries.len());
                        self.entries.push(Entry::Tool(entry));
                    }
                }
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let Some(Entry::Tool(tool)) = self
                    .tools
                    .get(&update.tool_call_id)
                    .and_then(|&at| self.entries.get_mut(at))
                else {
                    return;
                };
                tool.status = update.status;
                if let Some(output) = update.meta.as_ref().and_then(|m| m.terminal_output.as_ref()) {
                    push_kept(&mut tool.output, &output.data);
                }
                for content in update.content.iter().flatten() {
                    match content {
                        ToolCallContent::Content { content } => {
                            tool.output.clear();
                            push_kept(&mut tool.output, &text_of(content));
                        }
                        diff @ ToolCallContent::Diff { .. } if tool.detail.is_empty() => {
                            tool.detail = diff_of(diff);
                        }
                        _ => {}
                    }
                }
            }
            SessionUpdate::Plan { entries, .. } => self.plan = entries,
            SessionUpdate::CurrentModeUpdate { current_mode_id } => self.mode = current_mode_id.to_string(),
            SessionUpdate::SessionInfoUpdate { title } => self.title = title,
            SessionUpdate::UsageUpdate { used, size } => self.usage = Some((used, size)),
            SessionUpdate::AvailableCommandsUpdate { .. } | SessionUpdate::ConfigOptionUpdate { .. } => {}
        }
    }

    /// A note of the front end's own, at the end.
    pub fn note(&mut self, text: impl Into<String>) {
        self.entries.push(Entry::Note(text.into()));
    }

    /// A background job started, changed or ended; its end is also a note where the chat is.
    pub fn job_changed(&mut self, change: JobChange, job: JobInfo) {
        if change == JobChange::End {
            let exit = job.exit.map(|code| format!(", exit {code}")).unwrap_or_default();
            self.note(format!(
                "Job {} ({}{exit}): {}",
                job.state.name(),
                job.id,
                job.description
            ));
        }
        match self.jobs.iter_mut().find(|known| known.id == job.id) {
            Some(known) => *known = job,
            None => self.jobs.push(job),
        }
        self.jobs
            .sort_by_key(|j| (j.state != JobState::Running, std::cmp::Reverse(j.started)));
    }

    /// Streamed text joins the entry of its kind it continues; another kind starts a new one.
    fn append(&mut self, kind: fn(String) -> Entry, text: &str) {
        let continues = matches!(
            (self.entries.last(), kind(String::new())),
            (Some(Entry::You(_)), Entry::You(_))
                | (Some(Entry::Agent(_)), Entry::Agent(_))
                | (Some(Entry::Thinking(_)), Entry::Thinking(_))
        );
        match self.entries.last_mut() {
            Some(Entry::You(said) | Entry::Agent(said) | Entry::Thinking(said)) if continues => {
                said.push_str(text)
            }
            _ => self.entries.push(kind(text.to_string())),
        }
    }

    /// Starts the conversation anew with what was said before (a stored chat opened).
    pub fn load(&mut self, entries: Vec<Entry>, earlier_turns: usize) {
        self.tools = entries
            .iter()
            .enumerate()
            .filter_map(|(at, e)| match e {
                Entry::Tool(tool) => Some((tool.id.clone(), at)),
                _ => None,
            })
            .collect();
        self.entries = entries;
        self.earlier_turns = earlier_turns;
    }
}

/// A stored chat's turns as entries: each prompt, its steps, the agent's reply.
pub fn entries_of(timeline: &Timeline) -> Vec<Entry> {
    let mut entries = Vec::new();
    for turn in &timeline.turns {
        entries.push(Entry::You(turn.prompt.clone()));
        for step in &turn.steps {
            let (kind, detail) = match &step.did {
                Did::Command { command } => (
                    ToolKind::Execute,
                    command.lines().map(|l| format!("$ {l}")).collect(),
                ),
                Did::Change { diff, .. } => (
                    ToolKind::Edit,
                    diff.as_deref()
                        .unwrap_or("")
                        .lines()
                        .map(str::to_string)
                        .collect(),
                ),
                Did::Call { .. } => (ToolKind::Other, Vec::new()),
            };
            entries.push(Entry::Tool(ToolEntry {
                id: step.tool_call_id.clone(),
                title: step.headline.clone(),
                kind,
                status: match step.result.status {
                    StepStatus::Pending => ToolCallStatus::InProgress,
                    StepStatus::Completed => ToolCallStatus::Completed,
                    StepStatus::Failed | StepStatus::Denied => ToolCallStatus::Failed,
                },
                detail,
                output: step.result.output.clone(),
            }));
        }
        if !turn.reply.is_empty() {
            entries.push(Entry::Agent(turn.reply.clone()));
        }
        if turn.rewound {
            entries.push(Entry::Note(
                "(this turn was taken out of the conversation)".to_string(),
            ));
        }
    }
    entries
}

fn text_of(content: &ContentBlock) -> String {
    match content {
        ContentBlock::Text { text } => text.clone(),
        ContentBlock::Image { .. } => "[an image]".to_string(),
        ContentBlock::Audio { .. } => "[a recording]".to_string(),
        ContentBlock::ResourceLink { uri, .. } => format!("[{uri}]"),
        ContentBlock::Resource { resource } => format!("[{}]", resource.uri.as_deref().unwrap_or("a file")),
    }
}

/// Appends, keeping only the last [`OUTPUT_KEPT`] bytes.
fn push_kept(output: &mut String, more: &str) {
    output.push_str(more);
    if output.len() > OUTPUT_KEPT {
        let mut cut = output.len() - OUTPUT_KEPT;
        while !output.is_char_boundary(cut) {
            cut += 1;
        }
        output.replace_range(..cut, "");
    }
}

/// A command's line from the call's arguments (`$ cargo test`); nothing for other tools (their
/// title says what they do).
pub fn detail_of(raw_input: &Value) -> Vec<String> {
    match raw_input.get("command").and_then(Value::as_str) {
        Some(command) => command.lines().map(|line| format!("$ {line}")).collect(),
        None => Vec::new(),
    }
}

/// A change as a unified diff's lines.
pub fn diff_of(content: &ToolCallContent) -> Vec<String> {
    let ToolCallContent::Diff {
        path,
        old_text,
        new_text,
    } = content
    else {
        return Vec::new();
    };
    let old = old_text.as_deref().unwrap_or("");
    let diff = similar::TextDiff::from_lines(old, new_text.as_str());
    let mut lines = vec![format!("--- {path}")];
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            similar::ChangeTag::Delete => '-',
            similar::ChangeTag::Insert => '+',
            similar::ChangeTag::Equal => continue,
        };
        lines.push(format!("{sign}{}", change.value().trim_end_matches('\n')));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fed(updates: &[Value]) -> Conversation {
        let mut conversation = Conversation::default();
        for update in updates {
            conversation.apply_pushed(update);
        }
        conversation
    }

    #[test]
    fn streamed_chunks_join_their_entry_and_a_new_kind_starts_one() {
        let c = fed(&[
            json!({ "sessionUpdate": "user_message_chunk", "content": { "type": "text", "text": "hi" } }),
            json!({ "sessionUpdate": "agent_thought_chunk", "content": { "type": "text", "text": "let me" } }),
            json!({ "sessionUpdate": "agent_thought_chunk", "content": { "type": "text", "text": " think" } }),
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": "Hel" } }),
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": "lo" } }),
        ]);
        assert_eq!(
            c.entries,
            [
                Entry::You("hi".into()),
                Entry::Thinking("let me think".into()),
                Entry::Agent("Hello".into())
            ]
        );
    }

    #[test]
    fn a_tool_call_shows_its_command_then_its_output_and_how_it_ended() {
        let c = fed(&[
            json!({ "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Run a command in ~/w",
                    "kind": "execute", "status": "pending", "rawInput": { "command": "ls -a" } }),
            json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "in_progress",
                    "_meta": { "terminal_output": { "terminal_id": "c1", "data": "a\n" } } }),
            json!({ "sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed",
                    "content": [{ "type": "content", "content": { "type": "text", "text": "a\nb\n" } }] }),
        ]);
        let Entry::Tool(tool) = &c.entries[0] else {
            panic!("{:?}", c.entries)
        };
        assert_eq!(tool.title, "Run a command in ~/w");
        assert_eq!(tool.detail, ["$ ls -a"]);
        assert_eq!(
            (tool.status, tool.output.as_str()),
            (ToolCallStatus::Completed, "a\nb\n")
        );
    }

    #[test]
    fn a_change_shows_as_a_diff() {
        let c = fed(&[
            json!({ "sessionUpdate": "tool_call", "toolCallId": "c2", "title": "Edit a.txt",
            "kind": "edit", "status": "pending", "rawInput": { "path": "a.txt" },
            "content": [{ "type": "diff", "path": "a.txt", "oldText": "one\ntwo\n", "newText": "one\n2\n" }] }),
        ]);
        let Entry::Tool(tool) = &c.entries[0] else {
            panic!()
        };
        assert_eq!(tool.detail, ["--- a.txt", "-two", "+2"]);
    }

    #[test]
    fn the_turn_mark_the_plan_and_the_mode_are_kept_and_unknown_kinds_skipped() {
        let c = fed(&[
            json!({ "sessionUpdate": "_lembas_turn", "running": true }),
            json!({ "sessionUpdate": "plan", "entries": [{ "content": "Tidy", "priority": "medium", "status": "in_progress" }],
                    "_meta": { "lembas": { "plan": null } } }),
            json!({ "sessionUpdate": "current_mode_update", "currentModeId": "auto" }),
            json!({ "sessionUpdate": "something_new", "x": 1 }),
        ]);
        assert!(c.busy);
        assert_eq!(c.plan.len(), 1);
        assert_eq!(c.mode, "auto");
        assert!(c.entries.is_empty());
    }

    #[test]
    fn a_long_output_keeps_its_end() {
        let mut output = String::new();
        push_kept(&mut output, &"é".repeat(OUTPUT_KEPT));
        push_kept(&mut output, "end");
        assert!(output.len() <= OUTPUT_KEPT && output.ends_with("end"));
    }

    fn job(id: &str, state: JobState, started: u64) -> JobInfo {
        JobInfo {
            id: id.into(),
            kind: lembas_protocol::jobs::JobKind::Command,
            state,
            description: format!("{id} work"),
            command: None,
            started,
            ended: None,
            exit: None,
            unread: 0,
        }
    }

    #[test]
    fn jobs_are_kept_running_first_and_an_end_is_a_note() {
        let mut c = Conversation::default();
        c.job_changed(JobChange::Start, job("job_a", JobState::Running, 1));
        c.job_changed(JobChange::Start, job("job_b", JobState::Running, 2));
        assert_eq!(
            c.jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(),
            ["job_b", "job_a"]
        );
        assert!(c.entries.is_empty(), "a start is drawn with the jobs, not noted");
        c.job_changed(
            JobChange::End,
            JobInfo {
                exit: Some(3),
                ..job("job_b", JobState::Done, 2)
            },
        );
        assert_eq!(
            c.jobs.iter().map(|j| j.id.as_str()).collect::<Vec<_>>(),
            ["job_a", "job_b"]
        );
        assert_eq!(
            c.entries,
            [Entry::Note("Job done (job_b, exit 3): job_b work".into())]
        );
        // Told again (a front end taking the chat hears each job once more): still one.
        c.job_changed(JobChange::Update, job("job_a", JobState::Running, 1));
        assert_eq!(c.jobs.len(), 2);
    }
}
