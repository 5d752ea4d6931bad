//! A tool call made ready to judge: read from the model's arguments into the work it would do,
//! with the judgement of the mode (the tool policy, the bash judge, or the MCP row), the title and
//! kind the client is shown, and what the device says of it on a card.

use serde_json::Value;
use std::time::Duration;

use crate::decisions::decisions;
use crate::engine::approvals::CardFacts;
use crate::engine::mcp_servers::Offered;
use crate::engine::model::ToolCall;
use crate::engine::session::Session;
use crate::engine::show;
use crate::policy::Mode;
use crate::policy::bash_judge::{self, Decision, JudgeContext, Judgement};
use crate::policy::tools::{self as tool_policy, Access, Place};
use crate::settings::BashRules;
use crate::tools::{self, ToolContext};
use lembas_protocol::update::ToolKind;

/// A call ready to be judged: what the card and the client are shown.
pub(super) struct Prepared {
    pub(super) title: String,
    pub(super) kind: ToolKind,
    pub(super) raw_input: Value,
    pub(super) judgement: Judgement,
    /// What "Always allow in this session" would cover, said on the card.
    pub(super) always: String,
    /// What the device says of the call on the card (the session's part is added when it asks).
    pub(super) facts: CardFacts,
    /// Allowed only by an earlier "Allow for this chat" (the timeline says so).
    pub(super) granted: bool,
    pub(super) work: Work,
}

pub(super) enum Work {
    File {
        planned: tools::Planned,
        args: Value,
    },
    /// `show`: planned and judged as a read of its path, then sent to the client.
    Show {
        planned: tools::Planned,
        line: Option<u64>,
    },
    Bash {
        command: String,
        timeout: Duration,
        /// Started as a background job (capability `jobs`) rather than waited for.
        background: Option<String>,
    },
    /// A tool of an MCP server the editor named for the session.
    Mcp {
        offered: Offered,
        args: Value,
    },
}

/// The editor's MCP tool the model named, when the session's servers offer it (the session's state
/// is let go before the call is prepared, which reads it again).
pub(super) fn mcp_tool(session: &Session, name: &str) -> Option<Offered> {
    session
        .state()
        .mcp
        .as_ref()
        .and_then(|servers| servers.find(name))
}

/// A tool of an editor's MCP server: judged like a write anywhere (the mode table's MCP row).
pub(super) fn prepare_mcp(
    call: &ToolCall,
    offered: Offered,
    mode: Mode,
    allowed_always: bool,
) -> Result<Prepared, String> {
    let args: Value = serde_json::from_str(&call.arguments)
        .map_err(|e| format!("The arguments of {} are not valid JSON: {e}.", call.name))?;
    let judgement = tool_policy::decide_mcp(mode, allowed_always, &offered.exposed);
    let granted = judgement.decision == Decision::Allow
        && tool_policy::decide_mcp(mode, false, &offered.exposed).decision != Decision::Allow;
    Ok(Prepared {
        title: format!("{} (MCP server {})", offered.tool, offered.server),
        kind: ToolKind::Other,
        raw_input: args.clone(),
        judgement,
        always: format!(
            "{} of the MCP server {} in this session",
            offered.tool, offered.server
        ),
        facts: CardFacts::of_mcp(&offered.server, &offered.tool),
        granted,
        work: Work::Mcp { offered, args },
    })
}

pub(super) fn prepare(
    call: &ToolCall,
    ctx: &ToolContext,
    mode: Mode,
    always_writes: bool,
    always_bash: &[String],
    global: &BashRules,
    project_rules: Option<&BashRules>,
) -> Result<Prepared, String> {
    if call.name == "bash" {
        let args: Value = serde_json::from_str(&call.arguments)
            .map_err(|e| format!("The arguments of bash are not valid JSON: {e}."))?;
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty())
            .ok_or("bash needs `command` (a string).")?
            .to_string();
        let numbers = &decisions().tools.bash_timeout_seconds;
        let seconds = args
            .get("timeout_s")
            .and_then(Value::as_f64)
            .filter(|s| *s > 0.0)
            .unwrap_or(numbers.default as f64)
            .min(numbers.max as f64);
        let (judgement, granted) = judge_with_grants(&command, ctx, mode, global, always_bash, project_rules);
        let title = args
            .get("description")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| first_line(&command));
        let background = (args.get("background") == Some(&Value::Bool(true))).then(|| title.clone());
        let description = args.get("description").and_then(Value::as_str);
        let facts = CardFacts::of_command(&command, description, background.is_some(), ctx);
        return Ok(Prepared {
            title,
            kind: ToolKind::Execute,
            raw_input: args,
            judgement,
            always: always_pattern(&command),
            facts,
            granted,
            work: Work::Bash {
                command,
                timeout: Duration::from_secs_f64(seconds),
                background,
            },
        });
    }
    let (planned, args) = tools::plan(&call.name, &call.arguments, ctx).map_err(|e| e.to_string())?;
    let place = tool_policy::place_of(&planned.path, &ctx.project, &ctx.roots, &ctx.protected);
    let mut judgement = tools::judge(&planned, mode, ctx);
    let granted = judgement.decision == Decision::Ask
        && always_writes
        && planned.access == Access::Write
        && place == Place::Project;
    if granted {
        judgement = Judgement {
            decision: Decision::Allow,
            reason: "Allowed for this chat: every write in its folder.".into(),
        };
    }
    let mut facts = CardFacts::of_change(&planned, ctx);
    // Read only for a card: an allowed call is not made to read its file twice.
    if judgement.decision == Decision::Ask {
        facts.unified_diff = tools::preview(&planned, &args, ctx);
    }
    Ok(Prepared {
        title: planned.title.clone(),
        kind: planned.kind,
        raw_input: args.clone(),
        judgement,
        always: format!("every write in {}", ctx.project.display()),
        facts,
        granted,
        work: Work::File { planned, args },
    })
}

/// `show` is judged as the `read` of its path would be (allowed inside the folders, denied outside
/// them or on a protected path: never asked).
pub(super) fn prepare_show(call: &ToolCall, ctx: &ToolContext, mode: Mode) -> Result<Prepared, String> {
    let (planned, line, args) = show::plan(&call.arguments, ctx)?;
    Ok(Prepared {
        title: planned.title.clone(),
        kind: ToolKind::Read,
        raw_input: args,
        judgement: tools::judge(&planned, mode, ctx),
        always: String::new(),
        facts: CardFacts::default(),
        granted: false,
        work: Work::Show { planned, line },
    })
}

pub(super) fn judge_bash(
    command: &str,
    ctx: &ToolContext,
    mode: Mode,
    rules: &BashRules,
    project_rules: Option<&BashRules>,
) -> Judgement {
    bash_judge::judge(
        command,
        &JudgeContext {
            mode,
            global: rules,
            project: project_rules,
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
fn judge_with_grants(
    command: &str,
    ctx: &ToolContext,
    mode: Mode,
    global: &BashRules,
    grants: &[String],
    project_rules: Option<&BashRules>,
) -> (Judgement, bool) {
    let judged = judge_bash(command, ctx, mode, global, project_rules);
    if judged.decision != Decision::Ask || grants.is_empty() {
        return (judged, false);
    }
    let mut rules = global.clone();
    rules.allow.extend(grants.iter().cloned());
    let granted = judge_bash(command, ctx, mode, &rules, project_rules);
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
pub(super) fn always_pattern(command: &str) -> String {
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
