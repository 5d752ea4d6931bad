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
