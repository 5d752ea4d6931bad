//! What the desktop's session bus offers LLeMbas Desktop (Linux): a tray host (the StatusNotifier
//! watcher, without which no tray icon shows: vanilla GNOME has none) and a notification server.
//! `lembas doctor` reports both; the tray opens its window at start when no tray host will show it.

/// The bus name a tray host owns.
pub const TRAY_HOST: &str = "org.kde.StatusNotifierWatcher";
/// The bus name a notification server owns.
pub const NOTIFICATIONS: &str = "org.freedesktop.Notifications";

/// Who is on the session bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DesktopBus {
    pub tray_host: bool,
    pub notifications: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("no D-Bus session bus: {0}")]
    NoBus(String),
    #[error("the session bus does not answer: {0}")]
    NoAnswer(String),
}

/// Asks the session bus who owns the tray host's and the notification server's names.
pub async fn ask() -> Result<DesktopBus, BusError> {
    let bus = zbus::Connection::session()
        .await
        .map_err(|e| BusError::NoBus(e.to_string()))?;
    let proxy = zbus::fdo::DBusProxy::new(&bus)
        .await
        .map_err(|e| BusError::NoAnswer(e.to_string()))?;
    let has = |name: &'static str| {
        let proxy = proxy.clone();
        async move {
            match zbus::names::BusName::try_from(name) {
                Ok(name) => proxy.name_has_owner(name).await.unwrap_or(false),
                Err(_) => false,
            }
        }
    };
    Ok(DesktopBus {
        tray_host: has(TRAY_HOST).await,
        notifications: has(NOTIFICATIONS).await,
    })
}
