//! The window, and the tray's lines on standard input: `{"show": null | View}` brings it forward
//! (and moves it to the view). When the input ends the tray has gone, and the window goes too.

use std::io::BufRead;
use std::sync::Mutex;

use lembas_device::poison::Recover;
use lembas_protocol::view::{View, WindowLine};
use tauri::{AppHandle, Emitter, Manager, WebviewUrl, WebviewWindowBuilder};

pub const LABEL: &str = "main";
/// The event that moves the window to a view.
const VIEW_EVENT: &str = "show-view";

/// The view the window opens on; its page asks for it once loaded (`take_view`), since an event
/// sent before its listener exists would be lost.
pub struct PendingView(Mutex<Option<View>>);

impl PendingView {
    pub fn new(view: Option<View>) -> PendingView {
        PendingView(Mutex::new(view))
    }

    pub fn take(&self) -> Option<View> {
        self.0.lock().recover().take()
    }
}

pub fn build(app: &AppHandle) -> tauri::Result<()> {
    WebviewWindowBuilder::new(app, LABEL, WebviewUrl::App("index.html".into()))
        .title("LLeMbas Desktop")
        .inner_size(760.0, 680.0)
        .min_inner_size(520.0, 420.0)
        .build()?;
    Ok(())
}

fn show(app: &AppHandle, view: Option<View>) -> tauri::Result<()> {
    let Some(window) = app.get_webview_window(LABEL) else {
        return Ok(());
    };
    window.unminimize()?;
    window.show()?;
    window.set_focus()?;
    if let Some(view) = view {
        app.emit_to(LABEL, VIEW_EVENT, view)?;
    }
    Ok(())
}

/// Reads the tray's lines on a thread of its own until the input ends, then ends the app.
pub fn follow_tray(app: AppHandle) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let done = match serde_json::from_str::<WindowLine>(&line) {
                Ok(WindowLine::Show(view)) => show(&app, view),
                Err(e) => {
                    tracing::warn!("a line from the tray is not understood: {e}");
                    Ok(())
                }
            };
            if let Err(e) = done {
                tracing::warn!("the window did not follow the tray: {e}");
            }
        }
        tracing::info!("the tray has gone: the window closes");
        app.exit(0);
    });
}
