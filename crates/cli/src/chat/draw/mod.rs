//! Drawing the front end's state on a frame: the conversation (only as much of its end as fits,
//! so a chat of thousands of messages draws as fast as a short one), the plan, the card that
//! waits, the completion, the input line and the status line. A terminal too small for that gets
//! one line asking for more room.

use std::time::Instant;

use lembas_protocol::jobs::{JobInfo, JobState};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

mod card;
mod conversation;

use super::app::{App, Focus};
use super::text::cut;
use card::card_lines;
pub use conversation::conversation_lines;

/// The smallest terminal the chat is drawn in.
pub const MIN_WIDTH: u16 = 30;
pub const MIN_HEIGHT: u16 = 8;

pub fn draw(frame: &mut Frame, app: &App, now: Instant) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let line = cut(
            &format!("Make the terminal bigger ({MIN_WIDTH}×{MIN_HEIGHT} at least)"),
            usize::from(area.width),
        );
        frame.render_widget(
            Paragraph::new(line).bold(),
            Rect {
                height: 1.min(area.height),
                ..area
            },
        );
        return;
    }
    let width = usize::from(area.width);
    let card_lines = card_lines(app, width);
    // The card gets at most half the screen; the plan a few lines.
    let card_height = u16::try_from(card_lines.len())
        .unwrap_or(u16::MAX)
        .min(area.height / 2);
    let mut plan_lines = plan_lines(app, width);
    plan_lines.extend(job_lines(app, width));
    let plan_height = u16::try_from(plan_lines.len()).unwrap_or(0).min(area.height / 4);
    let [talk, plan, card, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(plan_height),
        Constraint::Length(card_height),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);

    let shown = conversation_lines(app, width, usize::from(talk.height));
    frame.render_widget(Paragraph::new(shown), talk);
    frame.render_widget(Paragraph::new(plan_lines), plan);
    if card_height > 0 {
        // The keys line is the card's last: it stays in sight when the card is cut.
        let mut lines = card_lines;
        if lines.len() > usize::from(card_height) {
            let keys = lines.pop();
            lines.truncate(usize::from(card_height) - 1);
            lines.extend(keys);
        }
        frame.render_widget(Paragraph::new(lines), card);
    }
    draw_input(frame, app, input);
    frame.render_widget(Paragraph::new(status_line(app, width, now)), status);
    if app.completion.is_open() {
        draw_completion(frame, app, talk);
    }
    if app.picker.is_some() {
        draw_picker(frame, app, talk);
    }
}

fn draw_input(frame: &mut Frame, app: &App, area: Rect) {
    const PROMPT: &str = "› ";
    let view = app.input.view(area.width.saturating_sub(2));
    let prompt_style = if app.focus == Focus::Input {
        Style::new().bold().fg(Color::Cyan)
    } else {
        Style::new().dim()
    };
    let shown = if app.input.is_empty() && app.focus == Focus::Input {
        Span::styled(
            if app.conversation.busy {
                "Working… type to steer, Esc to stop"
            } else {
                "Write to the agent · / commands · @ files"
            },
            Style::new().dim(),
        )
    } else {
        Span::raw(view.shown)
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![Span::styled(PROMPT, prompt_style), shown])),
        area,
    );
    if app.focus == Focus::Input && app.picker.is_none() && !app.asking_share {
        frame.set_cursor_position((area.x + 2 + view.cursor_column, area.y));
    }
}

/// The end of the conversation that fits `height` rows, `app.scroll` rows up from the end: the
/// entries are laid out from the last one back, and only until the screen is full.
fn plan_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    if app.conversation.plan.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![Line::from("Plan".bold())];
    for entry in &app.conversation.plan {
        let mark = match entry.status.as_str() {
            "completed" => "☑",
            "in_progress" => "▸",
            _ => "☐",
        };
        lines.push(Line::from(cut(&format!(" {mark} {}", entry.content), width)));
    }
    lines
}

/// The jobs running now (an ended one is a note in the conversation).
fn job_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let running: Vec<&JobInfo> = app
        .conversation
        .jobs
        .iter()
        .filter(|j| j.state == JobState::Running)
        .collect();
    if running.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![Line::from(
        match running.len() {
            1 => "A job runs".to_string(),
            n => format!("{n} jobs run"),
        }
        .bold(),
    )];
    for job in running {
        lines.push(Line::from(cut(
            &format!(" ⟳ {} ({})", job.description, job.id),
            width,
        )));
    }
    lines
}

fn draw_completion(frame: &mut Frame, app: &App, above: Rect) {
    let choices = &app.completion.choices;
    let height = u16::try_from(choices.len()).unwrap_or(0).min(above.height);
    let area = Rect {
        x: above.x,
        y: above.y + above.height - height,
        width: above.width,
        height,
    };
    let width = usize::from(area.width);
    let lines: Vec<Line> = choices
        .iter()
        .enumerate()
        .map(|(i, choice)| {
            let text = cut(
                &format!(" {}  {}", choice.replace_with.trim_end(), choice.about),
                width,
            );
            if i == app.completion.selected {
                Line::from(text.reversed())
            } else {
                Line::from(text)
            }
        })
        .collect();
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).on_black(), area);
}

