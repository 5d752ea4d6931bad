//! The numbers and texts the spec refers to but does not give (docs/protocol.md),
//! kept in one place: `decisions.json` beside this crate, our `loop.json`. Code reads them from
//! here and never repeats them as literals.

use serde::Deserialize;
use std::sync::OnceLock;

#[derive(Debug, Deserialize)]
pub struct Decisions {
    pub harness_spec: String,
    pub protocol: u32,
    pub tools: Tools,
    pub scheduled: Scheduled,
    pub link: Link,
    pub terminal: Terminal,
    pub turns: Turns,
    pub jobs: JobsNumbers,
    pub mcp: McpNumbers,
    pub prompt: PromptLimits,
    pub engine: EngineNumbers,
    pub activity: ActivityLog,
    pub question: Question,
    pub plan: PlanLimits,
    pub show: ShowNumbers,
    pub commands: Commands,
    pub files: FilesNumbers,
}

/// Commands (`/name` in a prompt, docs/protocol.md "Commands"): the built-ins as listed, how many turns'
/// file copies `/undo` can put back, the limits on what a command reads, and its texts.
#[derive(Debug, Deserialize)]
pub struct Commands {
    pub undo_turns_kept: usize,
    /// A custom command's or skill's file longer than this is left out.
    pub file_max_bytes: u64,
    pub git_timeout_seconds: u64,
    /// git's output put in a prompt (a diff, a log) is cut to this many characters.
    pub git_output_max_chars: usize,
    /// The TUI's own commands: a custom command or skill of such a name is not a command.
    pub tui_only: Vec<String>,
    pub builtins: Vec<Builtin>,
    pub texts: CommandTexts,
}

