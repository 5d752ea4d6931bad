//! What the instance did on this computer, folded from the device's events: a bounded list for the
//! window's activity view, and what is going on right now for the tray's "Now:" line.

use lembas_protocol::event::TaskState;
use lembas_protocol::limits::Limits;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use crate::events::{DeviceEvent, LinkState, what_a_call_did};
use crate::paths::home_shortened;
use crate::status::{Awake, now_ms};
use serde::Serialize;

/// Enough to see what happened today without the list growing for ever.
const KEEP: usize = 200;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
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
    /// Agent turns running now: turn id → the session's folder.
    running_turns: BTreeMap<String, String>,
    limits: Option<Limits>,
}

/// What remote work is going on now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Now {
    pub terminals: usize,
    pub watches: usize,
    /// Agent turns running (a chat at work), on the link or not.
    #[serde(default)]
    pub turns: usize,
}

impl Now {
    pub fn is_idle(self) -> bool {
        self.terminals == 0 && self.watches == 0 && self.turns == 0
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
                    format!("Watched `{command}` in {cwd}: {}", outcome.phrase()),
                )
            }
            DeviceEvent::Refused { method, reason } => ("refused", format!("Refused {method}: {reason}")),
            DeviceEvent::SessionOpened { cwd, model, .. } => {
                ("session", format!("Agent session opened in {cwd} on {model}"))
            }
            DeviceEvent::Turn {
                state,
                stop_reason,
                turn_id,
                ..
            } if *state == TaskState::End => {
                self.running_turns.remove(turn_id);
                (
                    "turn",
                    match stop_reason {
                        Some(why) => format!("Agent turn ended ({why})"),
                        None => "Agent turn failed".to_string(),
                    },
                )
            }
            DeviceEvent::Turn { turn_id, cwd, .. } => {
                self.running_turns.insert(turn_id.clone(), cwd.clone());
                match cwd.as_str() {
                    "" => ("turn", "Agent turn started".to_string()),
                    cwd => ("turn", format!("Agent turn started in {cwd}")),
                }
            }
            DeviceEvent::ApprovalAsked { title, reason, .. } => {
                ("approval", format!("Approval asked: {title} ({reason})"))
            }
            DeviceEvent::ApprovalSettled { outcome, .. } => ("approval", format!("Approval {outcome}")),
            DeviceEvent::ToolCall {
                tool,
                title,
                outcome,
                command,
                changed_files,
                ..
            } => {
                let did = what_a_call_did(outcome, command.as_deref(), changed_files)
                    .map(|did| format!("; {did}"))
                    .unwrap_or_default();
                ("tool", format!("Tool {tool} ({title}): {outcome}{did}"))
            }
            DeviceEvent::SessionDeleted { session_id } => {
                ("session", format!("Agent session {session_id} deleted"))
            }
            DeviceEvent::Shown { path, .. } => ("shown", format!("Shown: {path}")),
            DeviceEvent::LimitsSent { limits } => {
                self.limits = Some(limits.clone());
                return;
            }
            DeviceEvent::Link { link, .. } => {
                if *link == LinkState::Linked {
                    return;
                }
                // Everything a link started ends with it (shells hung up, watches cut short);
                // agent turns are the runtime's and go on.
                let cut = self.running_watches > 0 || !self.open_terminals.is_empty();
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
            turns: self.running_turns.len(),
        }
    }

    /// The folders agent turns work in now, each once.
    pub fn working_folders(&self) -> Vec<String> {
        let folders: BTreeSet<&String> = self.running_turns.values().filter(|f| !f.is_empty()).collect();
        folders.into_iter().cloned().collect()
    }

    /// Newest first, as the window shows them.
    pub fn entries(&self) -> Vec<Entry> {
        self.entries.iter().rev().cloned().collect()
    }

    /// The limits as the instance was last told them, if this app's runtime told it.
    pub fn limits(&self) -> Option<&Limits> {
        self.limits.as_ref()
    }
}

