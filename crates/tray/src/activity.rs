//! What the instance did on this computer, folded from the device's events: a bounded list for the
//! window's activity view, and what is going on right now for the tray's "Now:" line.

use std::collections::{BTreeSet, VecDeque};

use lembas_device::events::{DeviceEvent, LinkState};
use lembas_device::status::now_ms;
use serde::Serialize;

/// Enough to see what happened today without the list growing for ever.
const KEEP: usize = 200;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Unix milliseconds.
    pub at_ms: u64,
    /// `terminal_opened`, `terminal_closed`, `watch_started`, `watch`, `refused`, `link`, `error`,
    /// `session`, `turn`, `approval`, `tool`.
    pub kind: &'static str,
    pub text: String,
}

#[derive(Debug, Default)]
pub struct Activity {
    entries: VecDeque<Entry>,
    open_terminals: BTreeSet<String>,
    running_watches: usize,
    limits: Option<serde_json::Value>,
}

/// What remote work is going on now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Now {
    pub terminals: usize,
    pub watches: usize,
}

impl Now {
    pub fn is_idle(self) -> bool {
        self.terminals == 0 && self.watches == 0
    }
}

impl Activity {
    pub fn apply(&mut self, event: &DeviceEvent) {
        let (kind, text) = match event {
            DeviceEvent::TerminalOpened { terminal_id, cwd } => {
                self.open_terminals.insert(terminal_id.clone());
                ("terminal_opened", format!("Terminal opened in {cwd}"))
            }
            DeviceEvent::TerminalClosed { terminal_id } => {
                self.open_terminals.remove(terminal_id);
                ("terminal_closed", "Terminal closed".to_string())
            }
            DeviceEvent::WatchStarted { cwd, command } => {
                self.running_watches += 1;
                ("watch_started", format!("Watching `{command}` in {cwd}"))
            }
            DeviceEvent::Watch {
                cwd,
                command,
                outcome,
            } => {
                self.running_watches = self.running_watches.saturating_sub(1);
                (
                    "watch",
                    format!("Watched `{command}` in {cwd}: {}", describe_outcome(outcome)),
                )
            }
            DeviceEvent::Refused { method, reason } => ("refused", format!("Refused {method}: {reason}")),
            DeviceEvent::SessionOpened { cwd, model, .. } => {
                ("session", format!("Agent session opened in {cwd} on {model}"))
            }
            DeviceEvent::Turn {
                state, stop_reason, ..
            } if state == "end" => (
                "turn",
                match stop_reason {
                    Some(why) => format!("Agent turn ended ({why})"),
                    None => "Agent turn failed".to_string(),
                },
            ),
            DeviceEvent::Turn { .. } => ("turn", "Agent turn started".to_string()),
            DeviceEvent::ApprovalAsked { title, reason, .. } => {
                ("approval", format!("Approval asked: {title} ({reason})"))
            }
            DeviceEvent::ApprovalSettled { outcome, .. } => ("approval", format!("Approval {outcome}")),
            DeviceEvent::ToolCall {
                tool, title, outcome, ..
            } => ("tool", format!("Tool {tool} ({title}): {outcome}")),
            DeviceEvent::SessionDeleted { session_id } => {
                ("session", format!("Agent session {session_id} deleted"))
            }
            DeviceEvent::LimitsSent { limits } => {
                self.limits = Some(limits.clone());
                return;
            }
            DeviceEvent::Link { link, .. } => {
                if *link == LinkState::Linked {
                    return;
                }
                // Everything a link started ends with it (shells hung up, watches cut short).
                let cut = !self.now().is_idle();
                self.open_terminals.clear();
                self.running_watches = 0;
                if !cut {
                    return;
                }
                (
                    "link",
                    "The link ended: its terminals and watches ended with it".to_string(),
                )
            }
        };
        self.note(kind, text);
    }

    /// Adds a line of the app's own (a tray action that failed, say).
    pub fn note(&mut self, kind: &'static str, text: String) {
        if self.entries.len() == KEEP {
            self.entries.pop_front();
        }
        self.entries.push_back(Entry {
            at_ms: now_ms(),
            kind,
            text,
        });
    }

    pub fn now(&self) -> Now {
        Now {
            terminals: self.open_terminals.len(),
            watches: self.running_watches,
        }
    }

    /// Newest first, as the window shows them.
    pub fn entries(&self) -> Vec<Entry> {
        self.entries.iter().rev().cloned().collect()
    }

    /// The limits as the instance was last told them, if this app's runtime told it.
    pub fn limits(&self) -> Option<&serde_json::Value> {
        self.limits.as_ref()
    }
}

/// One phrase for a watch's outcome (`exit`, `timed_out` as the monitor reports them).
fn describe_outcome(outcome: &serde_json::Value) -> String {
    if outcome.get("timed_out").and_then(|v| v.as_bool()) == Some(true) {
        return "timed out".into();
    }
    match outcome.get("exit").and_then(|v| v.as_i64()) {
        Some(0) => "succeeded".into(),
        Some(code) => format!("failed (exit {code})"),
        None => "ended by a signal".into(),
    }
}

/// The tray's live line.
pub fn now_line(now: Now) -> String {
    if now.is_idle() {
        return "Now: no remote work on this computer".into();
    }
    let mut parts = Vec::new();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if now.terminals > 0 {
        parts.push(plural(now.terminals, "terminal open", "terminals open"));
    }
    if now.watches > 0 {
        parts.push(plural(now.watches, "watch running", "watches running"));
    }
    format!("Now: {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn opened(id: &str) -> DeviceEvent {
        DeviceEvent::TerminalOpened {
            terminal_id: id.into(),
            cwd: "/work".into(),
        }
    }

    #[test]
    fn counts_open_terminals_and_running_watches() {
        let mut a = Activity::default();
        a.apply(&opened("t1"));
        a.apply(&opened("t2"));
        a.apply(&DeviceEvent::WatchStarted {
            cwd: "/work".into(),
            command: "make".into(),
        });
        assert_eq!(
            a.now(),
            Now {
                terminals: 2,
                watches: 1
            }
        );
        assert_eq!(now_line(a.now()), "Now: 2 terminals open, 1 watch running");
        a.apply(&DeviceEvent::TerminalClosed {
            terminal_id: "t1".into(),
        });
        a.apply(&DeviceEvent::Watch {
            cwd: "/work".into(),
            command: "make".into(),
            outcome: json!({ "exit": 2, "timed_out": false }),
        });
        assert_eq!(now_line(a.now()), "Now: 1 terminal open");
        let texts: Vec<_> = a.entries().into_iter().map(|e| e.text).collect();
        assert_eq!(texts[0], "Watched `make` in /work: failed (exit 2)");
        assert_eq!(texts.len(), 5);
    }

    #[test]
    fn a_link_that_ends_ends_its_work() {
        let mut a = Activity::default();
        a.apply(&opened("t1"));
        a.apply(&DeviceEvent::Link {
            link: LinkState::Offline { retry_in_ms: 500 },
            error: None,
        });
        assert!(a.now().is_idle());
        assert_eq!(now_line(a.now()), "Now: no remote work on this computer");
        assert_eq!(a.entries()[0].kind, "link");
    }

    #[test]
    fn keeps_a_bounded_list() {
        let mut a = Activity::default();
        for i in 0..(KEEP + 10) {
            a.apply(&opened(&i.to_string()));
        }
        assert_eq!(a.entries().len(), KEEP);
    }
}
