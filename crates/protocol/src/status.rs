//! `_lembas/session/status` (capability `status`): where a session is and what it is doing, for a
//! client reattaching after a restart or a dropped link.

use serde::{Deserialize, Serialize};

use crate::jobs::JobInfo;
use crate::plan::Plan;
use crate::{SessionId, TurnId};

/// Who holds a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Held {
    /// This device's runtime has it open.
    Here,
    /// A terminal on this computer has it (the device has none of its own).
    Terminal,
    /// Nobody: it is only in the store, or not at all.
    None,
}

/// `_lembas/session/status`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    pub session_id: SessionId,
    pub exists: bool,
    pub held: Held,
    pub busy: bool,
    pub title: String,
    /// The turn running now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    /// The turns waiting, in order.
    pub queued: Vec<String>,
    /// The last turn that finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn_id: Option<TurnId>,
    pub plan: Option<Plan>,
    /// Running ones first.
    pub jobs: Vec<JobInfo>,
}

impl SessionStatus {
    /// A session this device does not have.
    pub fn unknown(session_id: &str) -> SessionStatus {
        SessionStatus {
            session_id: session_id.into(),
            exists: false,
            held: Held::None,
            busy: false,
            title: String::new(),
            turn_id: None,
            queued: Vec::new(),
            last_turn_id: None,
            plan: None,
            jobs: Vec::new(),
        }
    }
}
