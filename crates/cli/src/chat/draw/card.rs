//! The card that waits drawn: the share question, an approval (the device's headline, why, the
//! agent's words, the command or change), a question or a plan, and its keys on the last line.

use lembas_protocol::update::ToolKind;
use ratatui::style::{Color, Stylize};
use ratatui::text::{Line, Span};

use super::super::app::{App, Focus};
use super::super::cards::CardKind;
use super::super::text::{cut, wrap};
use super::conversation::{DETAIL_SHOWN, detail_style};

pub(super) fn card_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    if app.asking_share {
        return vec![
            Line::from("─".repeat(width).fg(Color::Yellow)),
            Line::from(
                cut(
                    "Share chats in this folder with your LLeMbas? It asks once for each folder.",
                    width,
                )
                .bold(),
            ),
            Line::from(
                "y: Share (it sees and can answer this chat) · n: Keep it on this computer".reversed(),
            ),
        ];
    }
    let Some(card) = app.cards.front() else {
        return Vec::new();
    };
    let inner = width.saturating_sub(2);
    let mut lines = vec![Line::from(
        cut(
            &format!(
                "── Waiting for you{} ",
                if app.cards.len() > 1 {
                    format!(" (1 of {})", app.cards.len())
                } else {
                    String::new()
                }
            ),
            width,
        )
        .fg(Color::Yellow),
    )];
    match &card.kind {
        CardKind::Approval {
            headline,
            reason,
            purpose,
            always,
            detail,
        } => {
            lines.extend(
                wrap(headline, inner)
                    .into_iter()
                    .map(|row| Line::from(row.bold())),
            );
            lines.extend(wrap(reason, inner).into_iter().map(Line::raw));
            if let Some(purpose) = purpose.as_ref().filter(|p| *p != headline) {
                lines.extend(
                    wrap(&format!("The agent says: {purpose}"), inner)
                        .into_iter()
                        .map(|row| Line::from(row.dim())),
                );
            }
            for row in detail.iter().take(DETAIL_SHOWN) {
                lines.push(Line::from(Span::styled(
                    cut(&format!("  {row}"), width),
                    detail_style(row, ToolKind::Other),
                )));
            }
            if !always.is_empty() {
                lines.push(Line::from(
                    cut(&format!("Allow for this chat covers: {always}"), width).dim(),
                ));
            }
        }
        CardKind::Question { why, typed, .. } => {
            if let Some(why) = why {
                lines.extend(wrap(why, inner).into_iter().map(|row| Line::from(row.dim())));
            }
            if let Some(question) = card.question() {
                lines.extend(
                    wrap(&format!("{}: {}", question.header, question.question), inner)
                        .into_iter()
                        .map(|row| Line::from(row.bold())),
                );
                let ticked = match &card.kind {
                    CardKind::Question { ticked, .. } => ticked.clone(),
                    _ => Vec::new(),
                };
                for (i, option) in question.options.iter().enumerate().take(9) {
                    let tick = match (question.multiple, ticked.get(i)) {
                        (true, Some(true)) => "[x] ",
                        (true, _) => "[ ] ",
                        _ => "",
                    };
                    let about = option
                        .description
                        .as_deref()
                        .map(|d| format!(" — {d}"))
                        .unwrap_or_default();
                    lines.push(Line::raw(cut(
                        &format!(" {}. {tick}{}{about}", i + 1, option.label),
                        width,
                    )));
                }
                lines.push(Line::raw(format!(
                    " ✎ {}",
                    typed.view(u16::try_from(inner).unwrap_or(80)).shown
                )));
            }
        }
        CardKind::Plan { path, text, revising } => {
            if !path.is_empty() {
                lines.push(Line::from(cut(&format!("A plan ({path})"), width).bold()));
            }
            lines.extend(wrap(text, inner).into_iter().take(20).map(Line::raw));
            if let Some(feedback) = revising {
                lines.push(Line::raw(format!(
                    " ✎ {}",
                    feedback.view(u16::try_from(inner).unwrap_or(80)).shown
                )));
            }
        }
    }
    let keys = if app.focus == Focus::Card {
        card.keys()
    } else {
        "Tab: answer the card (what you typed is kept)".to_string()
    };
    lines.push(Line::from(cut(&keys, width).reversed()));
    lines
}
