//! An approval card as a desktop notification: its summary and body, and when it turns urgent
//! (the card's last minute before it denies by itself).

pub use super::pending::{ApprovalCard, Detail};
use crate::tools::shortened;

/// The most of a command or a change a notification shows; the window shows it all.
const NOTICE_DETAIL_CHARS: usize = 300;

/// A desktop notification's text for a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub summary: String,
    pub body: String,
    /// In the card's last minute: shown as critical, to reach a person in Do Not Disturb.
    pub urgent: bool,
}

/// How long before a card denies by itself its notice turns critical.
pub const LAST_MINUTE_MS: u64 = 60_000;

impl ApprovalCard {
    pub fn notice(&self) -> Notice {
        let headline = &self.facts.headline;
        let summary = match (&self.scheduled, &self.detail) {
            (Some(s), _) => match &s.title {
                Some(title) => format!("Scheduled “{title}” asks: {headline}"),
                None => format!("A scheduled run asks: {headline}"),
            },
            (None, Detail::Plan { .. }) => "LLeMbas asks you to approve a plan".to_string(),
            (None, _) => format!("LLeMbas asks: {headline}"),
        };
        let mut body = match &self.detail {
            Detail::Command { command } => format!("Run: {}", cut(command)),
            Detail::Change { path, diff } => format!("Change {path}\n{}", cut(&without_file_lines(diff))),
            Detail::Arguments { json } => cut(json),
            Detail::Plan { path, text } => format!("Plan in {path}\n{}", cut(text)),
        };
        if !self.facts.risks.is_empty() {
            let risks: Vec<&str> = self.facts.risks.iter().map(|r| r.words()).collect();
            body.push_str(&format!("\nIt {}.", risks.join(", ")));
        }
        if !self.reason.is_empty() {
            body.push_str(&format!("\n{}", self.reason));
        }
        if let Some(says) = &self.facts.agent_says {
            body.push_str(&format!("\nThe agent says: {}", cut(says)));
        }
        if let Some(s) = &self.scheduled {
            body.push_str(&format!(
                "\nWaits {} for an answer, then it is denied.",
                wait_words(s.wait_s)
            ));
        }
        Notice {
            summary,
            body,
            urgent: false,
        }
    }

    /// When the card's last minute begins (Unix ms), for a card that denies by itself.
    pub fn last_minute_ms(&self) -> Option<u64> {
        let deadline = self.facts.deadline_ms.or_else(|| {
            let wait_ms = self.scheduled.as_ref()?.wait_s.saturating_mul(1000);
            Some(self.asked_ms.saturating_add(wait_ms))
        })?;
        Some(deadline.saturating_sub(LAST_MINUTE_MS))
    }
}