#[derive(Debug, Deserialize)]
pub struct Builtin {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub hint: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct CommandTexts {
    pub review: String,
    pub review_nothing: String,
    pub changelog: String,
    pub changelog_nothing: String,
    pub init: String,
    pub r#continue: String,
    pub git_failed: String,
    pub compact_nothing: String,
    pub undo_nothing: String,
    pub undo_scheduled: String,
    pub undo_left: String,
    pub undo_unkept: String,
}

/// Capability `files` (docs/protocol.md `_lembas/files/search`, `@path` in a prompt): the picker's limits,
/// how the folder index is kept, how strongly recent use nudges the order, and how much a
/// prompt's `@path` mentions attach.
#[derive(Debug, Deserialize)]
pub struct FilesNumbers {
    pub search_default_limit: usize,
    pub search_max_limit: usize,
    /// An index older than this is rebuilt in the background at the next search.
    pub index_max_age_seconds: u64,
    /// A walk stops here (a root as wide as the home folder stays bounded).
    pub index_max_entries: usize,
    /// Folder indexes held at once; the least recently searched goes first.
    pub indexes_kept: usize,
    /// Uses remembered per folder (over its sessions).
    pub recent_kept: usize,
    /// Added to the fuzzy score of the most recent file, less for older ones.
    pub recent_bonus: u32,
    pub mention_max_files: usize,
    /// A mentioned file's lines are attached up to this many bytes (and `tools.read_default_lines`).
    pub mention_max_bytes: usize,
}

/// `_lembas/question` (docs/protocol.md): how many questions and options a card holds, and how long an
/// option's label may be on it.
#[derive(Debug, Deserialize)]
pub struct Question {
    pub max_questions: usize,
    pub max_options: usize,
    pub label_chars: usize,
}

/// The structured plan (docs/protocol.md "The structured plan"): how large a plan the model may
/// keep, so a plan a model floods is refused with a sentence rather than sent on every change.
#[derive(Debug, Deserialize)]
pub struct PlanLimits {
    pub max_phases: usize,
    pub max_tasks: usize,
    pub max_steps_per_task: usize,
    /// Objectives, and findings.
    pub max_items: usize,
    /// Any one text: the title, the summary, a task, a step, a finding.
    pub text_chars: usize,
}

/// The show tool (docs/protocol.md `_lembas/show`): the largest file it sends, what the runtime keeps of
/// the files shown for the desktop's viewer (per session, and in all, the oldest dropped first),
/// and how long it waits for the client to say whether it showed one.
#[derive(Debug, Deserialize)]
pub struct ShowNumbers {
    pub max_bytes: u64,
    pub kept_per_session: usize,
    pub kept_total_bytes: u64,
    pub client_wait_seconds: u64,
}

/// The activity log (`activity.jsonl`): the size at which it is rotated, and how many old files
/// (`activity.jsonl.1`, …) are kept.
#[derive(Debug, Deserialize)]
pub struct ActivityLog {
    pub max_bytes: u64,
    pub kept_files: u32,
}

#[derive(Debug, Deserialize)]
pub struct PromptLimits {
    pub max_block_bytes: usize,
    pub max_prompt_bytes: usize,
}

/// The engine's numbers (docs/protocol.md): the step backstop, how much of the bash tool's output is kept,
/// titles. The bash tool's time limit is with the tools' numbers.
#[derive(Debug, Deserialize)]
pub struct EngineNumbers {
    pub max_turn_requests: usize,
    pub bash_output_kept_bytes: usize,
    pub title_chars: usize,
    pub title_max_chars: usize,
    /// `AGENTS.md` (or `CLAUDE.md`) files given to the model: at most this much in all.
    pub project_instructions_max_bytes: usize,
    /// A model's context window when `/v1/models` gives none.
    pub context_window_default: u64,
    /// A step whose prompt took more than this share of the window makes the next step compact
    /// first.
    pub compact_at_percent: u64,
}

#[derive(Debug, Deserialize)]
pub struct Scheduled {
    pub setting: Setting,
    pub approval_wait_seconds: Range,
    pub monitor: Monitor,
    pub texts: Texts,
}

#[derive(Debug, Deserialize)]
pub struct Setting {
    pub label: String,
    pub description: String,
}

#[derive(Debug, Deserialize)]
pub struct Range {
    pub default: u64,
    pub min: u64,
    pub max: u64,
}

#[derive(Debug, Deserialize)]
pub struct Monitor {
    pub timeout_seconds: MonitorTimeout,
    pub excerpt_chars: usize,
    pub output_max_bytes: usize,
    pub kill_grace_ms: u64,
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
pub struct MonitorTimeout {
    pub default: u64,
    pub max: u64,
}

#[derive(Debug, PartialEq, Deserialize)]
pub struct Texts {
    pub off: String,
    pub plan: String,
    pub denied: String,
    pub no_reply: String,
    pub monitor_asks: String,
    pub monitor_denied: String,
}

#[derive(Debug, Deserialize)]
pub struct Link {
    pub backoff_ms: Backoff,
    pub stable_after_ms: u64,
    pub ping_interval_ms: u64,
    pub dead_after_missed_pings: u32,
}

#[derive(Debug, Deserialize)]
pub struct Backoff {
    pub first: u64,
    pub max: u64,
    pub jitter: f64,
}

#[derive(Debug, Deserialize)]
pub struct Terminal {
    pub max_per_link: usize,
    pub cols: [u16; 2],
    pub rows: [u16; 2],
}

/// The file tools' numbers (docs/protocol.md "Tools" and "The prompt the model gets").
#[derive(Debug, PartialEq, Eq, Deserialize)]
pub struct Tools {
    /// A tool result longer than this (in characters) is cut…
    pub result_max_chars: usize,
    /// …to this many characters from its start and as many from its end.
    pub result_keep_chars: usize,
    /// How many lines `read` shows when the model gives no `limit`.
    pub read_default_lines: usize,
    /// A file with a NUL byte among its first this-many bytes is binary.
    pub binary_check_bytes: usize,
    /// The most entries `ls`, files `glob` and matching lines `grep` return.
    pub list_max_entries: usize,
    /// A matching line longer than this (in characters) is cut in `grep`'s output.
    pub grep_line_max_chars: usize,
    /// The `bash` tool's `timeout_s`: its default and its most.
    pub bash_timeout_seconds: MonitorTimeout,
}

/// Turn ids (docs/protocol.md "Turn ids"): how many a session's turns file keeps, and when an untouched one
/// is pruned.
#[derive(Debug, Deserialize)]
pub struct Turns {
    pub kept_per_session: usize,
    pub prune_after_days: u64,
}

/// Background jobs (docs/protocol.md "Background jobs"): how many run at once in a session, how
/// much of a job's output is kept, how many finished ones are listed.
#[derive(Debug, Deserialize)]
pub struct JobsNumbers {
    pub running_max: usize,
    pub finished_kept: usize,
    pub output_kept_bytes: usize,
}

/// MCP servers (docs/protocol.md "The instance's memory", "An editor's MCP servers"): how long one
/// may take to start and to answer a call, and how long a session's start waits for the memory.
#[derive(Debug, Deserialize)]
pub struct McpNumbers {
    pub start_timeout_ms: u64,
    pub call_timeout_ms: u64,
    pub memory_read_timeout_ms: u64,
}

impl Decisions {
    /// The decisions built into this program (`decisions.json`), parsed once. Only start-up calls
    /// this (the programs' `main`, [`crate::setup::Setup::from_env`], test fixtures): everything
    /// below is handed the decisions, or the part it needs, by its owner, so a test can give it
    /// other numbers (`tests/imports.rs` checks). The file is part of the build, so
    /// a parse failure is a bug caught by the first test that runs, never something a user can
    /// cause.
    pub fn built_in() -> &'static Decisions {
        static CELL: OnceLock<Decisions> = OnceLock::new();
        CELL.get_or_init(|| {
            serde_json::from_str(include_str!("../decisions.json"))
                .unwrap_or_else(|e| panic!("decisions.json is part of the build and must parse: {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn decisions_parse() {
        let d = super::Decisions::built_in();
        assert_eq!(d.protocol, 3);
        assert_eq!(d.harness_spec, "3.5.0");
        assert_eq!(d.scheduled.monitor.output_max_bytes, 1_048_576);
        assert_eq!(d.terminal.max_per_link, 4);
        assert!(d.tools.result_keep_chars * 2 <= d.tools.result_max_chars);
        assert_eq!(d.turns.kept_per_session, 200);
        assert_eq!(d.turns.prune_after_days, 30);
        assert_eq!(d.activity.max_bytes, 10 * 1024 * 1024);
        assert_eq!(d.activity.kept_files, 1);
        assert_eq!(
            (
                d.question.max_questions,
                d.question.max_options,
                d.question.label_chars
            ),
            (4, 6, 240)
        );
        let names: Vec<&str> = d.commands.builtins.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "compact",
                "plan",
                "undo",
                "review",
                "changelog",
                "init",
                "continue"
            ]
        );
    }
}
