//! The entry points that take a path, and how each is asked. One more tool is a name in
//! [`TOOLS`] and its arguments in [`tool_arguments`].

use serde_json::{Value, json};

/// Requests that take a folder; each refusal is -32602 with the reason as its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FolderEntry {
    Directories,
    SessionNew,
    TerminalOpen,
    Monitor,
}

pub const FOLDER_ENTRIES: [FolderEntry; 4] = [
    FolderEntry::Directories,
    FolderEntry::SessionNew,
    FolderEntry::TerminalOpen,
    FolderEntry::Monitor,
];

impl FolderEntry {
    pub fn request(self, folder: &str) -> (&'static str, Value) {
        match self {
            FolderEntry::Directories => ("_lembas/directories", json!({ "path": folder })),
            FolderEntry::SessionNew => (
                "session/new",
                json!({ "cwd": folder, "mcpServers": [],
                        "_meta": { "mode": "auto", "lembas_model": lembas_peer::DEFAULT_MODEL } }),
            ),
            FolderEntry::TerminalOpen => ("_lembas/terminal/open", json!({ "cwd": folder })),
            FolderEntry::Monitor => (
                "_lembas/monitor",
                json!({ "cwd": folder, "command": "cat secret.txt", "mode": "auto" }),
            ),
        }
    }
}

/// The tools the model is offered that take a path (crates/device/src/tools/), called in this
/// order in one model step; `write` last, so the others meet an odd name inside the project before
/// it creates it. Add `show` here.
pub const TOOLS: [&str; 7] = ["read", "edit", "ls", "glob", "grep", "write", "show"];

/// A call of `tool` on `path`. Nothing in the arguments is secret: a marker found in what the peer
/// received came out of a file.
pub fn tool_arguments(tool: &str, path: &str) -> Value {
    match tool {
        "write" => json!({ "path": path, "content": "PWNED\n" }),
        "edit" => json!({ "path": path, "old_string": "outside", "new_string": "PWNED" }),
        "glob" => json!({ "path": path, "pattern": "**" }),
        // Every line matches: a leak would show the marker.
        "grep" => json!({ "path": path, "pattern": "." }),
        _ => json!({ "path": path }),
    }
}

/// Whether a successful call is acceptable for an attempt that is only an odd name inside the
/// project: a write creates that name there, and a show after it (same turn) shows what it wrote.
pub fn may_land_inside(tool: &str) -> bool {
    tool == "write" || tool == "show"
}
