//! What a session knows of the instance's memory (docs/protocol.md "The instance's memory"), read
//! as it starts and kept for its whole life, and how the model is shown it: the prompt's
//! `## Memory` and the instance's `memory` tool. Reading and calling it: `instance_memory.rs`.

use crate::mcp::ToolInfo;
use crate::tools::ToolDefinition;

/// The instance's memory tool, by the name its `tools/list` gives it.
pub const MEMORY: &str = "memory";
/// The resource whose text is the memory block of the prompt.
pub const MEMORY_URI: &str = "lembas://memory";

/// What a session knows of the instance's memory, read as it starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SessionMemory {
    /// Not read yet: a session opened from the store reads it at its first turn.
    #[default]
    NotRead,
    /// Logged out, or a token without the scope: no memory, no tool.
    Absent,
    /// The memory block's text (empty: nothing remembered) and the instance's tool.
    Read {
        text: String,
        tool: Option<ToolInfo>,
        /// What calls made for the session carry as `_meta.lembas.scope`.
        scope: Option<String>,
    },
    /// The scope says memory, but it could not be read: why, for the model.
    Unreadable(String),
}

/// The prompt's `## Memory` section; `None` when the session has no memory.
pub fn section(memory: &SessionMemory) -> Option<String> {
    match memory {
        SessionMemory::NotRead | SessionMemory::Absent => None,
        SessionMemory::Read { text, .. } if text.trim().is_empty() => {
            Some("## Memory\n\nNothing is remembered yet.".to_string())
        }
        SessionMemory::Read { text, .. } => Some(format!("## Memory\n\n{}", text.trim())),
        SessionMemory::Unreadable(why) => Some(format!(
            "## Memory\n\nThe instance's memory could not be read for this session ({why}); do not assume anything is remembered."
        )),
    }
}

/// The tool's definition for the model, when the session has it.
pub fn definition(memory: &SessionMemory) -> Option<ToolDefinition> {
    let SessionMemory::Read { tool: Some(tool), .. } = memory else {
        return None;
    };
    Some(tool.as_function(&tool.name, &tool.description))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool() -> ToolInfo {
        ToolInfo {
            name: MEMORY.to_string(),
            description: "Keeps facts".to_string(),
            input_schema: json!({ "type": "object", "properties": { "action": { "type": "string" } } }),
        }
    }

    #[test]
    fn the_prompt_says_what_is_remembered_or_why_not() {
        let read = |text: &str| SessionMemory::Read {
            text: text.to_string(),
            tool: None,
            scope: None,
        };
        let cases = [
            (SessionMemory::Absent, None),
            (read("- likes tea\n"), Some("## Memory\n\n- likes tea")),
            (read("  "), Some("## Memory\n\nNothing is remembered yet.")),
        ];
        for (memory, expected) in cases {
            assert_eq!(section(&memory).as_deref(), expected);
        }
        let unreadable = section(&SessionMemory::Unreadable("it answered HTTP 500".into())).unwrap();
        assert!(unreadable.contains("could not be read") && unreadable.contains("HTTP 500"));
    }

    #[test]
    fn the_tool_is_offered_only_as_the_instance_gave_it() {
        let with = SessionMemory::Read {
            text: String::new(),
            tool: Some(tool()),
            scope: None,
        };
        let offered = definition(&with).unwrap();
        assert_eq!(offered.function.name, MEMORY);
        assert_eq!(
            offered.function.parameters["properties"]["action"]["type"],
            "string"
        );
        let without = SessionMemory::Read {
            text: String::new(),
            tool: None,
            scope: None,
        };
        assert_eq!(definition(&without), None);
        assert_eq!(definition(&SessionMemory::Unreadable("x".into())), None);
        let mut odd = tool();
        odd.input_schema = json!(["not", "a", "schema"]);
        let odd = SessionMemory::Read {
            text: String::new(),
            tool: Some(odd),
            scope: None,
        };
        assert_eq!(
            definition(&odd).unwrap().function.parameters,
            json!({ "type": "object" })
        );
    }
}
