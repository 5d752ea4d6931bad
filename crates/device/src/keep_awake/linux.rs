//! Linux: logind's inhibitor lock on the system bus (`Inhibit("sleep:idle", …, "block")`), held as
//! the file descriptor logind hands back: closing it (dropping [`Hold`]) releases it, and so does
//! the process ending however it ends. The power source is UPower's `OnBattery`, what the desktop's
//! own power settings follow; without UPower on the bus, `/sys/class/power_supply`.

use std::path::Path;

use zbus::proxy::CacheProperties;
use zbus::zvariant::OwnedFd;

use super::Power;

/// The inhibitor: while this lives, logind blocks idle sleep and suspend.
pub struct Hold(#[allow(dead_code, reason = "held for its fd: dropping it releases the lock")] OwnedFd);

#[zbus::proxy(
    interface = "org.freedesktop.login1.Manager",
    default_service = "org.freedesktop.login1",
    default_path = "/org/freedesktop/login1",
    gen_blocking = false
)]
trait LoginManager {
    fn inhibit(&self, what: &str, who: &str, why: &str, mode: &str) -> zbus::Result<OwnedFd>;
}

#[zbus::proxy(
    interface = "org.freedesktop.UPower",
    default_service = "org.freedesktop.UPower",
    default_path = "/org/freedesktop/UPower",
    gen_blocking = false
)]
trait UPower {
    #[zbus(property)]
    fn on_battery(&self) -> zbus::Result<bool>;
}

/// Asks logind (on the system bus: `DBUS_SYSTEM_BUS_ADDRESS` where set) for the inhibitor.
pub async fn hold(why: &str) -> Result<Hold, String> {
    let bus = zbus::Connection::system()
        .await
        .map_err(|e| format!("no system bus ({e})"))?;
    let manager = LoginManagerProxy::new(&bus)
        .await
        .map_err(|e| format!("no login manager ({e})"))?;
    let fd = manager
        .inhibit("sleep:idle", "LLeMbas", why, "block")
        .await
        .map_err(|e| format!("the login manager refused the inhibitor ({e})"))?;
    Ok(Hold(fd))
}

pub async fn power() -> Power {
    match upower_on_battery().await {
        Some(true) => Power::Battery,
        Some(false) => Power::Mains,
        None => power_supply(Path::new("/sys/class/power_supply")),
    }
}

async fn upower_on_battery() -> Option<bool> {
    let bus = zbus::Connection::system().await.ok()?;
    let upower = UPowerProxy::builder(&bus)
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .ok()?;
    upower.on_battery().await.ok()
}

/// The kernel's view, as UPower reads it: any mains supply online is mains; else a battery
/// present is battery; nothing at all (most desktops, servers and machines in a cloud) is unknown.
fn power_supply(class: &Path) -> Power {
    let Ok(entries) = std::fs::read_dir(class) else {
        return Power::Unknown;
    };
    let read = |dir: &Path, name: &str| {
        std::fs::read_to_string(dir.join(name))
            .map(|t| t.trim().to_string())
            .unwrap_or_default()
    };
    let mut battery = false;
    for entry in entries.flatten() {
        let dir = entry.path();
        match read(&dir, "type").as_str() {
            "Mains" | "USB" if read(&dir, "online") == "1" => return Power::Mains,
            "Battery" if read(&dir, "present") != "0" => battery = true,
            _ => {}
        }
    }
    if battery { Power::Battery } else { Power::Unknown }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn supply(class: &Path, name: &str, files: &[(&str, &str)]) {
        let dir = class.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), format!("{text}\n")).unwrap();
        }
    }

    #[test]
    fn the_kernels_power_supplies_read_as_mains_battery_or_unknown() {
        let class = tempfile::tempdir().unwrap();
        let class = class.path();
        assert_eq!(power_supply(&class.join("absent")), Power::Unknown);
        assert_eq!(power_supply(class), Power::Unknown);
        supply(class, "BAT0", &[("type", "Battery"), ("present", "1")]);
        supply(class, "AC", &[("type", "Mains"), ("online", "0")]);
        assert_eq!(power_supply(class), Power::Battery);
        supply(class, "AC", &[("type", "Mains"), ("online", "1")]);
        assert_eq!(power_supply(class), Power::Mains);
    }
}