fn draw_picker(frame: &mut Frame, app: &App, over: Rect) {
    let Some(picker) = &app.picker else { return };
    frame.render_widget(Clear, over);
    let block = Block::bordered().title(format!(" {} · Enter picks, Esc closes ", picker.title));
    let inner = block.inner(over);
    frame.render_widget(block, over);
    let rows = usize::from(inner.height);
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    let width = usize::from(inner.width);
    let lines: Vec<Line> = picker
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, (_, label))| {
            let text = cut(label, width);
            if i == picker.selected {
                Line::from(text.reversed())
            } else {
                Line::from(text)
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// `~/w · model · edit · shared · link up · working`, cut to the width.
pub fn status_line(app: &App, width: usize, now: Instant) -> Line<'static> {
    let facts = &app.facts;
    let sharing = &facts.sharing;
    let shared = match (&sharing.refused, sharing.shared) {
        (_, true) => "shared".to_string(),
        (Some(why), false) => format!("local: {why}"),
        (None, false) => "local".to_string(),
    };
    let mut parts = vec![
        facts.folder.clone(),
        facts.model.clone(),
        app.conversation.mode.clone(),
        shared,
        if sharing.linked { "link up" } else { "no link" }.to_string(),
    ];
    if facts.hosted {
        parts.push("runtime in this terminal".to_string());
    }
    let state = if facts.disconnected {
        "the runtime is gone: /quit".to_string()
    } else if app.ctrl_c_pending(now) {
        "Ctrl-C again to leave".to_string()
    } else if app.conversation.busy {
        "working".to_string()
    } else {
        "ready".to_string()
    };
    parts.push(state);
    let text = parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    Line::from(Span::styled(
        cut(&text, width),
        Style::new().add_modifier(Modifier::REVERSED),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::app::{Facts, SharingView};
    use super::super::screen::Entry;
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::json;

    fn screen(app: &App, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| draw(frame, app, Instant::now())).unwrap();
        let buffer = terminal.backend().buffer().clone();
        let mut text = String::new();
        for y in 0..height {
            for x in 0..width {
                text.push_str(buffer[(x, y)].symbol());
            }
            text.push('\n');
        }
        text
    }

    fn facts() -> Facts {
        Facts {
            folder: "~/w".into(),
            model: "test-model".into(),
            effort: "default".into(),
            sharing: SharingView {
                shared: false,
                refused: Some("outside the roots".into()),
                linked: true,
            },
            hosted: false,
            disconnected: false,
        }
    }

    #[test]
    fn a_streamed_answer_a_tool_call_and_the_status_line_are_drawn() {
        let mut app = App::new(facts());
        app.conversation.mode = "edit".into();
        for update in [
            json!({ "sessionUpdate": "user_message_chunk", "content": { "type": "text", "text": "list files" } }),
            json!({ "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Run a command in ~/w",
                    "kind": "execute", "status": "completed", "rawInput": { "command": "ls" } }),
            json!({ "sessionUpdate": "agent_message_chunk", "content": { "type": "text", "text": "Here they are." } }),
        ] {
            app.conversation.apply_pushed(&update);
        }
        let text = screen(&app, 90, 12);
        assert!(text.contains("› list files"), "{text}");
        assert!(text.contains("● Run a command in ~/w"), "{text}");
        assert!(text.contains("$ ls"), "{text}");
        assert!(text.contains("Here they are."), "{text}");
        assert!(
            text.contains("~/w · test-model · edit · local: outside the roots · link up · ready"),
            "{text}"
        );
    }

    #[test]
    fn an_approval_card_shows_its_headline_reason_and_keys() {
        let mut app = App::new(facts());
        let request = serde_json::from_value(json!({
            "sessionId": "ses_1",
            "toolCall": { "toolCallId": "c9", "title": "Delete build in ~/w", "kind": "execute",
                          "status": "pending", "rawInput": { "command": "rm -r build" } },
            "options": [], "_meta": { "lembas": { "reason": "Edit mode asks before deleting.", "always": "rm" } }
        }))
        .unwrap();
        app.card_opened(&request, Instant::now());
        let text = screen(&app, 70, 16);
        for shown in [
            "Waiting for you",
            "Delete build in ~/w",
            "Edit mode asks before deleting.",
            "$ rm -r build",
            "d: Deny · a: Allow once · A: Allow for this chat",
        ] {
            assert!(text.contains(shown), "{shown} is not on the screen:\n{text}");
        }
    }

    #[test]
    fn a_terminal_too_small_gets_one_line_and_no_panic() {
        let app = App::new(facts());
        for (w, h) in [(1, 1), (10, 3), (29, 30), (80, 7), (0, 0)] {
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal.draw(|frame| draw(frame, &app, Instant::now())).unwrap();
        }
        assert!(screen(&app, 29, 4).starts_with("Make the terminal bigger"));
    }

    #[test]
    fn a_chat_of_thousands_of_messages_lays_out_only_its_end() {
        let mut app = App::new(facts());
        let entries = (0..5000)
            .map(|i| {
                if i % 2 == 0 {
                    Entry::You(format!("question {i}"))
                } else {
                    Entry::Agent(format!("answer {i} ").repeat(20))
                }
            })
            .collect();
        app.conversation.load(entries, 0);
        let started = Instant::now();
        let text = screen(&app, 100, 40);
        assert!(
            started.elapsed() < std::time::Duration::from_millis(200),
            "{:?}",
            started.elapsed()
        );
        assert!(text.contains("answer 4999"), "{text}");
        app.scroll = 30;
        assert!(!screen(&app, 100, 40).contains("answer 4999 answer 4999 answer 4999 answer 4999 answer 4999 answer 4999 answer 4999 answer 4999 answer 4999 answer 4999"));
    }

    #[test]
    fn scrolled_up_the_earlier_lines_show() {
        let mut app = App::new(facts());
        app.conversation
            .load((0..50).map(|i| Entry::Note(format!("note {i}"))).collect(), 0);
        assert!(screen(&app, 40, 10).contains("note 49"));
        app.scroll = 20;
        let text = screen(&app, 40, 10);
        assert!(!text.contains("note 49") && text.contains("note 29"), "{text}");
        app.scroll = 10_000;
        assert!(screen(&app, 40, 10).contains("note 0"));
    }
}
