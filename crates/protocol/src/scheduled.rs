//! Scheduled work (capability `scheduled`, docs/protocol.md "Scheduled turns"): what the device
//! says of a scheduled run in `_meta.lembas.scheduled`, on the run's approval cards and on the
//! prompt's answer.

use serde::{Deserialize, Serialize};

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
