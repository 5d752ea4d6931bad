//! `bash`: a command line run with `bash -c` in the session's folder, in the box (the sandbox) made
//! for the mode, judged by the bash judge with the chat's command grants as further allow rules;
//! with `background: true`, started as a job of the session instead (capability `jobs`).

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

use super::judged::{self, Judged, Judging, Prepared, Running};
use super::live_output::LiveOutput;
use super::{Tool, Turn};
use crate::decisions::Decisions;
use crate::engine::approvals::CardFacts;
use crate::engine::grants::Grant;
use crate::engine::jobs;
use crate::engine::model::ToolCall;
use crate::engine::session::{Session, ToolResult};
use crate::policy::bash_judge::{self, Decision, JudgeContext, Judgement};
use crate::tools::arguments::{self, lenient};
use crate::tools::{ToolDefinition, ToolName, ToolOutput};
use lembas_protocol::update::ToolKind;

pub(super) struct Bash;

/// `bash`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
struct BashArguments {
    /// The command line.
    #[serde(deserialize_with = "lenient::text")]
    command: String,
    /// Seconds before the command is stopped (its bounds are the decisions').
    #[serde(default, deserialize_with = "seconds")]
    #[schemars(with = "u64", range(min = 1))]
    timeout_s: Option<f64>,
    /// What the command does, in a few words, for the person watching.
    #[serde(default, deserialize_with = "lenient::optional_text")]
    #[schemars(with = "String")]
    description: Option<String>,
    /// Start it as a background job (a server, a watcher, a long build) and go on at once.
    #[serde(default, deserialize_with = "lenient::flag")]
    #[schemars(with = "bool")]
    background: Option<bool>,
}

/// A time limit as models write it; one that is not a positive number is the default's.
fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let given = Option::<Value>::deserialize(d)?;
    let number = match given {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    Ok(number.filter(|s| *s > 0.0))
}

/// What an allowed call runs.
pub(super) struct Command {
    line: String,
    timeout: Duration,
    /// Started as a background job, with its description, rather than waited for.
    background: Option<String>,
}

impl Command {
    #[cfg(test)]
    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }
}

impl Tool for Bash {
    fn name(&self) -> &str {
        ToolName::Bash.as_str()
    }

    fn definition(&self, decisions: &Decisions) -> ToolDefinition {
        let bash = &decisions.tools.bash_timeout_seconds;
        ToolDefinition::of::<BashArguments>(
            ToolName::Bash,
            "Run a command line with `bash -c` in the session's folder. Standard output and error \
             come back as one text; there is no input.",
        )
        .with("/properties/timeout_s/maximum", bash.max)
        .with(
            "/properties/timeout_s/description",
            format!(
                "Seconds before the command is stopped (default {}, at most {}).",
                bash.default, bash.max
            ),
        )
        .with(
            "/properties/background/description",
            format!(
                "Start it as a background job (a server, a watcher, a long build) and go on at once: the answer is the job's id, \
                 and you are told when it ends. No time limit; at most {} run at once.",
                decisions.jobs.running_max
            ),
        )
    }

    fn call<'a>(&'a self, turn: Turn<'a>, call: &'a ToolCall) -> BoxFuture<'a, ToolResult> {
        Box::pin(judged::call(self, turn, call))
    }
}

impl Judged for Bash {
    type Work = Command;

    fn prepare(&self, call: &ToolCall, at: &Judging<'_>) -> Result<Prepared<Command>, String> {
        let (args, raw_input) =
            arguments::read::<BashArguments>("bash", &call.arguments).map_err(|e| e.to_string())?;
        if args.command.trim().is_empty() {
            return Err("bash needs `command` (a string).".into());
        }
        let numbers = &at.ctx.numbers.bash_timeout_seconds;
        let seconds = args
            .timeout_s
            .unwrap_or(numbers.default as f64)
            .min(numbers.max as f64);
        let (judgement, granted) = judge_with_grants(&args.command, at);
        let description = args.description.filter(|d| !d.is_empty());
        let title = description.clone().unwrap_or_else(|| first_line(&args.command));
        let background = (args.background == Some(true)).then(|| title.clone());
        let facts = CardFacts::of_command(
            &args.command,
            description.as_deref(),
            background.is_some(),
            at.ctx,
        );
        let pattern = always_pattern(&args.command);
        Ok(Prepared {
            title,
            kind: ToolKind::Execute,
            raw_input,
            judgement,
            always: pattern.clone(),
            grant: Some(Grant::Command { pattern }),
            facts,
            granted,
            command: Some(args.command.clone()),
            shown: Vec::new(),
            locations: Vec::new(),
            work: Command {
                line: args.command,
                timeout: Duration::from_secs_f64(seconds),
                background,
            },
        })
    }

    fn admit(&self, work: &Command, session: &Session, decisions: &Decisions) -> Result<(), String> {
        match work.background {
            Some(_) => jobs::room(session, decisions.jobs.running_max),
            None => Ok(()),
        }
    }

