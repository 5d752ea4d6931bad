//! Remote terminals (capability `terminal`, docs/protocol.md "Terminals"): what `_lembas/terminal/*`
//! carry, the device's answers and its `output` and `exit` notifications.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `_lembas/terminal/open`'s params: where, and how big (the device clamps the size).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOpenParams {
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub cols: Option<f64>,
    #[serde(default)]
    pub rows: Option<f64>,
}

/// `_lembas/terminal/open`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOpened {
    pub terminal_id: String,
    /// The folder the shell started in, resolved.
    pub cwd: String,
    pub cols: u16,
    pub rows: u16,
    /// `bash`, `zsh`, `fish` or another shell's name.
    pub shell: String,
    /// Whether the shell's prompt marks (the shell integration) are on.
    pub integration: bool,
}

/// `_lembas/terminal/input`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalInputParams {
    pub terminal_id: String,
    pub data: String,
}

/// `_lembas/terminal/resize`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalResizeParams {
    pub terminal_id: String,
    pub cols: f64,
    pub rows: f64,
}

/// `_lembas/terminal/close`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalCloseParams {
    pub terminal_id: String,
}

/// `_lembas/terminal/output`: what the shell printed, base64.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalOutput {
    pub terminal_id: String,
    pub data: String,
}

/// `_lembas/terminal/exit`: the shell ended; its exit status, none when a signal ended it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalExit {
    pub terminal_id: String,
    pub code: Option<i32>,
}
