//! What the web composer asks before a prompt is sent (capabilities `files` and `commands`): the
//! files an `@` may name and the commands a `/` may run, for a session or for a folder with no
//! session yet.

use serde::{Deserialize, Serialize};

use crate::{LembasMeta, SessionId};

/// `_lembas/files/search`'s and `_lembas/commands`' params: a session's folder, or a folder for a
/// composer with no session yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FolderParams {
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Absolute.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `_lembas/files/search`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FilesSearchParams {
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Absolute.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What was typed after `@`; empty for the recent files.
    pub query: String,
    #[serde(default)]
    pub limit: Option<u64>,
}

/// `_lembas/files/search`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FilesFound {
    /// The folder searched; every path is relative to it.
    pub root: String,
    pub files: Vec<FoundFile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FoundFile {
    pub path: String,
    /// `file` or `dir`.
    pub kind: String,
}

/// `_lembas/commands`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommandList {
    pub commands: Vec<AvailableCommand>,
}

/// ACP's `AvailableCommand`, with `_meta.lembas.kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AvailableCommand {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<CommandInput>,
    #[serde(rename = "_meta")]
    pub meta: LembasMeta<CommandKind>,
}

/// What the command takes after its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommandInput {
    pub hint: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommandKind {
    /// `builtin`, `custom` or `skill`.
    pub kind: String,
}
