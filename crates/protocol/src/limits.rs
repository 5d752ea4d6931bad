//! What the device says of itself when a link opens: `_lembas/hello` ([`Hello`]), and the limits
//! (docs/protocol.md "Limits") in it and in `initialize`'s `_meta.lembas.limits`. The instance
//! narrows what it offers to them; the device enforces them whatever the instance does.

use serde::{Deserialize, Serialize};

use crate::Mode;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Limits {
    /// The folders remote work may use, as set (none while remote work is off).
    pub roots: Vec<String>,
    /// The most a remote session may be.
    pub max_mode: Mode,
    /// Whether a session's folder must be a trusted project: said in hello only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub require_trust: Option<bool>,
    /// Whether the device accepts scheduled work.
    pub scheduled: bool,
}

/// `_lembas/hello`'s params, the link's first message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The link protocol's version (3).
    pub protocol: u32,
    /// The device's own version.
    pub version: String,
    /// The harness spec the device implements.
    pub harness_spec: String,
    pub device: DeviceInfo,
    pub limits: Limits,
}

/// Which computer this is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub host: String,
    /// `linux`, `macos`, `windows`.
    pub platform: String,
}

/// As the wire has it, on one line (`lembas status`, the activity log).
impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}
