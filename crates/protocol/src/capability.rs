//! The capability strings of `initialize`'s `_meta.lembas.capabilities` (docs/protocol.md: "LLeMbas never
//! calls a method, nor relies on a field, the device did not list"). Which of them a device lists
//! is the device's promise; this is only their names.

use crate::named;

named! {
    /// A feature of the link, named in `initialize`.
    pub enum Capability {
        Directories = "directories",
        Scheduled = "scheduled",
        Sessions = "sessions",
        Status = "status",
        Delete = "delete",
        Title = "title",
        Turns = "turns",
        Model = "model",
        Context = "context",
        Configure = "configure",
        Steer = "steer",
        Rewind = "rewind",
        Compact = "compact",
        Ask = "ask",
        Plan = "plan",
        Commands = "commands",
        Attachments = "attachments",
        Files = "files",
        Show = "show",
        /// The session's structured plan: `plan_write`, `plan_update`, `plan_clear`.
        PlanState = "plan_state",
        /// Background command jobs: `bash` `background: true`, the `job_*` tools, `_lembas/jobs`
        /// and `_lembas/job/*`.
        Jobs = "jobs",
        Terminal = "terminal",
        Shell = "shell",
    }
}

impl Capability {
    /// Served only on the link to the instance, never to an editor on `lembas serve --stdio`:
    /// they reach outside a chat (folders, scheduled work, shells).
    pub const fn link_only(self) -> bool {
        matches!(
            self,
            Capability::Directories | Capability::Scheduled | Capability::Terminal | Capability::Shell
        )
    }
}
