//! The conversation drawn: only as much of its end as fits, so a chat of thousands of messages
//! draws as fast as a short one; each tool call with its command or diff and the end of its output.

use lembas_protocol::update::{ToolCallStatus, ToolKind};
use ratatui::style::{Color, Style, Stylize};
use ratatui::text::{Line, Span};

use super::super::app::App;
use super::super::screen::{Entry, ToolEntry};
use super::super::text::{cut, wrap};

/// A tool call's output lines shown (its end).
const OUTPUT_SHOWN: usize = 8;
/// A tool call's command or diff lines shown.
pub(super) const DETAIL_SHOWN: usize = 24;

pub fn conversation_lines(app: &App, width: usize, height: usize) -> Vec<Line<'static>> {
    let wanted = height + app.scroll;
    let mut blocks: Vec<Vec<Line<'static>>> = Vec::new();
    let mut count = 0;
    for entry in app.conversation.entries.iter().rev() {
        let lines = entry_lines(entry, width);
        count += lines.len();
        blocks.push(lines);
        if count >= wanted {
            break;
        }
    }
    if count < wanted && app.conversation.earlier_turns > 0 {
        blocks.push(vec![Line::from(
            format!("({} earlier turns not shown)", app.conversation.earlier_turns).dim(),
        )]);
    }
    let mut lines: Vec<Line<'static>> = blocks.into_iter().rev().flatten().collect();
    let end = lines
        .len()
        .saturating_sub(app.scroll.min(lines.len().saturating_sub(height)));
    lines.truncate(end);
    let start = lines.len().saturating_sub(height);
    lines.drain(..start);
    lines
}

fn entry_lines(entry: &Entry, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match entry {
        Entry::You(text) => {
            lines.push(Line::raw(""));
            for (i, row) in wrap(text, width.saturating_sub(2)).into_iter().enumerate() {
                let mark = if i == 0 { "› " } else { "  " };
                lines.push(Line::from(vec![mark.bold().fg(Color::Cyan), row.bold()]));
            }
        }
        Entry::Agent(text) => {
            lines.push(Line::raw(""));
            lines.extend(wrap(text, width).into_iter().map(Line::raw));
        }
        Entry::Thinking(text) => {
            lines.extend(
                wrap(text, width)
                    .into_iter()
                    .map(|row| Line::from(row.dim().italic())),
            );
        }
        Entry::Note(text) => {
            lines.extend(
                wrap(text, width)
                    .into_iter()
                    .map(|row| Line::from(row.fg(Color::Yellow))),
            );
        }
        Entry::Tool(tool) => lines.extend(tool_lines(tool, width)),
    }
    lines
}

fn tool_lines(tool: &ToolEntry, width: usize) -> Vec<Line<'static>> {
    let (mark, color) = match tool.status {
        ToolCallStatus::Pending => ("○", Color::DarkGray),
        ToolCallStatus::InProgress => ("◐", Color::Blue),
        ToolCallStatus::Completed => ("●", Color::Green),
        ToolCallStatus::Failed => ("✗", Color::Red),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{mark} "), Style::new().fg(color)),
        Span::styled(cut(&tool.title, width.saturating_sub(2)), Style::new().bold()),
    ])];
    for row in tool.detail.iter().take(DETAIL_SHOWN) {
        lines.push(Line::from(Span::styled(
            cut(&format!("  {row}"), width),
            detail_style(row, tool.kind),
        )));
    }
    if tool.detail.len() > DETAIL_SHOWN {
        lines.push(Line::from(
            format!("  … {} more lines", tool.detail.len() - DETAIL_SHOWN).dim(),
        ));
    }
    let output: Vec<&str> = tool.output.lines().collect();
    if output.len() > OUTPUT_SHOWN {
        lines.push(Line::from(
            format!("  … {} lines above", output.len() - OUTPUT_SHOWN).dim(),
        ));
    }
    for row in &output[output.len().saturating_sub(OUTPUT_SHOWN)..] {
        lines.push(Line::from(cut(&format!("  │ {row}"), width).dim()));
    }
    lines
}

pub(super) fn detail_style(row: &str, kind: ToolKind) -> Style {
    match (kind, row.chars().next()) {
        (_, Some('$')) => Style::new().fg(Color::Magenta),
        (_, Some('+')) if !row.starts_with("+++") => Style::new().fg(Color::Green),
        (_, Some('-')) if !row.starts_with("---") => Style::new().fg(Color::Red),
        _ => Style::new().dim(),
    }
}
