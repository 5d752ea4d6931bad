//! The device's own notifications about its sessions and cards, beside ACP's `session/update`:
//! `_lembas/session/deleted`, `_lembas/permission/settled`, and ACP's `$/cancel_request` for a
//! client that takes no `_lembas/*`.

use serde::{Deserialize, Serialize};

use crate::SessionId;
use serde_json::Value;

/// `_lembas/session/deleted`: a session the instance had is gone from this computer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDeleted {
    pub session_id: SessionId,
}

/// `_lembas/session/announce`: a chat a terminal on this computer holds is shared (sent when it
/// is shared and again on every link).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionAnnounce {
    pub session_id: SessionId,
    pub cwd: String,
    pub title: String,
    pub model: String,
    /// The session's model is this link's instance's.
    pub instance: bool,
    pub mode: crate::Mode,
    pub effort: crate::Effort,
    pub busy: bool,
    /// Always `terminal`.
    pub origin: String,
}

/// `_lembas/session/left`: the terminal let go of a shared chat; `available` when the device can
/// open it from the store at the next prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionLeft {
    pub session_id: SessionId,
    pub available: bool,
}

/// `_lembas/permission/settled`: a card was answered elsewhere (on this computer, or by its
/// timeout), so the client takes its own down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionSettled {
    pub session_id: SessionId,
    pub tool_call_id: String,
}

/// `$/cancel_request`: the device no longer waits for the answer to its request `request_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelRequest {
    /// The JSON-RPC id as the device sent it (a number or a string).
    pub request_id: Value,
}