/// A diff without its `---`/`+++` lines: a notice names the file already.
fn without_file_lines(diff: &str) -> String {
    diff.lines()
        .filter(|l| !l.starts_with("--- ") && !l.starts_with("+++ "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// At most [`NOTICE_DETAIL_CHARS`] characters, with an ellipsis where cut.
fn cut(text: &str) -> String {
    shortened(text, NOTICE_DETAIL_CHARS)
}

/// `30 minutes`, `1 hour`, `90 seconds`: a schedule's wait as a person says it.
pub fn wait_words(seconds: u64) -> String {
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    if seconds > 0 && seconds.is_multiple_of(3600) {
        plural(seconds / 3600, "hour")
    } else if seconds > 0 && seconds.is_multiple_of(60) {
        plural(seconds / 60, "minute")
    } else {
        plural(seconds, "second")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::desktop_view::pending::ScheduledRun;
    use crate::engine::Card;
    use crate::events::ScheduledAsk;
    use serde_json::Value;

    /// A card as the runtime this app runs makes it.
    fn of(card: &Card) -> ApprovalCard {
        ApprovalCard::of(card, card.asked_at_ms)
    }

    #[test]
    fn the_last_minute_is_a_minute_before_the_card_denies_by_itself() {
        let request = Card::approval(
            "execute",
            json!({ "command": "ls" }),
            json!({ "reason": "", "always": "" }),
        );
        let mut view = of(&Card::of_request(request, 1_000_000, None));
        assert_eq!(view.last_minute_ms(), None, "no deadline: never urgent");
        view.facts.deadline_ms = Some(1_300_000);
        assert_eq!(view.last_minute_ms(), Some(1_240_000));
        view.facts.deadline_ms = None;
        view.scheduled = Some(ScheduledRun {
            schedule_id: "s1".into(),
            run_id: "r1".into(),
            title: Some("t".into()),
            wait_s: 30,
        });
        assert_eq!(
            view.last_minute_ms(),
            Some(970_000),
            "a short wait is all last minute"
        );
        assert!(
            !view.notice().urgent,
            "the notice says normal; the tray decides when"
        );
    }
    use serde_json::json;

    fn card(kind: &str, raw: Value, scheduled: Option<ScheduledAsk>) -> Card {
        let mut meta = json!({ "reason": "Commands ask in manual mode.", "always": "" });
        if let Some(ask) = &scheduled {
            // The schedule's ids as the runtime puts them in the request.
            meta["scheduled"] = json!({ "schedule_id": "s1", "run_id": "r1", "wait_s": ask.wait_s });
        }
        Card::of_request(Card::approval(kind, raw, meta), 5, scheduled)
    }

    #[test]
    fn a_command_card_says_the_command_and_why() {
        let view = of(&card("execute", json!({ "command": "rm -r build" }), None));
        assert_eq!(
            view.detail,
            Detail::Command {
                command: "rm -r build".into()
            }
        );
        let notice = view.notice();
        assert_eq!(notice.summary, "LLeMbas asks: Tidy up");
        assert_eq!(notice.body, "Run: rm -r build\nCommands ask in manual mode.");
    }

    #[test]
    fn an_edit_shows_its_change_and_a_write_its_content() {
        let edit = of(&card(
            "edit",
            json!({ "path": "a.txt", "old_string": "one\ntwo", "new_string": "three" }),
            None,
        ));
        assert_eq!(
            edit.detail,
            Detail::Change {
                path: "a.txt".into(),
                diff: "-one\n-two\n+three".into()
            }
        );
        let write = of(&card("edit", json!({ "path": "b.txt", "content": "hi" }), None));
        assert_eq!(
            write.detail,
            Detail::Change {
                path: "b.txt".into(),
                diff: "+hi".into()
            }
        );
        let other = of(&card("fetch", json!({ "url": 3 }), None));
        assert!(matches!(other.detail, Detail::Arguments { ref json } if json.contains("\"url\": 3")));
    }

    #[test]
    fn the_devices_unified_diff_is_the_change_and_the_notice_keeps_its_hunks() {
        let mut edit = card(
            "edit",
            json!({ "path": "a.txt", "old_string": "two", "new_string": "2" }),
            None,
        );
        let unified = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three";
        edit.facts.unified_diff = Some(unified.into());
        let view = of(&edit);
        assert_eq!(
            view.detail,
            Detail::Change {
                path: "a.txt".into(),
                diff: unified.into()
            }
        );
        assert!(
            view.notice()
                .body
                .starts_with("Change a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"),
            "{}",
            view.notice().body
        );
    }

    #[test]
    fn a_scheduled_card_names_its_schedule_and_wait() {
        let scheduled = ScheduledAsk {
            title: "Nightly report".into(),
            wait_s: 1800,
        };
        let notice = of(&card("execute", json!({ "command": "make" }), Some(scheduled))).notice();
        assert_eq!(notice.summary, "Scheduled “Nightly report” asks: Tidy up");
        assert!(
            notice
                .body
                .ends_with("Waits 30 minutes for an answer, then it is denied."),
            "{}",
            notice.body
        );
    }

    #[test]
    fn long_details_are_cut_in_the_notice_only() {
        let long = "x".repeat(1000);
        let view = of(&card("execute", json!({ "command": long }), None));
        assert_eq!(
            view.notice().body.chars().count(),
            "Run: ".len() + NOTICE_DETAIL_CHARS + 1 + 1 + 28
        );
        assert!(matches!(view.detail, Detail::Command { ref command } if command.len() == 1000));
    }

    #[test]
    fn a_plan_card_shows_the_plan_and_what_allow_means() {
        let plan = Card::of_request(
            json!({ "sessionId": "ses_1", "toolCallId": "call_plan", "path": ".agent/plans/p.md", "text": "1. Tidy",
                    "_meta": { "lembas": { "patient": false } } }),
            5,
            None,
        );
        let view = ApprovalCard::of(&plan, 5);
        assert_eq!(view.facts.headline, "Approve the plan");
        assert_eq!(
            view.detail,
            Detail::Plan {
                path: ".agent/plans/p.md".into(),
                text: "1. Tidy".into()
            }
        );
        let notice = view.notice();
        assert_eq!(notice.summary, "LLeMbas asks you to approve a plan");
        assert!(
            notice
                .body
                .starts_with("Plan in .agent/plans/p.md\n1. Tidy\nAllow approves it in manual mode")
        );
    }

    #[test]
    fn waits_read_as_a_person_says_them() {
        assert_eq!(wait_words(60), "1 minute");
        assert_eq!(wait_words(1800), "30 minutes");
        assert_eq!(wait_words(7200), "2 hours");
        assert_eq!(wait_words(90), "90 seconds");
        assert_eq!(wait_words(0), "0 seconds");
    }
}