/// The tray's live line; `folders`: where agent turns work, said as `~/…` under `home`; `awake`:
/// whether the computer is kept awake for it (the runtime's status).
pub fn now_line(now: Now, folders: &[String], home: &Path, awake: Option<&Awake>) -> String {
    let held = awake.filter(|a| a.held);
    if now.is_idle() {
        // Jobs are not counted in `now`: the keep-awake reason names them.
        return match held {
            Some(awake) => format!("Now: {}, keeping the computer awake", awake.why),
            None => "Now: no remote work on this computer".into(),
        };
    }
    let mut parts = Vec::new();
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if now.turns > 0 {
        let mut working = plural(now.turns, "agent working", "agents working");
        if !folders.is_empty() {
            let shown: Vec<String> = folders
                .iter()
                .map(|folder| home_shortened(Path::new(folder), home))
                .collect();
            working.push_str(&format!(" in {}", shown.join(", ")));
        }
        parts.push(working);
    }
    if now.terminals > 0 {
        parts.push(plural(now.terminals, "terminal open", "terminals open"));
    }
    if now.watches > 0 {
        parts.push(plural(now.watches, "watch running", "watches running"));
    }
    let awake = if held.is_some() {
        ", keeping the computer awake"
    } else {
        ""
    };
    format!("Now: {}{awake}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::prompt::StopReason;

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
                watches: 1,
                turns: 0
            }
        );
        assert_eq!(
            now_line(a.now(), &[], Path::new("/home/p"), None),
            "Now: 2 terminals open, 1 watch running"
        );
        a.apply(&DeviceEvent::TerminalClosed {
            terminal_id: "t1".into(),
        });
        a.apply(&DeviceEvent::Watch {
            cwd: "/work".into(),
            command: "make".into(),
            outcome: crate::events::WatchEnd {
                exit: Some(2),
                ..Default::default()
            },
        });
        assert_eq!(
            now_line(a.now(), &[], Path::new("/home/p"), None),
            "Now: 1 terminal open"
        );
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
        assert_eq!(
            now_line(a.now(), &[], Path::new("/home/p"), None),
            "Now: no remote work on this computer"
        );
        assert_eq!(a.entries()[0].kind, "link");
    }

    fn turn(id: &str, state: TaskState, cwd: &str) -> DeviceEvent {
        DeviceEvent::Turn {
            session_id: format!("ses_{id}").into(),
            turn_id: id.into(),
            state,
            stop_reason: (state == TaskState::End).then_some(StopReason::EndTurn),
            cwd: cwd.into(),
        }
    }

    /// An agent at work is remote work: the line says so and where, through a dropped link too.
    #[test]
    fn agent_turns_count_and_say_where() {
        let mut a = Activity::default();
        a.apply(&turn("t1", TaskState::Start, "/home/p/work/a"));
        a.apply(&turn("t2", TaskState::Start, "/home/p/work/b"));
        a.apply(&turn("t3", TaskState::Start, "/home/p/work/a"));
        assert_eq!(a.now().turns, 3);
        assert!(!a.now().is_idle());
        assert_eq!(
            now_line(a.now(), &a.working_folders(), Path::new("/home/p"), None),
            "Now: 3 agents working in ~/work/a, ~/work/b"
        );
        a.apply(&DeviceEvent::Link {
            link: LinkState::Offline { retry_in_ms: 500 },
            error: None,
        });
        a.apply(&turn("t2", TaskState::End, "/home/p/work/b"));
        a.apply(&turn("t3", TaskState::End, "/home/p/work/a"));
        assert_eq!(
            now_line(a.now(), &a.working_folders(), Path::new("/elsewhere"), None),
            "Now: 1 agent working in /home/p/work/a",
            "a folder outside the home is said whole"
        );
        a.apply(&turn("t1", TaskState::End, "/home/p/work/a"));
        assert!(a.now().is_idle());
    }

    /// The line says when the computer is kept awake, and for a job alone (not in `now`) why.
    #[test]
    fn the_line_says_the_computer_is_kept_awake() {
        let held = |why: &str| Awake {
            held: true,
            why: why.into(),
        };
        let mut a = Activity::default();
        assert_eq!(
            now_line(
                a.now(),
                &[],
                Path::new("/home/p"),
                Some(&held("1 job running, on mains power"))
            ),
            "Now: 1 job running, on mains power, keeping the computer awake"
        );
        let let_sleep = Awake {
            held: false,
            why: "1 job running; remote.keep_awake is never".into(),
        };
        assert_eq!(
            now_line(a.now(), &[], Path::new("/home/p"), Some(&let_sleep)),
            "Now: no remote work on this computer"
        );
        a.apply(&turn("t1", TaskState::Start, "/w"));
        assert_eq!(
            now_line(
                a.now(),
                &a.working_folders(),
                Path::new("/home/p"),
                Some(&held("1 agent turn running"))
            ),
            "Now: 1 agent working in /w, keeping the computer awake"
        );
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
