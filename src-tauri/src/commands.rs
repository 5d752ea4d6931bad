//! The window's commands. The tray process holds the device's state for the window, so most are a
//! call over the tray's socket (its `desktop/*` methods, `lembas_desktop::tray_socket`); the folder
//! picker, the activity log and the first view are the window's own.

use std::path::PathBuf;

use lembas_device::status::now_ms;
use serde_json::{Value, json};
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tokio::sync::oneshot;

use crate::activity_file;
use crate::relay::{self, CommandError};
use crate::window::PendingView;

/// The tray process's socket, as it passed it.
pub struct TraySocket(pub PathBuf);

async fn tray(socket: &State<'_, TraySocket>, method: &str, params: Value) -> Result<Value, CommandError> {
    relay::call_at(socket.0.clone(), method, params).await
}

#[tauri::command]
pub async fn get_state(socket: State<'_, TraySocket>) -> Result<Value, CommandError> {
    tray(&socket, "desktop/state", json!({})).await
}

#[tauri::command]
pub async fn change_setting(socket: State<'_, TraySocket>, change: Value) -> Result<Value, CommandError> {
    tray(&socket, "desktop/change_setting", json!({ "change": change })).await
}

/// Asks for a folder with the system's picker and adds it; a cancelled picker changes nothing.
#[tauri::command]
pub async fn pick_root(app: AppHandle, socket: State<'_, TraySocket>) -> Result<Value, CommandError> {
    let (tx, rx) = oneshot::channel();
    app.dialog()
        .file()
        .set_title("A folder remote work may use")
        .pick_folder(move |folder| {
            let _ = tx.send(folder);
        });
    let Some(folder) = rx.await.ok().flatten() else {
        return get_state(socket).await;
    };
    let path = folder
        .into_path()
        .map_err(|e| CommandError::new("refused", format!("That folder cannot be used: {e}")))?;
    let change = json!({ "setting": "add_root", "value": path });
    change_setting(socket, change).await
}

#[tauri::command]
pub async fn login(
    socket: State<'_, TraySocket>,
    server: String,
    token: String,
) -> Result<Value, CommandError> {
    tray(
        &socket,
        "desktop/login",
        json!({ "server": server, "token": token }),
    )
    .await
}

#[tauri::command]
pub async fn logout(socket: State<'_, TraySocket>) -> Result<Value, CommandError> {
    tray(&socket, "desktop/logout", json!({})).await
}

/// The person's answer to an approval card (`once`, `session` or `deny`); `false` when it had been
/// answered elsewhere first.
#[tauri::command]
pub async fn answer_approval(
    socket: State<'_, TraySocket>,
    tool_call_id: String,
    option_id: String,
) -> Result<Value, CommandError> {
    let params = json!({ "tool_call_id": tool_call_id, "option_id": option_id });
    tray(&socket, "desktop/answer_approval", params).await
}

#[tauri::command]
pub async fn stop_remote_work(socket: State<'_, TraySocket>) -> Result<Value, CommandError> {
    tray(&socket, "desktop/stop_remote_work", json!({})).await
}

/// The newest lines of the activity log for the Activity view; `limit` at most
/// [`activity_file::MOST`].
#[tauri::command]
pub async fn read_activity(limit: Option<usize>) -> Result<activity_file::Page, CommandError> {
    let path = lembas_device::activity_log::path();
    let n = limit.unwrap_or(activity_file::MOST);
    let read = tokio::task::spawn_blocking(move || activity_file::read(&path, n))
        .await
        .map_err(|e| CommandError::new("internal", e.to_string()))?;
    let page =
        read.map_err(|e| CommandError::new("activity", format!("The activity log cannot be read: {e}")))?;
    tracing::debug!(lines = page.lines.len(), "the window read the activity log");
    Ok(page)
}

/// The view the window opens on (the tray's activity log, a clicked notification), once.
#[tauri::command]
pub fn take_view(pending: State<'_, PendingView>) -> Option<Value> {
    pending.take()
}

/// The page's first paint with the device's state: logged with the wall clock, so the app test
/// measures open → drawn against the tray's "window started"; `ms` is the page's own clock.
#[tauri::command]
pub fn drawn(ms: f64) {
    tracing::info!(at_ms = now_ms(), page_ms = ms.round() as u64, "window drawn");
}
