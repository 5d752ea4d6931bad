//! The window's roads out: control-socket requests and the socket's pushed notifications, passed
//! on as they are (the window asks the runtime what it shows by the control endpoint's methods, so
//! it reads the same whether the runtime runs in the tray or in a headless `lembas service run`),
//! and calls to the tray process's own socket.

use std::path::PathBuf;
use std::time::Duration;

use lembas_device::control::{CallError, Client, ConnectError};
use serde::Serialize;
use serde_json::{Value, json};
use tauri::{AppHandle, Emitter};

use crate::window;

/// The Tauri event carrying each notification the runtime pushed: `{ method, params }`.
pub const PUSH_EVENT: &str = "control-push";
/// The pause before subscribing again after the runtime went (it may be restarting).
const RESUBSCRIBE: Duration = Duration::from_secs(1);

/// An error as the UI gets it: it branches on `code` and shows `message`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandError {
    pub code: String,
    pub message: String,
}

impl CommandError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

#[derive(Clone, Serialize)]
struct Push {
    method: String,
    params: Value,
}

/// A call's error for the UI: the code the answer carries in `data.reason`, else `refused`.
fn call_error(e: CallError) -> CommandError {
    match e {
        CallError::Rpc(rpc) if rpc.code == lembas_device::rpc::METHOD_NOT_FOUND => {
            CommandError::new("method_not_found", rpc.message)
        }
        CallError::Rpc(rpc) => {
            let reason = rpc
                .data
                .as_ref()
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or("refused");
            CommandError::new(reason, rpc.message)
        }
        other => CommandError::new("unreachable", other.to_string()),
    }
}

/// One request to the tray process's socket.
pub async fn call_at(socket: PathBuf, method: &str, params: Value) -> Result<Value, CommandError> {
    let mut client = Client::connect_at(socket).await.map_err(|e| match e {
        ConnectError::NotRunning => CommandError::new(
            "not_running",
            "LLeMbas Desktop's tray is not running: start LLeMbas Desktop again.",
        ),
        other => CommandError::new("unreachable", other.to_string()),
    })?;
    client.call(method, params).await.map_err(call_error)
}

/// One control request, answered by the runtime; its error sentence is for the person.
#[tauri::command]
pub async fn control_call(method: String, params: Option<Value>) -> Result<Value, CommandError> {
    let mut client = Client::connect().await.map_err(|e| match e {
        ConnectError::NotRunning => CommandError::new(
            "not_running",
            "The LLeMbas device is not running on this computer right now: start it again from the tray.",
        ),
        other => CommandError::new("unreachable", other.to_string()),
    })?;
    client
        .call(&method, params.unwrap_or_else(|| json!({})))
        .await
        .map_err(call_error)
}

/// Passes every notification of a control subscription to the window; the subscription is made
/// again whenever the runtime goes and comes back.
pub async fn forward_pushes(app: AppHandle) {
    loop {
        if let Ok(client) = Client::connect().await
            && let Ok(mut subscription) = client.subscribe_with(subscribe_params()).await
        {
            while let Some((method, params)) = subscription.next_notification().await {
                let _ = app.emit_to(window::LABEL, PUSH_EVENT, Push { method, params });
            }
        }
        tokio::time::sleep(RESUBSCRIBE).await;
    }
}

/// What the window subscribes to, besides status and events (which every subscriber gets).
fn subscribe_params() -> Value {
    json!({})
}
