//! A first run that works: at start the tray opens its window by itself when no tray host will
//! show its icon (vanilla GNOME: the window is then the only place to control the device, and says
//! why) or when the device is not logged in (its login is the first thing to do).

use std::time::Duration;

use lembas_device::events::LinkState;

use crate::host::Host;
use crate::state::HostState;
use crate::window::WindowProcess;
use lembas_protocol::view::View;

/// What the window says above Home when the desktop shows no tray icons.
pub const NO_TRAY_HOST: &str = "Your desktop shows no tray icons (there is no StatusNotifier host on its session bus; on GNOME, the AppIndicator extension adds one), so LLeMbas Desktop's icon and menu do not show. This window is the place to control the device: closing it keeps the device running, and opening LLeMbas Desktop again from your applications brings it back.";

/// How long the start waits for the runtime to say whether it is logged in.
const SETTLE: Duration = Duration::from_secs(5);

/// Opens the window if this start needs it (see the module's comment).
pub async fn open_at_start(host: Host, window: WindowProcess) {
    if !tray_host_present().await {
        tracing::warn!("no tray host on the session bus: the tray icon will not show; opening the window");
        host.activity().note("notice", NO_TRAY_HOST.to_string());
        host.changed.notify_one();
        let view = View::Home {
            notice: Some(NO_TRAY_HOST.to_string()),
        };
        if let Err(e) = window.open(Some(view)) {
            tracing::error!("cannot open the window: {e}");
        }
        return;
    }
    let mut state = host.watch_state();
    let decided = |s: &HostState| {
        s.held_by.is_some()
            || s.problem.is_some()
            || s.status
                .as_ref()
                .is_some_and(|st| !matches!(st.link, LinkState::Starting | LinkState::Connecting))
    };
    let not_logged_in = match tokio::time::timeout(SETTLE, state.wait_for(decided)).await {
        Ok(Ok(s)) => s
            .status
            .as_ref()
            .is_some_and(|st| st.link == LinkState::NotLoggedIn),
        _ => false,
    };
    if not_logged_in {
        tracing::info!("not logged in: opening the window on its login");
        if let Err(e) = window.open(None) {
            tracing::error!("cannot open the window: {e}");
        }
    }
}

/// Whether a tray host will show the icon. On Linux the session bus is asked (no bus: none);
/// elsewhere the OS always has one.
async fn tray_host_present() -> bool {
    #[cfg(target_os = "linux")]
    {
        matches!(lembas_device::desktop_bus::ask().await, Ok(bus) if bus.tray_host)
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}
