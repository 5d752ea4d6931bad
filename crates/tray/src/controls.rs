//! The adapters between the tray menu and lembas-device: each one a few lines over
//! `settings::edit::apply_to`, with errors turned into `{ code, message }` (the window's errors
//! come the same way from the control endpoint, see `relay`). They take the config path so tests
//! run them without a tray or a home folder.

use std::path::Path;

use lembas_device::settings::Settings;
use lembas_device::settings::edit::{Change, apply_to};

pub use lembas_device::face::CommandError;

/// One setting the window or the tray changes (the control endpoint's `settings/change` takes
/// the same).
pub use lembas_device::control::SettingChange;

pub fn change_setting(config: &Path, change: SettingChange) -> Result<Settings, CommandError> {
    Ok(apply_to(config, &[change.into()])?)
}

/// "Stop all remote work" as far as the config goes: remote work off (the running device then
/// hangs up its shells; the caller ends the link so watches stop too).
pub fn stop_remote_work(config: &Path) -> Result<Settings, CommandError> {
    Ok(apply_to(config, &[Change::RemoteEnabled(false)])?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn config() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        (dir, path)
    }

    #[test]
    fn toggles_keep_the_rest_of_the_file() {
        let (_dir, path) = config();
        std::fs::write(&path, "# mine\nremote:\n  enabled: true # on\nother: 1\n").unwrap();
        let s = change_setting(&path, SettingChange::Scheduled(true)).unwrap();
        assert!(s.remote.scheduled && s.remote.enabled);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# mine\n"), "{text}");
        assert!(
            text.contains("enabled: true # on") && text.contains("other: 1"),
            "{text}"
        );
        let s = stop_remote_work(&path).unwrap();
        assert!(!s.remote.enabled && s.remote.scheduled);
    }

    #[test]
    fn folders_are_added_removed_and_trusted() {
        let (dir, path) = config();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let s = change_setting(&path, SettingChange::AddRoot(work.clone())).unwrap();
        assert_eq!(s.remote.roots, vec![work.clone()]);
        let s = change_setting(&path, SettingChange::Trust(work.clone())).unwrap();
        assert_eq!(s.trusted, vec![work.clone()]);
        let s = change_setting(&path, SettingChange::Untrust(work.clone())).unwrap();
        assert!(s.trusted.is_empty());
        let s = change_setting(&path, SettingChange::RemoveRoot(work.clone())).unwrap();
        assert!(s.remote.roots.is_empty());
    }

    #[test]
    fn refusals_reach_the_ui_with_a_code() {
        let (dir, path) = config();
        let missing = dir.path().join("nowhere");
        let e = change_setting(&path, SettingChange::AddRoot(missing)).unwrap_err();
        assert_eq!(e.code, "refused");
        assert!(e.message.contains("nowhere"), "{}", e.message);
        std::fs::write(&path, "remote: [unclosed\n").unwrap();
        let e = change_setting(&path, SettingChange::Terminal(true)).unwrap_err();
        assert_eq!(e.code, "config_invalid");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "remote: [unclosed\n");
    }
}
