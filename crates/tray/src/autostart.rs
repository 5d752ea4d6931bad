//! Start at login: the same entry tauri-plugin-autostart made (it wraps auto-launch), named after
//! the app and pointing at this executable (a login agent on macOS).

use auto_launch::{AutoLaunch, AutoLaunchBuilder};

const APP_NAME: &str = "LLeMbas Desktop";

fn entry() -> Result<AutoLaunch, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    AutoLaunchBuilder::new()
        .set_app_name(APP_NAME)
        .set_app_path(&exe.display().to_string())
        .set_use_launch_agent(true)
        .build()
        .map_err(|e| e.to_string())
}

pub fn is_enabled() -> bool {
    entry()
        .and_then(|e| e.is_enabled().map_err(|e| e.to_string()))
        .unwrap_or(false)
}

/// Flips Start at login; the error is a sentence for the activity list.
pub fn toggle() -> Result<(), String> {
    let entry = entry()?;
    let result = match entry.is_enabled() {
        Ok(true) => entry.disable(),
        _ => entry.enable(),
    };
    result.map_err(|e| format!("Start at login could not be changed: {e}"))
}
