//! The settings window, made on demand. Closing it destroys it (the default), so no webview stays
//! alive while the app sits in the tray.

use tauri::{AppHandle, Manager, WebviewUrl, WebviewWindowBuilder};

pub const LABEL: &str = "main";

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
