//! A tool call that touches nothing on this computer (ACP kind `think`: `ask_user`, `plan_submit`,
//! the plan tools), as the client sees it: started, then completed or failed with the text the
//! model reads, with the `tool_start`/`tool_end` events and the activity line. No judge and no
//! approval: such a call is allowed in every mode.

use serde_json::Value;
use std::future::Future;

use super::Engine;
use super::model::ToolCall;
use super::session::{Session, ToolResult};
use crate::events::DeviceEvent;
use lembas_protocol::update::{
    SessionUpdate, ToolCall as AcpToolCall, ToolCallContent, ToolCallStatus, ToolKind,
};

/// Reports `call` titled `title` around `work`, whose `Ok` or `Err` text the model reads.
pub async fn reported(
    engine: &Engine,
    session: &Session,
    turn_id: &str,
    call: &ToolCall,
    title: &str,
    work: impl Future<Output = Result<String, String>>,
) -> ToolResult {
    reported_as(engine, session, turn_id, call, title, ToolKind::Think, work).await
}

/// [`reported`] for a call of another ACP kind that is allowed in every mode all the same (the
/// session's own background jobs).
pub async fn reported_as(
    engine: &Engine,
    session: &Session,
    turn_id: &str,
    call: &ToolCall,
    title: &str,
    kind: ToolKind,
    work: impl Future<Output = Result<String, String>>,
) -> ToolResult {
    let sid = session.id.clone();
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    engine
        .update(
            &sid,
            SessionUpdate::ToolCall(AcpToolCall {
                tool_call_id: call.id.clone(),
                title: title.to_string(),
                kind,
                status: ToolCallStatus::InProgress,
                raw_input: args,
                content: Vec::new(),
                locations: Vec::new(),
            }),
        )
        .await;
    engine.event(&sid, call.started(title, turn_id)).await;
    let (text, is_error) = match work.await {
        Ok(text) => (text, false),
        Err(text) => (text, true),
    };
    let status = ToolCallStatus::ended(is_error);
    engine
        .update(
            &sid,
            call.update(status, Some(vec![ToolCallContent::text(&text)])),
        )
        .await;
    engine.event(&sid, call.ended(is_error, turn_id)).await;
    engine.device_event(DeviceEvent::ToolCall {
        session_id: sid,
        tool_call_id: call.id.clone(),
        tool: call.name.clone(),
        title: title.to_string(),
        decision: "allow".to_string(),
        answered_by: None,
        outcome: status.as_str().to_string(),
        command: None,
        changed_files: Vec::new(),
    });
    ToolResult { text, is_error }
}

/// The call's arguments, when they are a JSON object.
pub fn arguments(call: &ToolCall) -> Result<Value, String> {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(args) if args.is_object() => Ok(args),
        _ => Err(format!("The arguments of {} are not a JSON object.", call.name)),
    }
}
