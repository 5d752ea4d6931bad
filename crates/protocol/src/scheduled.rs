//! Scheduled work (capability `scheduled`, docs/protocol.md "Scheduled turns"): what the device
//! says of a scheduled run in `_meta.lembas.scheduled`, on the run's approval cards and on the
//! prompt's answer.

use serde::{Deserialize, Serialize};

use crate::Mode;

/// On a scheduled run's approval card: which run asks, and how long the card waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledCard {
    pub schedule_id: String,
    pub run_id: String,
    pub wait_s: u64,
}

/// How a scheduled run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// It answered.
    Ok,
    /// It answered `[SILENT]`: nothing to tell the person.
    Silent,
    /// It failed, or answered nothing.
    Failed,
    Cancelled,
}

/// On a scheduled prompt's answer: the run's outcome and its last reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub run_id: String,
    pub status: RunStatus,
    pub text: String,
    /// Why it failed; `null` otherwise.
    pub error: Option<String>,
}

/// `_lembas/monitor`'s params: a watch command run in a folder under the limits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MonitorParams {
    /// Absolute; inside the roots, trusted where trust is required.
    pub cwd: String,
    /// Judged as `bash` in that folder, in `mode`.
    pub command: String,
    /// The schedule's mode (`edit` when absent), lowered to `max_mode`.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Clamped to the decided range; absent, zero or negative is the default.
    #[serde(default)]
    pub timeout_s: Option<f64>,
    /// Which schedule and run asks: for the instance's own records; the device keeps none.
    #[serde(default)]
    pub schedule_id: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
}

/// `_lembas/monitor`'s result: how the watch ended and a hash of what it printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watched {
    /// `sha256:<hex>` of the output, a newline and the exit status (128 + signal when a signal
    /// ended it); null when the watch timed out.
    pub hash: Option<String>,
    /// The exit status; null when a signal ended it or it timed out.
    pub exit: Option<i32>,
    pub timed_out: bool,
    /// The start of the output decoded as UTF-8, invalid bytes replaced, at most `excerpt_chars`.
    pub excerpt: String,
    /// Whether the output had more than the excerpt shows.
    pub truncated: bool,
    /// The output's length in bytes: all of it, kept or not.
    pub bytes: u64,
    /// From starting bash to having the answer, stopping the group included.
    pub duration_ms: u64,
}
