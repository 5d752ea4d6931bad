//! The window's roads out: control-socket requests and the socket's pushed notifications, passed
//! on as they are (the window asks the runtime what it shows by the control endpoint's methods, so
//! it reads the same whether the runtime runs in the tray or in a headless `lembas service run`).
//! The chat methods go through the window's held connection (`held.rs`), the one that holds the
//! chats its composer opens and hears the pushes; every other request on a connection of its own.

use lembas_device::control::params::Streams;
use lembas_device::control::{CallError, Client, ConnectError, cookie};
use lembas_device::paths::Dirs;
use lembas_device::rpc::{self, RpcError};
use lembas_protocol::ControlMethod;
use serde::Serialize;
use serde_json::{Value, json};
use tauri::{AppHandle, Emitter, Manager};

use crate::held::{Heard, Held, HeldError};
use crate::window;

/// The Tauri event carrying each notification the runtime pushed: `{ method, params }`.
pub const PUSH_EVENT: &str = "control-push";
/// The Tauri event saying the window's held connection ended: the runtime let go of its chats.
pub const LET_GO_EVENT: &str = "chats-let-go";

pub use lembas_device::desktop_view::CommandError;

#[derive(Clone, Serialize)]
struct Push {
    method: String,
    params: Value,
}

/// One control request, answered by the runtime; its error sentence is for the person.
#[tauri::command]
pub async fn control_call(
    dirs: tauri::State<'_, Dirs>,
    held: tauri::State<'_, Held>,
    method: String,
    params: Option<Value>,
) -> Result<Value, CommandError> {
    // Every call the window makes, by name (never its params): the app test counts them.
    tracing::debug!(%method, "control_call relayed");
    // Only the runtime's own requests, and not those a connection makes for itself (its cookie,
    // its subscription: `forward_pushes` holds the window's).
    let method = match ControlMethod::from_name(&method) {
        Some(ControlMethod::Hello | ControlMethod::Subscribe) | None => {
            return Err(CommandError::new(
                "method_not_found",
                format!("The window cannot call {method:?} on the device runtime."),
            ));
        }
        Some(known) => known,
    };
    let params = params.unwrap_or_else(|| json!({}));
    if holds(method) {
        return held.call(method.name(), params).await.map_err(|e| match e {
            HeldError::Rpc(rpc) => CommandError::new(code_of(&rpc), rpc.message),
            HeldError::NotRunning => not_running(),
            HeldError::Gone => CommandError::new(
                "unreachable",
                "The LLeMbas device went away before it answered: it lets go of this window's chats then. Open the chat again once it is back.",
            ),
        });
    }
    let mut client = Client::connect(&dirs).await.map_err(|e| match e {
        ConnectError::NotRunning => not_running(),
        ConnectError::Refused(rpc) => CommandError::new(code_of(&rpc), rpc.message),
        other => CommandError::new("unreachable", other.to_string()),
    })?;
    client.call(method.name(), params).await.map_err(|e| match e {
        CallError::Rpc(rpc) => CommandError::new(code_of(&rpc), rpc.message),
        other => CommandError::new("unreachable", other.to_string()),
    })
}

/// The chat methods: a chat is held by the connection that opened it, so they all go through
/// the window's one held connection.
fn holds(method: ControlMethod) -> bool {
    method.name().starts_with("chat/")
}

fn not_running() -> CommandError {
    CommandError::new(
        "not_running",
        "The LLeMbas device is not running on this computer right now: start it again from the tray.",
    )
}

/// The code the window branches on: the runtime's `data.reason` (`token_refused`, `refused`,
/// `not_open`, ...) when it gave one, else what the JSON-RPC code says.
fn code_of(rpc: &RpcError) -> String {
    let reason = rpc
        .data
        .as_ref()
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str)
        // A code is a word; anything else is not one the window knows.
        .filter(|r| !r.is_empty() && r.len() <= 40 && r.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
    match (reason, rpc.code) {
        (Some(reason), _) => reason.to_string(),
        (None, rpc::METHOD_NOT_FOUND) => "method_not_found".to_string(),
        (None, rpc::INTERNAL_ERROR) => "internal".to_string(),
        (None, _) => "refused".to_string(),
    }
}

/// Keeps the window's held connection and passes every notification of its subscription to the
/// window, and its end (the chats it held let go); the connection is made again whenever the
/// runtime goes and comes back.
pub async fn forward_pushes(app: AppHandle) {
    let dirs = app.state::<Dirs>().inner().clone();
    let held = app.state::<Held>().inner().clone();
    let socket = lembas_device::control::socket_path(&dirs);
    held.keep(socket, cookie::path(&dirs), STREAMS, move |heard| {
        let _ = match heard {
            Heard::Push { method, params } => app.emit_to(window::LABEL, PUSH_EVENT, Push { method, params }),
            Heard::LetGo => app.emit_to(window::LABEL, LET_GO_EVENT, ()),
        };
    })
    .await;
}

/// What the window subscribes to, besides status and events (which every subscriber gets): the
/// sessions' updates and the terminals' output, which it shows live.
const STREAMS: Streams = Streams {
    sessions: true,
    terminals: true,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_chat_methods_go_through_the_held_connection() {
        let held: Vec<_> = ControlMethod::ALL.iter().copied().filter(|m| holds(*m)).collect();
        assert!(held.contains(&ControlMethod::ChatOpen) && held.contains(&ControlMethod::ChatAnswer));
        assert!(!holds(ControlMethod::SessionsStop) && !holds(ControlMethod::WindowState));
        assert!(held.iter().all(|m| m.name().starts_with("chat/")), "{held:?}");
    }

    #[test]
    fn the_runtime_s_reason_is_the_window_s_code() {
        let error = |code, data| RpcError {
            code,
            message: "said".into(),
            data,
        };
        let refused = error(rpc::INVALID_PARAMS, Some(json!({ "reason": "token_refused" })));
        assert_eq!(code_of(&refused), "token_refused");
        assert_eq!(code_of(&error(rpc::INVALID_PARAMS, None)), "refused");
        assert_eq!(code_of(&error(rpc::METHOD_NOT_FOUND, None)), "method_not_found");
        assert_eq!(
            code_of(&error(rpc::INTERNAL_ERROR, Some(json!({ "reason": 3 })))),
            "internal"
        );
        let odd = error(rpc::INVALID_PARAMS, Some(json!({ "reason": "<b>odd</b>" })));
        assert_eq!(code_of(&odd), "refused");
    }
}
