//! LLeMbas Desktop's tray process: the device runtime (as in `lembas service run`), the tray menu
//! and the notifications, on tao's event loop with tray-icon and muda, and no webview. The window
//! is a process of its own ([`window`]), started when it opens and gone when it closes.

pub mod activity;
mod autostart;
pub mod cards;
pub mod controls;
pub mod first_run;
pub mod host;
pub mod notices;
pub mod notifier;
pub mod state;
pub mod tray;
mod tray_loop;
pub mod tray_socket;
pub mod window;

use lembas_device::settings;
use lembas_device::setup::Setup;
use std::path::PathBuf;
use tokio::sync::{mpsc, watch};

use crate::controls::CommandError;
use crate::host::Host;
use crate::state::Snapshot;
use crate::tray::{MenuId, TrayView};
use crate::tray_socket::Claim;
use crate::window::WindowProcess;
use lembas_protocol::view::View;

/// What `main` hands the tray: the device's folders and keychain entry, and the window's
/// executable (nothing below `main` reads the environment).
pub struct Given {
    pub setup: Setup,
    pub window_bin: PathBuf,
}

impl Given {
    /// As this process's environment says: [`Setup::from_env`], and the window's executable from
    /// `LEMBAS_WINDOW_BIN`, else `lembas-window` beside this one.
    pub fn from_env() -> Given {
        Given {
            setup: Setup::from_env(),
            window_bin: std::env::var_os(window::BIN_ENV)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(window::beside_this),
        }
    }
}

/// Runs the tray until Quit; the process's exit code.
pub fn run(given: Given) -> i32 {
    let started = std::time::Instant::now();
    lembas_device::log_file::init(&given.setup.dirs, "desktop");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("LLeMbas Desktop cannot start: {e}");
            return 1;
        }
    };
    let _entered = runtime.enter();
    let (lock, listener) = match tray_socket::claim(&given.setup.dirs) {
        Ok(Claim::First { lock, listener }) => (lock, listener),
        // A second launch: the first one opens its window, this one ends.
        Ok(Claim::Running) => {
            return match runtime.block_on(tray_socket::ask_to_open(&given.setup.dirs, None)) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("LLeMbas Desktop is already running, but: {e}");
                    1
                }
            };
        }
        Err(e) => {
            eprintln!(
                "LLeMbas Desktop cannot start: its socket in {} cannot be made: {e}",
                given.setup.dirs.runtime.display()
            );
            return 1;
        }
    };
    let code = tray_loop::run(started, listener, given);
    drop(lock);
    // Quit already stopped the runtime; what is left (a subscription's retry, a notice's wait)
    // is not waited for.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}

/// What the tray shows, over the host.
pub fn snapshot(host: &Host) -> Snapshot {
    let loaded = settings::load(&host.setup.dirs).map_err(|e| e.to_string());
    state::snapshot(
        &host.state(),
        loaded.as_ref().map_err(Clone::clone),
        &host.activity(),
        host.cards(),
        &host.setup.dirs.home,
        &host.setup.decisions.scheduled.setting,
    )
}

/// After the app wrote the config: redraw now rather than when the file watch notices.
pub fn after_change(host: &Host) -> Snapshot {
    host.changed.notify_one();
    snapshot(host)
}

pub fn stop_remote_work(host: &Host) -> Result<Snapshot, CommandError> {
    controls::stop_remote_work(&host.setup.dirs)?;
    host.end_link();
    Ok(after_change(host))
}

/// Redraws the tray whenever the host rings (the window reads the runtime's `window/state`).
async fn redraw(host: Host, tray: watch::Sender<Option<TrayView>>) {
    loop {
        let snapshot = snapshot(&host);
        let look = state::icon_look(&host.state(), snapshot.now, snapshot.cards.len());
        tray.send_replace(Some(TrayView::of(&snapshot, autostart::is_enabled(), look)));
        host.changed.notified().await;
    }
}

/// Acts on the menu's clicks; ends when Quit has stopped the runtime.
async fn on_clicks(mut clicks: mpsc::UnboundedReceiver<MenuId>, host: Host, window: WindowProcess) {
    while let Some(id) = clicks.recv().await {
        let open = |view| {
            window
                .open(view)
                .map_err(|e| CommandError::new("window", format!("The window cannot be opened: {e}")))
        };
        let result = match id {
            MenuId::Status | MenuId::Now => Ok(()),
            MenuId::Scheduled | MenuId::Remote => toggle(&host, id),
            MenuId::StopAll => stop_remote_work(&host).map(|_| ()),
            MenuId::Autostart => autostart::toggle().map_err(|e| CommandError::new("autostart", e)),
            MenuId::Open => open(None),
            // The oldest card first: it is the one that denies by itself soonest.
            MenuId::Approvals => match host.cards().into_iter().min_by_key(|c| c.asked_ms) {
                Some(card) => open(Some(View::Card {
                    tool_call_id: card.id,
                })),
                None => open(None),
            },
            MenuId::ActivityLog => open(Some(View::Activity)),
            MenuId::Logs => open_logs(&host.setup.dirs),
            MenuId::Quit => {
                host.quit().await;
                return;
            }
        };
        if let Err(e) = result {
            tracing::error!("{}", e.message);
            host.activity().note("error", e.message);
        }
        // Always redraw: a check item the click flipped must show the config again if the change failed.
        host.changed.notify_one();
    }
}

/// Opens the log folder in the desktop's file manager (made first: a device that never wrote a
/// line still opens a folder, not an error).
fn open_logs(dirs: &lembas_device::paths::Dirs) -> Result<(), CommandError> {
    let dir = dirs.log_dir();
    let failed = |e: std::io::Error| {
        CommandError::new(
            "logs",
            format!("The log folder {} cannot be opened: {e}", dir.display()),
        )
    };
    lembas_device::paths::ensure_private_dir(&dir).map_err(failed)?;
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    // tokio reaps the child when it ends; nothing waits for the file manager.
    tokio::process::Command::new(opener)
        .arg(&dir)
        .stdin(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(failed)
}

/// Flips a tray check item's setting from what the config says now (the menu's own tick may lag).
fn toggle(host: &Host, id: MenuId) -> Result<(), CommandError> {
    let now = settings::load(&host.setup.dirs)?;
    let change = match id {
        MenuId::Scheduled => controls::SettingChange::Scheduled(!now.remote.scheduled),
        _ => controls::SettingChange::RemoteEnabled(!now.remote.enabled),
    };
    controls::change_setting(&host.setup.dirs, change).map(|_| ())
}
