//! `_lembas/event` (docs/protocol.md): the engine's events of a session, to a client that said
//! `_meta.lembas` in `initialize`. The spec lists more kinds than the device sends; these are the
//! ones it sends, each with the fields the spec gives it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jobs::JobInfo;
use crate::plan::Plan;
use crate::prompt::StopReason;
use crate::{Effort, Mode, SessionId, TurnId};

/// `_lembas/event`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventNotification {
    pub session_id: SessionId,
    pub event: Event,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Event {
    /// A turn's prompt as the person sees it (a command's name, not its body).
    Prompt {
        text: String,
        turn_id: TurnId,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<AttachmentInfo>,
        /// Started by the device (a finished job's note), not typed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        machine: bool,
    },
    Task {
        state: TaskState,
        turn_id: TurnId,
    },
    /// The steers taken in at this step, and the ids the client gave them.
    Steered {
        texts: Vec<String>,
        ids: Vec<String>,
        turn_id: TurnId,
    },
    Mode {
        mode: Mode,
    },
    /// The session's model or effort changed.
    Model {
        /// The device's ref of the model (its served id).
        #[serde(rename = "ref")]
        model: String,
        effort: Effort,
        /// The login's connection the model is spoken to through.
        connection: Option<String>,
        /// Always true: the model is one the link's instance serves.
        instance: bool,
    },
    /// The structured plan, null once cleared.
    Plan {
        plan: Option<Plan>,
    },
    Compacted {
        summary: String,
    },
    Title {
        id: String,
        title: String,
    },
    Job {
        state: JobChange,
        job: JobInfo,
    },
    /// The note about a job given to the model: in a turn at its next step, or as the machine
    /// turn that follows.
    JobNote {
        job_id: String,
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn_id: Option<TurnId>,
    },
    Text {
        text: String,
    },
    Reasoning {
        text: String,
    },
    ToolStart {
        id: String,
        name: String,
        title: String,
        turn_id: TurnId,
    },
    ToolEnd {
        id: String,
        name: String,
        is_error: bool,
        turn_id: TurnId,
    },
    /// A call the person or the limits refused: why, and the person's words if any.
    ToolDenied {
        id: String,
        name: String,
        reason: String,
        feedback: Option<String>,
        turn_id: TurnId,
    },
    /// The model's usage of a step as it reported it (passed through), and how full the window is.
    Usage {
        usage: Value,
        used: u64,
        size: u64,
        turn_id: TurnId,
    },
    Error {
        message: String,
        turn_id: TurnId,
    },
    /// A turn ended; `stopReason` as the prompt's answer says it, null when it failed.
    Done {
        turn_id: TurnId,
        stop_reason: Option<StopReason>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum TaskState {
    Start,
    End,
}

impl TaskState {
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskState::Start => "start",
            TaskState::End => "end",
        }
    }
}

/// A `job` event's state: the job began, has news, or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobChange {
    Start,
    Update,
    End,
}

/// An attachment as a prompt event and the history list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentInfo {
    pub name: String,
    pub mime_type: String,
    pub size: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_are_written_as_the_spec_has_them() {
        let cases = [
            (
                Event::Prompt {
                    text: "/undo".into(),
                    turn_id: "t1".into(),
                    attachments: Vec::new(),
                    machine: false,
                },
                json!({ "type": "prompt", "text": "/undo", "turnId": "t1" }),
            ),
            (
                Event::Model {
                    model: "m".into(),
                    effort: Effort::Default,
                    connection: None,
                    instance: true,
                },
                json!({ "type": "model", "ref": "m", "effort": "default", "connection": null, "instance": true }),
            ),
            (
                Event::JobNote {
                    job_id: "job_1".into(),
                    text: "done".into(),
                    turn_id: None,
                },
                json!({ "type": "job_note", "jobId": "job_1", "text": "done" }),
            ),
            (
                Event::Done {
                    turn_id: "t1".into(),
                    stop_reason: None,
                },
                json!({ "type": "done", "turnId": "t1", "stopReason": null }),
            ),
        ];
        for (event, written) in cases {
            assert_eq!(serde_json::to_value(&event).unwrap(), written);
            assert_eq!(serde_json::from_value::<Event>(written).unwrap(), event);
        }
    }
}
