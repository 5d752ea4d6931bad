//! What the client, the activity log and the session's timeline are told of a call: ACP's
//! `tool_call_update`, the `tool_start`/`tool_end`/`tool_denied` events, and the decision record.

use serde_json::json;

use super::Turn;
use crate::engine::Engine;
use crate::engine::approvals::AnsweredBy;
use crate::engine::model::ToolCall;
use crate::engine::session::ToolResult;
use crate::events::DeviceEvent;
use crate::policy::Mode;
use crate::policy::bash_judge::Decision;
use crate::store::record::DecisionRecord;
use lembas_protocol::event::Event;
use lembas_protocol::permission::ApprovalOption;
use lembas_protocol::update::{
    SessionUpdate, ToolCall as AcpToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind,
};

/// What the client hears of a call as it goes: ACP's `tool_call_update`, and the `tool_start` and
/// `tool_end` events.
impl ToolCall {
    pub(crate) fn update(
        &self,
        status: ToolCallStatus,
        content: Option<Vec<ToolCallContent>>,
    ) -> SessionUpdate {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id: self.id.clone(),
            status,
            content,
            meta: None,
        })
    }

    pub(crate) fn started(&self, title: &str, turn_id: &str) -> Event {
        Event::ToolStart {
            id: self.id.clone(),
            name: self.name.clone(),
            title: title.to_string(),
            turn_id: turn_id.into(),
        }
    }

    pub(crate) fn ended(&self, is_error: bool, turn_id: &str) -> Event {
        Event::ToolEnd {
            id: self.id.clone(),
            name: self.name.clone(),
            is_error,
            turn_id: turn_id.into(),
        }
    }
}

/// A call that cannot even be read (no such tool, bad arguments): the client sees it failed, and
/// the model reads why.
pub(super) async fn unreadable(turn: Turn<'_>, call: &ToolCall, why: String) -> ToolResult {
    let sid = &turn.session.id;
    turn.engine
        .update(
            sid,
            SessionUpdate::ToolCall(AcpToolCall {
                tool_call_id: call.id.clone(),
                title: call.name.clone(),
                kind: ToolKind::Other,
                status: ToolCallStatus::Failed,
                raw_input: json!({ "arguments": call.arguments }),
                content: vec![ToolCallContent::text(&why)],
                locations: Vec::new(),
            }),
        )
        .await;
    turn.engine.event(sid, call.ended(true, turn.turn_id)).await;
    ToolResult {
        text: why,
        is_error: true,
    }
}

/// What the activity log says of a call that was judged, and what the session keeps of it for
/// the timeline: its card's title and headline, the mode's decision and why, who answered and when.
pub(super) struct Logged {
    pub(super) title: String,
    /// The bash line that runs: the model's, or the person's corrected one.
    pub(super) command: Option<String>,
    /// The files a write or edit changed.
    pub(super) changed_files: Vec<String>,
    pub(super) headline: String,
    pub(super) decision: Decision,
    pub(super) reason: String,
    /// Allowed by an earlier "Allow for this chat".
    pub(super) granted: bool,
    pub(super) mode: Mode,
    pub(super) answered_by: Option<AnsweredBy>,
    /// The person's answer when it asked.
    pub(super) answer: Option<ApprovalOption>,
    pub(super) answered_ms: Option<u64>,
    /// The change a write or edit made, as a unified diff.
    pub(super) diff: Option<String>,
}

impl Logged {
    /// To the activity log, and kept with the session for its timeline in the window.
    pub(super) fn tell(&self, engine: &Engine, session_id: &str, call: &ToolCall, outcome: &str) {
        let record = DecisionRecord {
            tool_call_id: call.id.clone(),
            decision: self.decision.as_str().to_string(),
            answered_by: self.answered_by.map(|by| by.as_str().to_string()),
            answer: self.answer,
            outcome: outcome.to_string(),
            at_ms: Some(crate::status::now_ms()),
            answered_ms: self.answered_ms,
            mode: Some(self.mode.as_str().to_string()),
            reason: Some(self.reason.clone()),
            granted: self.granted,
            headline: Some(self.headline.clone()),
            diff: self.diff.clone(),
        };
        engine.record_decision(session_id, record);
        engine.device_event(self.event(session_id, call, outcome));
    }

    /// The call's [`DeviceEvent::ToolCall`]; `outcome` is `completed`, `failed` or `denied`.
    fn event(&self, session_id: &str, call: &ToolCall, outcome: &str) -> DeviceEvent {
        DeviceEvent::ToolCall {
            session_id: session_id.into(),
            tool_call_id: call.id.clone(),
            tool: call.name.clone(),
            title: self.title.clone(),
            decision: self.decision.as_str().to_string(),
            answered_by: self.answered_by.map(|by| by.as_str().to_string()),
            outcome: outcome.to_string(),
            command: self.command.clone(),
            changed_files: self.changed_files.clone(),
        }
    }
}

/// Why a call is not run: the reason the client's event gives, the person's words if any, and
/// what the model reads.
pub(super) struct Refusal {
    pub(super) reason: String,
    pub(super) feedback: Option<String>,
    pub(super) text: String,
}

pub(super) async fn denied(
    engine: &Engine,
    sid: &str,
    turn_id: &str,
    call: &ToolCall,
    reason: &str,
    feedback: Option<String>,
    log: &Logged,
) -> ToolResult {
    let mut text = format!("Not done: {reason}");
    if let Some(f) = &feedback {
        text.push_str(&format!(" The person said: {f}"));
    }
    let refusal = Refusal {
        reason: reason.to_string(),
        feedback,
        text,
    };
    refused(engine, sid, turn_id, call, refusal, log).await
}

/// A call not run: the client told it failed, and the model reads the refusal's text.
pub(super) async fn refused(
    engine: &Engine,
    sid: &str,
    turn_id: &str,
    call: &ToolCall,
    refusal: Refusal,
    log: &Logged,
) -> ToolResult {
    let Refusal {
        reason,
        feedback,
        text,
    } = refusal;
    engine
        .update(
            sid,
            call.update(ToolCallStatus::Failed, Some(vec![ToolCallContent::text(&text)])),
        )
        .await;
    engine
        .event(
            sid,
            Event::ToolDenied {
                id: call.id.clone(),
                name: call.name.clone(),
                reason: reason.clone(),
                feedback: feedback.clone(),
                turn_id: turn_id.into(),
            },
        )
        .await;
    log.tell(engine, sid, call, "denied");
    ToolResult { text, is_error: true }
}
