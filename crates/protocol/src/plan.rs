//! The session's structured plan (capability `plan_state`): what `plan_write` and `plan_update`
//! keep, sent as `_meta.lembas.plan` of ACP's `plan` update, in `_lembas/session/status` and on
//! `_lembas/plan` (docs/protocol.md "The structured plan").

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub version: u32,
    pub title: String,
    pub summary: String,
    pub objectives: Vec<String>,
    pub findings: Vec<String>,
    pub phases: Vec<Phase>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub id: String,
    pub title: String,
    pub tasks: Vec<Task>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub content: String,
    pub status: TaskStatus,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub text: String,
    pub done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    #[default]
    Pending,
    InProgress,
    Completed,
    Dropped,
}

impl TaskStatus {
    /// ACP's word for it in a plan entry: ACP has none for a dropped task, which is done with.
    pub const fn acp(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed | TaskStatus::Dropped => "completed",
        }
    }
}

impl Plan {
    /// Every task, phase by phase, in order.
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.phases.iter().flat_map(|p| p.tasks.iter())
    }
}
