//! The window's commands: typed, each a few lines over [`crate::controls`] and the host.

use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tokio::sync::oneshot;

use crate::activity_file;
use crate::controls::{self, CommandError, LoginReport, SettingChange};
use crate::host::Host;
use crate::state::Snapshot;
use crate::window::{PendingView, View};

#[tauri::command]
pub fn get_state(host: State<'_, Host>) -> Snapshot {
    crate::snapshot(&host)
}

#[tauri::command]
pub fn change_setting(host: State<'_, Host>, change: SettingChange) -> Result<Snapshot, CommandError> {
    controls::change_setting(&host.config, change)?;
    Ok(crate::after_change(&host))
}

/// Asks for a folder with the system's picker and adds it; a cancelled picker changes nothing.
#[tauri::command]
pub async fn pick_root(app: AppHandle, host: State<'_, Host>) -> Result<Snapshot, CommandError> {
    let (tx, rx) = oneshot::channel();
    app.dialog()
        .file()
        .set_title("A folder remote work may use")
        .pick_folder(move |folder| {
            let _ = tx.send(folder);
        });
    let Some(folder) = rx.await.ok().flatten() else {
        return Ok(crate::snapshot(&host));
    };
    let path = folder
        .into_path()
        .map_err(|e| CommandError::new("refused", format!("That folder cannot be used: {e}")))?;
    controls::change_setting(&host.config, SettingChange::AddRoot(path))?;
    Ok(crate::after_change(&host))
}

#[tauri::command]
pub async fn login(
    host: State<'_, Host>,
    server: String,
    token: String,
) -> Result<LoginReport, CommandError> {
    let report = controls::login(&server, &token).await;
    drop(token);
    let report = report?;
    // A new token for the same server leaves the config as it was: dial again explicitly.
    host.redial();
    Ok(report)
}

#[tauri::command]
pub async fn logout(host: State<'_, Host>) -> Result<String, CommandError> {
    let said = controls::logout().await;
    // A link open with the old token ends now, not at its next drop.
    host.redial();
    said
}

/// The person's answer to an approval card (`once`, `session` or `deny`); `false` when it had been
/// answered elsewhere first.
#[tauri::command]
pub async fn answer_approval(
    host: State<'_, Host>,
    tool_call_id: String,
    option_id: String,
) -> Result<bool, CommandError> {
    Ok(host.answer_approval(tool_call_id, option_id).await)
}

#[tauri::command]
pub fn stop_remote_work(host: State<'_, Host>) -> Result<Snapshot, CommandError> {
    crate::stop_remote_work(&host)
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

/// The view a new window opens on (the tray's activity log, a clicked notification), once.
#[tauri::command]
pub fn take_view(pending: State<'_, PendingView>) -> Option<View> {
    pending.take()
}
