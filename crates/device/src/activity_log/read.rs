//! Reading the log back (`lembas activity`, the window): the newest lines, newest first, over the
//! current file and the old ones, and one sentence for each.

use lembas_protocol::event::TaskState;
use serde_json::Value;
use std::io;
use std::path::Path;

use super::file::old_file;
use super::line::MISSED;
use crate::events::{DeviceEvent, LinkState, what_a_call_did};

/// The newest lines of the log.
#[derive(Debug, Default)]
pub struct Newest {
    /// Newest first; each an object with at least `at_ms` (a number) and `kind` (a string).
    pub lines: Vec<Value>,
    /// Lines met on the way that could not be read (cut short, or not the log's at all).
    pub unreadable: usize,
}

/// The newest `n` lines of the log at `path`, from the current file and then the old ones
/// (`kept_files` of them) while fewer than `n` were found. Missing files are empty ones; only a
/// file that is there and cannot be read is an error.
pub fn newest(path: &Path, kept_files: u32, n: usize) -> io::Result<Newest> {
    let mut newest = Newest::default();
    let files = std::iter::once(path.to_path_buf()).chain((1..=kept_files).map(|k| old_file(path, k)));
    for file in files {
        if newest.lines.len() >= n {
            break;
        }
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let text = String::from_utf8_lossy(&bytes);
        for raw in text.lines().rev().filter(|l| !l.trim().is_empty()) {
            if newest.lines.len() >= n {
                break;
            }
            match parse(raw) {
                Some(line) => newest.lines.push(line),
                None => newest.unreadable += 1,
            }
        }
    }
    Ok(newest)
}

/// A line of the log, or `None` when it is not one.
pub fn parse(raw: &str) -> Option<Value> {
    let line: Value = serde_json::from_str(raw).ok()?;
    (line.get("at_ms")?.is_u64() && line.get("kind")?.is_string()).then_some(line)
}

/// `HH:MM:SS` (UTC) of a line's `at_ms`.
pub fn clock(at_ms: u64) -> String {
    let day_seconds = (at_ms / 1000) % 86_400;
    format!(
        "{:02}:{:02}:{:02}",
        day_seconds / 3600,
        day_seconds / 60 % 60,
        day_seconds % 60
    )
}

/// One sentence for a line. A kind this version does not know is shown by its fields.
pub fn describe(line: &Value) -> String {
    if line["kind"] == MISSED {
        let count = line["count"].as_u64().unwrap_or(0);
        return format!("{count} event{} could not be logged", plural(count));
    }
    match serde_json::from_value::<DeviceEvent>(line.clone()) {
        Ok(event) => sentence(&event),
        Err(_) => {
            let mut fields = line.clone();
            if let Some(object) = fields.as_object_mut() {
                object.remove("at_ms");
                object.remove("kind");
            }
            fields.to_string()
        }
    }
}

fn sentence(event: &DeviceEvent) -> String {
    match event {
        DeviceEvent::Link { link, error } => {
            let state = match link {
                LinkState::Linked => "Linked".to_string(),
                LinkState::Offline { .. } => "Link down".to_string(),
                LinkState::Stopped => "Link closed: the device stopped".to_string(),
                LinkState::TokenRefused => "Link refused: the token was not accepted".to_string(),
                LinkState::ServerNeedsUpdate => "Link refused: the server needs updating".to_string(),
                LinkState::NotLoggedIn => "Not logged in".to_string(),
                LinkState::Starting | LinkState::Connecting => "Connecting".to_string(),
            };
            match error {
                Some(why) => format!("{state}: {why}"),
                None => state,
            }
        }
        DeviceEvent::LimitsSent { limits } => format!("Limits told to the instance: {limits}"),
        DeviceEvent::TerminalOpened { terminal_id, cwd } => {
            format!("Terminal {terminal_id} opened in {cwd}")
        }
        DeviceEvent::TerminalClosed { terminal_id } => format!("Terminal {terminal_id} closed"),
        DeviceEvent::WatchStarted { cwd, command } => format!("Watching `{command}` in {cwd}"),
        DeviceEvent::Watch {
            cwd,
            command,
            outcome,
        } => format!("Watched `{command}` in {cwd}: {}", outcome.phrase()),
        DeviceEvent::Refused { method, reason } => format!("Refused {method}: {reason}"),
        DeviceEvent::SessionOpened {
            session_id,
            cwd,
            model,
        } => format!("Session {session_id} opened in {cwd} on {model}"),
        DeviceEvent::Turn {
            session_id,
            turn_id,
            state,
            stop_reason,
            ..
        } => match (state, stop_reason) {
            (TaskState::Start, _) => format!("Turn {turn_id} of {session_id} started"),
            (_, Some(why)) => format!("Turn {turn_id} of {session_id} ended ({why})"),
            (_, None) => format!("Turn {turn_id} of {session_id} failed"),
        },
        DeviceEvent::ApprovalAsked {
            tool_call_id,
            title,
            reason,
            ..
        } => format!("Approval asked for {tool_call_id} ({title}): {reason}"),
        DeviceEvent::ApprovalSettled {
            tool_call_id,
            outcome,
            ..
        } => format!("Approval for {tool_call_id}: {outcome}"),
        DeviceEvent::SessionDeleted { session_id } => format!("Session {session_id} deleted"),
        DeviceEvent::ToolCall {
            tool_call_id,
            tool,
            title,
            decision,
            answered_by,
            outcome,
            command,
            changed_files,
            ..
        } => {
            let by = answered_by
                .as_deref()
                .map(|by| format!(", answered by {by}"))
                .unwrap_or_default();
            let did = what_a_call_did(outcome, command.as_deref(), changed_files)
                .map(|did| format!("; {did}"))
                .unwrap_or_default();
            format!("{tool} {tool_call_id} ({title}): {decision}{by}, {outcome}{did}")
        }
        DeviceEvent::Shown {
            session_id,
            path,
            size,
            ..
        } => format!("Session {session_id} showed {path} ({size} bytes)"),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
