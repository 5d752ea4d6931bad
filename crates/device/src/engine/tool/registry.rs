//! The tools one step of a session offers: the device's own, each a [`Tool`] found by its
//! [`ToolName`] (`show` only where someone looks, `memory` only when the login has it), then the
//! MCP tools of the editor's servers. The model's tool list and the call's routing both read it,
//! so a tool the model was told of is the tool its call reaches.

use std::sync::Arc;

use super::Tool;
use super::bash::Bash;
use super::file::FileCall;
use super::free::{Asking, Jobs, MemoryTool, Planning};
use super::mcp::McpTool;
use super::show::ShowTool;
use crate::engine::ask::AskTool;
use crate::engine::jobs::JobTool;
use crate::engine::plan_state::PlanTool;
use crate::engine::session::{Session, SessionTools};
use crate::engine::{Engine, show};
use crate::tools::{FileTool, ToolDefinition, ToolName};

pub(crate) struct Toolbox {
    tools: Vec<Box<dyn Tool>>,
    /// The numbers the definitions tell the model.
    decisions: &'static crate::decisions::Decisions,
}

/// What a session offers now beyond the tools always there.
struct Offers {
    show: bool,
    /// A shell for commands was found (on Windows, Git Bash may be missing).
    bash: bool,
    memory: Option<ToolDefinition>,
}

/// The device's tool of that name, when this step offers it. Every name has its arm: a name added
/// without its tool does not compile.
fn own(name: ToolName, offers: &Offers) -> Option<Box<dyn Tool>> {
    Some(match name {
        ToolName::Read => Box::new(FileCall(FileTool::Read)),
        ToolName::Ls => Box::new(FileCall(FileTool::Ls)),
        ToolName::Glob => Box::new(FileCall(FileTool::Glob)),
        ToolName::Grep => Box::new(FileCall(FileTool::Grep)),
        ToolName::Write => Box::new(FileCall(FileTool::Write)),
        ToolName::Edit => Box::new(FileCall(FileTool::Edit)),
        ToolName::Bash => {
            if !offers.bash {
                return None;
            }
            Box::new(Bash)
        }
        ToolName::AskUser => Box::new(Asking(AskTool::Questions)),
        ToolName::PlanSubmit => Box::new(Asking(AskTool::Plan)),
        ToolName::PlanWrite => Box::new(Planning(PlanTool::Write)),
        ToolName::PlanUpdate => Box::new(Planning(PlanTool::Update)),
        ToolName::PlanClear => Box::new(Planning(PlanTool::Clear)),
        ToolName::JobList => Box::new(Jobs(JobTool::List)),
        ToolName::JobOutput => Box::new(Jobs(JobTool::Output)),
        ToolName::JobStop => Box::new(Jobs(JobTool::Stop)),
        ToolName::Show => {
            if !offers.show {
                return None;
            }
            Box::new(ShowTool)
        }
        ToolName::Memory => Box::new(MemoryTool(offers.memory.clone()?)),
    })
}

impl Toolbox {
    /// What `session`'s next step offers.
    pub(crate) fn of(engine: &Engine, session: &Arc<Session>) -> Toolbox {
        let show = show::offered(engine, session);
        let SessionTools { memory, mcp } = session.session_tools();
        let offers = Offers {
            show,
            bash: crate::commands_shell::found().is_ok(),
            memory,
        };
        let mut tools: Vec<Box<dyn Tool>> = ToolName::ALL
            .into_iter()
            .filter_map(|name| own(name, &offers))
            .collect();
        for (offered, definition) in mcp {
            tools.push(Box::new(McpTool { offered, definition }));
        }
        Toolbox {
            tools,
            decisions: engine.setup().decisions,
        }
    }

