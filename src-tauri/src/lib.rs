//! LLeMbas Desktop: the tray app. Thin adapters from the tray and the window to lembas-device,
//! which runs in this process as it does in `lembas service run`.

pub mod activity;
pub mod cards;
mod commands;
pub mod controls;
pub mod host;
pub mod notices;
pub mod notifier;
mod relay;
pub mod state;
mod tray;
mod window;

use std::sync::Arc;

use lembas_device::decisions::decisions;
use lembas_device::paths;
use lembas_device::settings;
use tauri::{AppHandle, Manager, RunEvent};
use tauri_plugin_autostart::{MacosLauncher, ManagerExt};

use crate::controls::CommandError;
use crate::host::Host;
use crate::state::Snapshot;
use crate::tray::{MenuId, Tray, TrayView};

pub fn run() {
    let started = std::time::Instant::now();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let app = tauri::Builder::default()
        // First, so a second launch is caught before anything else starts.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            if let Err(e) = window::open(app) {
                tracing::error!("cannot open the window: {e}");
            }
        }))
        .plugin(tauri_plugin_autostart::init(MacosLauncher::LaunchAgent, None))
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(tauri::generate_handler![
            commands::pick_root,
            commands::take_view,
            relay::control_call,
        ])
        .setup(move |app| {
            #[cfg(target_os = "macos")]
            app.set_activation_policy(tauri::ActivationPolicy::Accessory);
            let host = tauri::async_runtime::block_on(async { Host::start(paths::config_file()) });
            app.manage(host.clone());
            app.manage(window::PendingView::default());
            let handle = app.handle().clone();
            let open_card = move |id: &str| {
                let view = window::View::Card {
                    tool_call_id: id.to_string(),
                };
                if let Err(e) = window::open_on(&handle, view) {
                    tracing::error!("cannot open the window: {e}");
                }
            };
            tauri::async_runtime::spawn(notices::run(
                host.clone(),
                Arc::from(notifier::platform()),
                Arc::new(open_card),
            ));
            let tray = Tray::build(app.handle(), &decisions().scheduled.setting.label, on_menu)?;
            app.manage(tray);
            tracing::info!(ms = started.elapsed().as_millis() as u64, "tray ready");
            tauri::async_runtime::spawn(redraw(app.handle().clone(), host));
            tauri::async_runtime::spawn(relay::forward_pushes(app.handle().clone()));
            Ok(())
        })
        .build(tauri::generate_context!("../tauri.conf.json"));
    let app = match app {
        Ok(app) => app,
        Err(e) => {
            eprintln!("LLeMbas Desktop cannot start: {e}");
            std::process::exit(1);
        }
    };
    app.run(|_, event| {
        // Closing the last window leaves the app in the tray; only Quit (an exit code) ends it.
        if let RunEvent::ExitRequested { code: None, api, .. } = event {
            api.prevent_exit();
        }
    });
}

/// What the tray shows, from the host's state, the config file and the activity.
fn snapshot(host: &Host) -> Snapshot {
    let loaded = settings::load_from(&host.config).map_err(|e| e.to_string());
    state::snapshot(
        &host.state(),
        loaded.as_ref().map_err(Clone::clone),
        &host.activity(),
        host.cards(),
    )
}

/// After the app wrote the config: redraw now rather than when the file watch notices.
fn after_change(host: &Host) -> Snapshot {
    host.changed.notify_one();
    snapshot(host)
}

fn stop_remote_work(host: &Host) -> Result<Snapshot, CommandError> {
    controls::stop_remote_work(&host.config)?;
    host.end_link();
    Ok(after_change(host))
}

/// Redraws the tray whenever the host rings (the window reads the runtime's `window/state`).
async fn redraw(app: AppHandle, host: Host) {
    loop {
        let snapshot = snapshot(&host);
        let autostart = app.autolaunch().is_enabled().unwrap_or(false);
        let look = state::icon_look(&host.state(), snapshot.now);
        if let Some(tray) = app.try_state::<Tray>()
            && let Err(e) = tray.show(&TrayView::of(&snapshot, autostart, look))
        {
            tracing::warn!("cannot update the tray: {e}");
        }
        host.changed.notified().await;
    }
}

fn on_menu(app: &AppHandle, id: MenuId) {
    let Some(host) = app.try_state::<Host>() else {
        return;
    };
    let result = match id {
        MenuId::Status | MenuId::Now => Ok(()),
        MenuId::Scheduled | MenuId::Remote => toggle(&host, id),
        MenuId::StopAll => stop_remote_work(&host).map(|_| ()),
        MenuId::Autostart => toggle_autostart(app),
        MenuId::Open => window::open(app).map_err(|e| CommandError::new("window", e.to_string())),
        MenuId::ActivityLog => window::open_on(app, window::View::Activity)
            .map_err(|e| CommandError::new("window", e.to_string())),
        MenuId::Quit => {
            let (app, host) = (app.clone(), host.inner().clone());
            tauri::async_runtime::spawn(async move {
                host.quit().await;
                app.exit(0);
            });
            Ok(())
        }
    };
    if let Err(e) = result {
        tracing::error!("{}", e.message);
        host.activity().note("error", e.message);
    }
    // Always redraw: a check item the click flipped must show the config again if the change failed.
    host.changed.notify_one();
}

/// Flips a tray check item's setting from what the config says now (the menu's own tick may lag).
fn toggle(host: &Host, id: MenuId) -> Result<(), CommandError> {
    let now = settings::load_from(&host.config)?;
    let change = match id {
        MenuId::Scheduled => controls::SettingChange::Scheduled(!now.remote.scheduled),
        _ => controls::SettingChange::RemoteEnabled(!now.remote.enabled),
    };
    controls::change_setting(&host.config, change).map(|_| ())
}

fn toggle_autostart(app: &AppHandle) -> Result<(), CommandError> {
    let autolaunch = app.autolaunch();
    let result = match autolaunch.is_enabled() {
        Ok(true) => autolaunch.disable(),
        _ => autolaunch.enable(),
    };
    result.map_err(|e| CommandError::new("autostart", format!("Start at login could not be changed: {e}")))
}
