//! The settings window, made on demand. Closing it destroys it (the default), so no webview stays
//! alive while the app sits in the tray. It can be opened on a view: the activity log (the tray)
//! or one approval card (its notification was clicked).

use std::sync::Mutex;

use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, WebviewUrl, WebviewWindowBuilder};

pub const LABEL: &str = "main";
/// The event that moves an open window to a view.
const VIEW_EVENT: &str = "show-view";

/// Where the window opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "view", rename_all = "snake_case")]
pub enum View {
    Activity,
    Card { tool_call_id: String },
}

/// The view a window being made opens on; its page asks for it once loaded (`take_view`), since an
/// event sent before its listener exists would be lost.
#[derive(Default)]
pub struct PendingView(Mutex<Option<View>>);

impl PendingView {
    pub fn take(&self) -> Option<View> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

pub fn open(app: &AppHandle) -> tauri::Result<()> {
    if let Some(window) = app.get_webview_window(LABEL) {
        window.unminimize()?;
        window.show()?;
        return window.set_focus();
    }
    WebviewWindowBuilder::new(app, LABEL, WebviewUrl::App("index.html".into()))
        .title("LLeMbas Desktop")
        .inner_size(760.0, 680.0)
        .min_inner_size(520.0, 420.0)
        .build()?;
    Ok(())
}

/// Opens the window on `view`: an open window moves to it, a new one starts on it.
pub fn open_on(app: &AppHandle, view: View) -> tauri::Result<()> {
    if app.get_webview_window(LABEL).is_some() {
        app.emit_to(LABEL, VIEW_EVENT, &view)?;
    } else if let Some(pending) = app.try_state::<PendingView>() {
        *pending.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(view);
    }
    open(app)
}