    /// The `tools` array of the step's request, in order.
    pub(crate) fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|tool| tool.definition(self.decisions))
            .collect()
    }

    /// The tool a call names, or the sentence the model reads when this step offers none by that
    /// name.
    pub(crate) fn find(&self, name: &str) -> Result<&dyn Tool, String> {
        if let Some(tool) = self.tools.iter().find(|tool| tool.name() == name) {
            return Ok(tool.as_ref());
        }
        if ToolName::parse(name) == Some(ToolName::Show) {
            return Err(show::NOT_OFFERED.to_string());
        }
        let names: Vec<&str> = self.tools.iter().map(|tool| tool.name()).collect();
        Err(format!(
            "There is no tool named `{name}`. The tools are: {}.",
            names.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn offers() -> Offers {
        Offers {
            show: true,
            bash: true,
            memory: Some(ToolDefinition::function(
                "memory",
                "The instance's memory.",
                json!({ "type": "object", "properties": {}, "required": [] }),
            )),
        }
    }

    /// The device's own tools as a step offers them, when nobody looks and the login has no memory.
    fn bare() -> Toolbox {
        let none = Offers {
            show: false,
            bash: true,
            memory: None,
        };
        Toolbox {
            tools: ToolName::ALL
                .into_iter()
                .filter_map(|name| own(name, &none))
                .collect(),
            decisions: crate::decisions::Decisions::built_in(),
        }
    }

    #[test]
    fn every_name_has_its_own_tool_by_that_name() {
        for name in ToolName::ALL {
            let tool = own(name, &offers()).expect("offered");
            assert_eq!(tool.name(), name.as_str());
            assert_eq!(
                tool.definition(crate::decisions::Decisions::built_in())
                    .function
                    .name,
                name.as_str()
            );
        }
        let none = Offers {
            show: false,
            bash: true,
            memory: None,
        };
        assert!(own(ToolName::Show, &none).is_none());
        assert!(own(ToolName::Memory, &none).is_none());
    }

    #[test]
    fn every_tool_in_order_with_an_object_schema() {
        let defs: Vec<Value> = bare().definitions().iter().map(|d| json!(d)).collect();
        let names: Vec<&str> = defs
            .iter()
            .filter_map(|d| d["function"]["name"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "read",
                "ls",
                "glob",
                "grep",
                "write",
                "edit",
                "bash",
                "ask_user",
                "plan_submit",
                "plan_write",
                "plan_update",
                "plan_clear",
                "job_list",
                "job_output",
                "job_stop"
            ]
        );
        for def in &defs {
            assert_eq!(def["type"], "function");
            let parameters = &def["function"]["parameters"];
            assert_eq!(parameters["type"], "object", "{def}");
            assert_eq!(parameters["additionalProperties"], false, "{def}");
            let properties = parameters["properties"].as_object().expect("properties");
            for required in parameters["required"].as_array().expect("required") {
                let key = required.as_str().expect("a name");
                assert!(
                    properties.contains_key(key),
                    "{} requires {key}",
                    def["function"]["name"]
                );
            }
            assert!(!def["function"]["description"].as_str().unwrap_or("").is_empty());
            // Inline all through: a model reads no `$ref`.
            assert!(!parameters.to_string().contains("$ref"), "{def}");
        }
    }

    #[test]
    fn numbers_come_from_the_decisions() {
        let defs: Vec<Value> = bare().definitions().iter().map(|d| json!(d)).collect();
        let bash = &defs[6]["function"]["parameters"]["properties"]["timeout_s"];
        assert_eq!(bash["maximum"], 600);
        let text = bash["description"].as_str().unwrap_or("");
        assert!(
            text.contains("default 120") && text.contains("at most 600"),
            "{text}"
        );
        let read = defs[0]["function"]["description"].as_str().unwrap_or("");
        assert!(read.contains("2000 lines"), "{read}");
        let limit = defs[0]["function"]["parameters"]["properties"]["limit"]["description"]
            .as_str()
            .unwrap_or("");
        assert!(limit.contains("default 2000"), "{limit}");
        let questions = &defs[7]["function"]["parameters"]["properties"]["questions"];
        assert!(questions["maxItems"].as_u64().is_some(), "{questions}");
    }

    #[test]
    fn a_name_not_offered_is_said_to_the_model() {
        let toolbox = bare();
        assert_eq!(
            toolbox.find("bash").map(|t| t.name().to_string()),
            Ok("bash".to_string())
        );
        assert_eq!(toolbox.find("show").err().as_deref(), Some(show::NOT_OFFERED));
        assert_eq!(
            toolbox.find("foo").err().as_deref(),
            Some(
                "There is no tool named `foo`. The tools are: read, ls, glob, grep, write, edit, bash, ask_user, plan_submit, plan_write, plan_update, plan_clear, job_list, job_output, job_stop."
            )
        );
    }

    /// Prints every definition (`cargo test -p lembas-device print_definitions -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn print_definitions() {
        let mut toolbox = bare();
        toolbox.tools.extend(own(ToolName::Show, &offers()));
        println!(
            "{}",
            serde_json::to_string_pretty(&toolbox.definitions()).unwrap_or_default()
        );
    }
}
