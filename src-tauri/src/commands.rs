//! The window's own commands: what needs the window's process (the system's folder picker, the
//! view it opens on). Everything else the window asks the device runtime through the control
//! endpoint (`relay::control_call`), so these need no handle on the runtime.

use lembas_device::status::now_ms;
use lembas_protocol::view::View;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt;
use tokio::sync::oneshot;

use crate::relay::CommandError;
use crate::window::PendingView;

/// Asks for a folder with the system's picker: its path, which the window then adds with the
/// control endpoint's `settings/change add_root`; `None` when the picker was cancelled.
#[tauri::command]
pub async fn pick_root(app: AppHandle) -> Result<Option<String>, CommandError> {
    let (tx, rx) = oneshot::channel();
    app.dialog()
        .file()
        .set_title("A folder remote work may use")
        .pick_folder(move |folder| {
            let _ = tx.send(folder);
        });
    let Some(folder) = rx.await.ok().flatten() else {
        return Ok(None);
    };
    let path = folder
        .into_path()
        .map_err(|e| CommandError::new("refused", format!("That folder cannot be used: {e}")))?;
    path.to_str().map(|p| Some(p.to_string())).ok_or_else(|| {
        CommandError::new(
            "refused",
            format!(
                "{} cannot be used: its name is not valid Unicode.",
                path.display()
            ),
        )
    })
}

/// The view the window opens on (the tray's activity log, a clicked notification), once.
#[tauri::command]
pub fn take_view(pending: State<'_, PendingView>) -> Option<View> {
    pending.take()
}

/// The page's first paint with the device's state: logged with the wall clock, so the app test
/// measures open → drawn against the tray's "window started"; `ms` is the page's own clock.
#[tauri::command]
pub fn drawn(ms: f64) {
    tracing::info!(at_ms = now_ms(), page_ms = ms.round() as u64, "window drawn");
}
