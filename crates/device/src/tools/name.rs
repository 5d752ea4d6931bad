//! The names of the device's own tools, the one list the model's tool list, the engine's registry
//! and the errors all read (ENGINE.md "Tools"). An editor's MCP tools are named by their servers.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolName {
    Read,
    Ls,
    Glob,
    Grep,
    Write,
    Edit,
    Bash,
    AskUser,
    PlanSubmit,
    PlanWrite,
    PlanUpdate,
    PlanClear,
    JobList,
    JobOutput,
    JobStop,
    /// Offered only where someone looks (a client that said `show: true`, never a scheduled turn).
    Show,
    /// The instance's memory, offered when the login's scope has it (its schema is the instance's).
    Memory,
}

impl ToolName {
    /// Every name, in the order the model is given the tools.
    pub const ALL: [ToolName; 17] = [
        ToolName::Read,
        ToolName::Ls,
        ToolName::Glob,
        ToolName::Grep,
        ToolName::Write,
        ToolName::Edit,
        ToolName::Bash,
        ToolName::AskUser,
        ToolName::PlanSubmit,
        ToolName::PlanWrite,
        ToolName::PlanUpdate,
        ToolName::PlanClear,
        ToolName::JobList,
        ToolName::JobOutput,
        ToolName::JobStop,
        ToolName::Show,
        ToolName::Memory,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::Read => "read",
            ToolName::Ls => "ls",
            ToolName::Glob => "glob",
            ToolName::Grep => "grep",
            ToolName::Write => "write",
            ToolName::Edit => "edit",
            ToolName::Bash => "bash",
            ToolName::AskUser => "ask_user",
            ToolName::PlanSubmit => "plan_submit",
            ToolName::PlanWrite => "plan_write",
            ToolName::PlanUpdate => "plan_update",
            ToolName::PlanClear => "plan_clear",
            ToolName::JobList => "job_list",
            ToolName::JobOutput => "job_output",
            ToolName::JobStop => "job_stop",
            ToolName::Show => "show",
            ToolName::Memory => "memory",
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|tool| tool.as_str() == name)
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ToolName;

    #[test]
    fn every_name_reads_back_as_itself() {
        for tool in ToolName::ALL {
            assert_eq!(ToolName::parse(tool.as_str()), Some(tool));
        }
        assert_eq!(ToolName::parse("Read"), None);
        assert_eq!(ToolName::parse(""), None);
    }
}
