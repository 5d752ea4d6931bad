//! The limits the device tells the instance (docs/protocol.md "Limits"): in `_lembas/hello`, and
//! in `initialize`'s `_meta.lembas.limits`. The instance narrows what it offers to them; the device
//! enforces them whatever the instance does.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Limits {
    /// The folders remote work may use, as set (none while remote work is off).
    pub roots: Vec<String>,
    /// The most a remote session may be: `plan`, `manual`, `edit` or `auto`.
    pub max_mode: String,
    /// Whether a session's folder must be a trusted project: said in hello only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub require_trust: Option<bool>,
    /// Whether the device accepts scheduled work.
    pub scheduled: bool,
}

/// As the wire has it, on one line (`lembas status`, the activity log).
impl std::fmt::Display for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}
