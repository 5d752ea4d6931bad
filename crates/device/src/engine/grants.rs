//! "Allow for this chat": what the person's answers let a session do without asking again, read
//! out for the window's timeline and taken back one by one. They live with the session open in
//! this runtime (a chat reopened later asks again) and end when the limits narrow its mode.

use serde::{Deserialize, Serialize};

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

/// The grants a session holds: changed only through these methods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Every `write` and `edit` in the project folder.
    writes: bool,
    /// Permission patterns of commands ("cargo test *").
    commands: Vec<String>,
    /// An editor's MCP tools, by the names the model calls them.
    tools: Vec<String>,
}

impl Grants {
    /// The grants in force, writes first, then in the order they were given.
    pub fn in_force(&self) -> Vec<Grant> {
        let writes = self.writes.then_some(Grant::Writes);
        let commands = self.commands.iter().map(|pattern| Grant::Command {
            pattern: pattern.clone(),
        });
        let tools = self.tools.iter().map(|name| Grant::Tool { name: name.clone() });
        writes.into_iter().chain(commands).chain(tools).collect()
    }

    pub fn give(&mut self, grant: Grant) {
        match grant {
            Grant::Writes => self.writes = true,
            Grant::Command { pattern } => self.commands.push(pattern),
            Grant::Tool { name } => self.tools.push(name),
        }
    }

    /// Takes one grant back; false when it was not in force.
    pub fn revoke(&mut self, grant: &Grant) -> bool {
        match grant {
            Grant::Writes => std::mem::replace(&mut self.writes, false),
            Grant::Command { pattern } => remove(&mut self.commands, pattern),
            Grant::Tool { name } => remove(&mut self.tools, name),
        }
    }

    /// Every grant taken back (the limits narrowed the session's mode since they were given).
    pub fn clear(&mut self) {
        *self = Grants::default();
    }

    pub fn writes(&self) -> bool {
        self.writes
    }

    /// The command patterns, as further allow rules for the bash judge.
    pub fn commands(&self) -> &[String] {
        &self.commands
    }

    pub fn allows_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|tool| tool == name)
    }
}

fn remove(list: &mut Vec<String>, item: &str) -> bool {
    let before = list.len();
    // The same pattern given twice is one grant to the person: both go.
    list.retain(|p| p != item);
    list.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_then_taken_back_one_by_one() {
        let mut grants = Grants::default();
        grants.give(Grant::Command {
            pattern: "cargo test *".into(),
        });
        grants.give(Grant::Writes);
        grants.give(Grant::Command {
            pattern: "cargo test *".into(),
        });
        grants.give(Grant::Tool {
            name: "srv__fetch".into(),
        });
        assert_eq!(
            grants.in_force(),
            [
                Grant::Writes,
                Grant::Command {
                    pattern: "cargo test *".into()
                },
                Grant::Command {
                    pattern: "cargo test *".into()
                },
                Grant::Tool {
                    name: "srv__fetch".into()
                },
            ]
        );
        assert!(grants.revoke(&Grant::Command {
            pattern: "cargo test *".into()
        }));
        assert!(!grants.revoke(&Grant::Command {
            pattern: "cargo test *".into()
        }));
        assert!(grants.allows_tool("srv__fetch") && grants.writes());
        grants.clear();
        assert_eq!(grants, Grants::default());
    }
}
