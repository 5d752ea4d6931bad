//! "Allow for this chat": what the person's answers let a session do without asking again, read
//! out for the window's timeline and taken back one by one. They live with the session open in
//! this runtime (a chat reopened later asks again) and end when the limits narrow its mode.

use serde::{Deserialize, Serialize};

use super::session::SessionState;

/// One answer "Allow for this chat" in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Grant {
    /// `write` and `edit` in the session's project folder.
    Writes,
    /// Commands that match a permission pattern ("cargo test *").
    Command { pattern: String },
    /// One tool of an editor's MCP server, by the name the model calls it.
    Tool { name: String },
}

/// The grants in force, writes first, then in the order they were given.
pub fn in_force(state: &SessionState) -> Vec<Grant> {
    let writes = state.always_writes.then_some(Grant::Writes);
    let commands = state.always_bash.iter().map(|pattern| Grant::Command {
        pattern: pattern.clone(),
    });
    let tools = state
        .always_mcp
        .iter()
        .map(|name| Grant::Tool { name: name.clone() });
    writes.into_iter().chain(commands).chain(tools).collect()
}

/// Takes one grant back; false when it was not in force.
pub fn revoke(state: &mut SessionState, grant: &Grant) -> bool {
    match grant {
        Grant::Writes => std::mem::replace(&mut state.always_writes, false),
        Grant::Command { pattern } => remove(&mut state.always_bash, pattern),
        Grant::Tool { name } => remove(&mut state.always_mcp, name),
    }
}

fn remove(list: &mut Vec<String>, item: &str) -> bool {
    let before = list.len();
    // The same pattern given twice is one grant to the person: both go.
    list.retain(|p| p != item);
    list.len() != before
}
