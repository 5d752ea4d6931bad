//! The session's structured plan (capability `plan_state`), as the last plan tool left it.

use lembas_protocol::plan::Plan;

use super::Session;

impl Session {
    pub fn plan(&self) -> Option<Plan> {
        self.state().plan.clone()
    }

    /// The plan becomes `plan` (`None`: cleared).
    pub fn replace_plan(&self, plan: Option<Plan>) {
        self.state().plan = plan;
    }
}
