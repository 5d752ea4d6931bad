//! What one line of the log holds: `{ "at_ms", "kind", …fields }`, the fields the event's own (its
//! serde form, so a line reads back as a [`DeviceEvent`]), less what must never be kept.

use serde::Serialize;
use std::mem::Discriminant;

use crate::events::{DeviceEvent, LinkState};

/// The kind of the line that says how many events were not written.
pub const MISSED: &str = "missed";

#[derive(Serialize)]
struct Line<'a> {
    at_ms: u64,
    #[serde(flatten)]
    event: &'a DeviceEvent,
}

#[derive(Serialize)]
struct Missed {
    at_ms: u64,
    kind: &'static str,
    count: u64,
}

/// Turns events into lines. It remembers the last link state written, so a device that cannot
/// reach its server writes "down" once, not a line at every redial.
#[derive(Default)]
pub struct Lines {
    last_link: Option<Discriminant<LinkState>>,
}

impl Lines {
    /// The line for `event` at `at_ms`, without its newline; `None` when it is not worth a line.
    pub fn line(&mut self, event: &DeviceEvent, at_ms: u64) -> Option<String> {
        let kept = self.kept(event)?;
        serde_json::to_string(&Line { at_ms, event: &kept })
            .map_err(|e| tracing::warn!("an activity line could not be made: {e}"))
            .ok()
    }

    /// The event as the log keeps it. Every kind is named so that a new one is a decision.
    fn kept(&mut self, event: &DeviceEvent) -> Option<DeviceEvent> {
        match event {
            DeviceEvent::Link { link, .. } => {
                // Dialling is not news; up, down and each final state are.
                if matches!(link, LinkState::Starting | LinkState::Connecting) {
                    return None;
                }
                let state = std::mem::discriminant(link);
                if self.last_link == Some(state) {
                    return None;
                }
                self.last_link = Some(state);
                Some(event.clone())
            }
            DeviceEvent::Watch { .. }
            | DeviceEvent::LimitsSent { .. }
            | DeviceEvent::TerminalOpened { .. }
            | DeviceEvent::TerminalClosed { .. }
            | DeviceEvent::WatchStarted { .. }
            | DeviceEvent::Refused { .. }
            | DeviceEvent::SessionOpened { .. }
            | DeviceEvent::Turn { .. }
            | DeviceEvent::ApprovalAsked { .. }
            | DeviceEvent::ApprovalSettled { .. }
            | DeviceEvent::SessionDeleted { .. }
            | DeviceEvent::ToolCall { .. }
            | DeviceEvent::Shown { .. } => Some(event.clone()),
        }
    }
}

/// The line saying `count` events were not written (the writer fell behind, or the file could not
/// be written).
pub fn missed(count: u64, at_ms: u64) -> String {
    let line = Missed {
        at_ms,
        kind: MISSED,
        count,
    };
    // Three plain fields: this cannot fail, and a line is never worth a panic.
    serde_json::to_string(&line).unwrap_or_default()
}
