//! Background jobs (capability `jobs`, docs/protocol.md "Background jobs"): a command the model
//! started with `bash` `background: true`, as the `job` event, `_lembas/jobs`,
//! `_lembas/session/status` and the model's `job_list` describe it, and the `_lembas/job*` methods.

use serde::{Deserialize, Serialize};

use crate::SessionId;

/// What a job is. The device runs command jobs only (there are no subagents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobKind {
    Command,
    Subagent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Running,
    /// Ended by itself, whatever its exit code.
    Done,
    /// Stopped by the model's `job_stop` or a client's `_lembas/job/stop`.
    Stopped,
    /// Could not be run or read to its end.
    Error,
    /// Was running when the device's process ended.
    Lost,
}

impl JobState {
    pub const fn name(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Stopped => "stopped",
            JobState::Error => "error",
            JobState::Lost => "lost",
        }
    }
}

/// A job as clients see it (`JobInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobInfo {
    /// `job_` and a ULID.
    pub id: String,
    pub kind: JobKind,
    pub state: JobState,
    /// The command's description, or its first line.
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// When it started, in milliseconds since the epoch.
    pub started: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<u64>,
    /// The exit code; null when a signal ended it (or it has not ended).
    #[serde(default)]
    pub exit: Option<i32>,
    /// Characters of output the model has not read.
    pub unread: u64,
}

/// `_lembas/job/output`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobOutput {
    /// The output from the character asked for (or the oldest one still kept).
    pub text: String,
    /// How many characters the job has written in all: the next call's `since`.
    pub length: u64,
    pub state: JobState,
}

/// `_lembas/jobs`' answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobList {
    pub jobs: Vec<JobInfo>,
}

/// `_lembas/job/output`'s, `…/stop`'s, `…/send`'s and `…/transcript`'s params: one job of a
/// session.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobParams {
    pub session_id: SessionId,
    /// `job_` and a ULID.
    pub id: String,
    /// `_lembas/job/output`: the first character wanted.
    #[serde(default)]
    pub since: Option<u64>,
}

/// `_lembas/job/stop`'s answer: the state it ended in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobStopped {
    pub state: JobState,
}
