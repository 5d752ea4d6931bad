//! The adapters between the tray menu and lembas-device: each one a few lines over
//! `settings::edit::apply`, with errors turned into `{ code, message }` (the window's errors come
//! the same way from the control endpoint, see `relay`). They take the device's folders so tests
//! run them without a tray in a home of their own.

use lembas_device::paths::Dirs;
use lembas_device::settings::Settings;
use lembas_device::settings::edit::{Change, apply};

pub use lembas_device::desktop_view::CommandError;

/// One setting the window or the tray changes (the control endpoint's `settings/change` takes
/// the same).
pub use lembas_device::control::SettingChange;

pub fn change_setting(dirs: &Dirs, change: SettingChange) -> Result<Settings, CommandError> {
    Ok(apply(dirs, &[change.into()])?)
}

/// "Stop all remote work" as far as the config goes: remote work off (the running device then
/// hangs up its shells; the caller ends the link so watches stop too).
pub fn stop_remote_work(dirs: &Dirs) -> Result<Settings, CommandError> {
    Ok(apply(dirs, &[Change::RemoteEnabled(false)])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A home of its own: its folders, and its config file's path (the folder made).
    fn config() -> (tempfile::TempDir, Dirs, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let dirs = Dirs::under_home(dir.path(), dir.path());
        std::fs::create_dir_all(&dirs.config).unwrap();
        let path = dirs.config_file();
        (dir, dirs, path)
    }

    #[test]
    fn toggles_keep_the_rest_of_the_file() {
        let (_dir, dirs, path) = config();
        std::fs::write(&path, "# mine\nremote:\n  enabled: true # on\nother: 1\n").unwrap();
        let s = change_setting(&dirs, SettingChange::Scheduled(true)).unwrap();
        assert!(s.remote.scheduled && s.remote.enabled);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\n"), "{text}");
        assert!(
            text.contains("enabled: true # on") && text.contains("other: 1"),
            "{text}"
        );
        let s = stop_remote_work(&dirs).unwrap();
        assert!(!s.remote.enabled && s.remote.scheduled);
    }

    #[test]
    fn folders_are_added_removed_and_trusted() {
        let (dir, dirs, _path) = config();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let s = change_setting(&dirs, SettingChange::AddRoot(work.clone())).unwrap();
        assert_eq!(s.remote.roots, vec![work.clone()]);
        let s = change_setting(&dirs, SettingChange::Trust(work.clone())).unwrap();
        assert_eq!(s.trusted, vec![work.clone()]);
        let s = change_setting(&dirs, SettingChange::Untrust(work.clone())).unwrap();
        assert!(s.trusted.is_empty());
        let s = change_setting(&dirs, SettingChange::RemoveRoot(work.clone())).unwrap();
        assert!(s.remote.roots.is_empty());
    }

    #[test]
    fn refusals_reach_the_ui_with_a_code() {
        let (dir, dirs, path) = config();
        let missing = dir.path().join("nowhere");
        let e = change_setting(&dirs, SettingChange::AddRoot(missing)).unwrap_err();
        assert_eq!(e.code, "refused");
        assert!(e.message.contains("nowhere"), "{}", e.message);
        std::fs::write(&path, "remote: [unclosed\n").unwrap();
        let e = change_setting(&dirs, SettingChange::Terminal(true)).unwrap_err();
        assert_eq!(e.code, "config_invalid");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "remote: [unclosed\n");
    }
}