    fn corrected(&self, work: &mut Command, line: String, at: &Judging<'_>) -> Result<(), Judgement> {
        let check = judge(&line, at);
        if check.decision == Decision::Deny {
            return Err(check);
        }
        work.line = line;
        Ok(())
    }

    async fn run<'a>(&'a self, work: Command, at: Running<'a>) -> ToolOutput {
        let Turn { engine, session, .. } = at.turn;
        let sandbox = engine.command_sandbox(session, at.mode);
        match work.background {
            None if engine.client_draws_terminal_output() => {
                let (live, forward) =
                    LiveOutput::start(engine, &session.id, &at.call.id, &at.ctx.project).await;
                let decisions = engine.setup().decisions;
                let (output, exit) = run_bash(
                    &at.ctx.project,
                    &work.line,
                    work.timeout,
                    &sandbox,
                    decisions,
                    Some(forward),
                )
                .await;
                live.finish(exit).await;
                output
            }
            None => {
                let decisions = engine.setup().decisions;
                run_bash(
                    &at.ctx.project,
                    &work.line,
                    work.timeout,
                    &sandbox,
                    decisions,
                    None,
                )
                .await
                .0
            }
            Some(description) => {
                let started = jobs::start(engine, session, work.line, description, at.mode, sandbox).await;
                let (text, is_error) = match started {
                    Ok(text) => (text, false),
                    Err(text) => (text, true),
                };
                ToolOutput {
                    text,
                    is_error,
                    diff: None,
                }
            }
        }
    }
}

/// A command judged by the rules (the person's and the trusted project's).
fn judge(command: &str, at: &Judging<'_>) -> Judgement {
    let ctx = at.ctx;
    bash_judge::judge(
        command,
        &JudgeContext {
            mode: at.mode,
            global: at.rules,
            project: at.project_rules,
            folder: &ctx.project,
            roots: &ctx.roots,
            home: ctx.protected.home(),
            protected: &ctx.protected,
        },
    )
}

/// A command judged by the rules and, when they would ask, by the chat's "Allow for this chat"
/// answers as further allow rules (an ask or deny rule still wins over them): the judgement, and
/// whether those answers are what allowed it.
fn judge_with_grants(command: &str, at: &Judging<'_>) -> (Judgement, bool) {
    let judged = judge(command, at);
    let grants = at.grants.commands();
    if judged.decision != Decision::Ask || grants.is_empty() {
        return (judged, false);
    }
    let mut rules = at.rules.clone();
    rules.allow.extend(grants.iter().cloned());
    let widened = Judging { rules: &rules, ..*at };
    let granted = judge(command, &widened);
    if granted.decision != Decision::Allow {
        return (granted, false);
    }
    let named: Vec<String> = grants.iter().map(|g| format!("\"{g}\"")).collect();
    let reason = format!(
        "Allowed for this chat by an earlier answer (commands like {}).",
        named.join(", ")
    );
    (
        Judgement {
            decision: Decision::Allow,
            reason,
        },
        true,
    )
}

/// docs/protocol.md: "always" for bash covers the command's first two words followed by `*`.
fn always_pattern(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().take(2).collect();
    format!("{} *", words.join(" "))
}

fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect()
}

/// The command's result for the model, and its exit status (`None`: a signal or the time limit
/// ended it, or it did not run).
async fn run_bash(
    folder: &Path,
    command: &str,
    timeout: Duration,
    sandbox: &crate::sandbox::Sandbox,
    decisions: &Decisions,
    forward: Option<tokio::sync::mpsc::Sender<Vec<u8>>>,
) -> (ToolOutput, Option<i32>) {
    let keep = decisions.engine.bash_output_kept_bytes;
    let monitor = &decisions.scheduled.monitor;
    match crate::monitor::run_command_forwarding(folder, command, timeout, keep, sandbox, monitor, forward)
        .await
    {
        Ok(outcome) => {
            let exit = outcome.watched.exit.filter(|_| !outcome.watched.timed_out);
            let mut text = outcome.watched.excerpt;
            if outcome.watched.bytes > keep as u64 {
                text.push_str(&format!(
                    "\n[{} bytes of output in all; only the first {keep} were kept]",
                    outcome.watched.bytes
                ));
            }
            let (note, is_error) = match (outcome.watched.timed_out, outcome.watched.exit) {
                (true, _) => (
                    format!(
                        "\n[stopped after {} s: the command did not finish in time]",
                        timeout.as_secs()
                    ),
                    true,
                ),
                (false, Some(0)) => (String::new(), false),
                (false, Some(code)) => (format!("\n[exit status {code}]"), true),
                (false, None) => ("\n[ended by a signal]".to_string(), true),
            };
            text.push_str(&note);
            if let Some(refusal) = outcome.sandbox_refusal {
                text.push('\n');
                text.push_str(&refusal);
            }
            let output = ToolOutput {
                text,
                is_error,
                diff: None,
            };
            (output, exit)
        }
        Err(e) => {
            let output = ToolOutput {
                text: format!("The command could not be run: {e}"),
                is_error: true,
                diff: None,
            };
            (output, None)
        }
    }
}
