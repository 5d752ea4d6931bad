//! The adapters between the app (tray menu and window commands) and lembas-device: each one a few
//! lines over `settings::edit::apply_to` or `login`, with errors turned into `{ code, message }`.
//! They take the config path so tests run them without a webview, a tray or a home folder.

use std::path::{Path, PathBuf};

use lembas_device::keychain::{Token, TokenStorage};
use lembas_device::login::{self, LoginError};
use lembas_device::policy::Mode;
use lembas_device::settings::edit::{Change, apply_to};
use lembas_device::settings::{Settings, SettingsError};
use serde::{Deserialize, Serialize};

/// An error as the UI gets it: it branches on `code` and shows `message`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandError {
    pub code: &'static str,
    pub message: String,
}

impl CommandError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl From<SettingsError> for CommandError {
    fn from(e: SettingsError) -> Self {
        let code = match &e {
            SettingsError::Refused(_) => "refused",
            SettingsError::Invalid { .. } => "config_invalid",
            SettingsError::Contended { .. } => "config_busy",
            _ => "config_unwritable",
        };
        CommandError::new(code, e.to_string())
    }
}

/// One setting the window or the tray changes: a typed subset of [`Change`] (the login has its
/// own adapter; nothing here passes arbitrary changes through).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "setting", content = "value", rename_all = "snake_case")]
pub enum SettingChange {
    RemoteEnabled(bool),
    Scheduled(bool),
    Terminal(bool),
    RequireTrust(bool),
    MaxMode(Mode),
    AddRoot(PathBuf),
    RemoveRoot(PathBuf),
    Trust(PathBuf),
    Untrust(PathBuf),
}

impl From<SettingChange> for Change {
    fn from(change: SettingChange) -> Self {
        match change {
            SettingChange::RemoteEnabled(b) => Change::RemoteEnabled(b),
            SettingChange::Scheduled(b) => Change::Scheduled(b),
            SettingChange::Terminal(b) => Change::Terminal(b),
            SettingChange::RequireTrust(b) => Change::RequireTrust(b),
            SettingChange::MaxMode(m) => Change::MaxMode(m),
            SettingChange::AddRoot(p) => Change::AddRoot(p),
            SettingChange::RemoveRoot(p) => Change::RemoveRoot(p),
            SettingChange::Trust(p) => Change::Trust(p),
            SettingChange::Untrust(p) => Change::Untrust(p),
        }
    }
}

pub fn change_setting(config: &Path, change: SettingChange) -> Result<Settings, CommandError> {
    Ok(apply_to(config, &[change.into()])?)
}

/// "Stop all remote work" as far as the config goes: remote work off (the running device then
/// hangs up its shells; the caller ends the link so watches stop too).
pub fn stop_remote_work(config: &Path) -> Result<Settings, CommandError> {
    Ok(apply_to(config, &[Change::RemoteEnabled(false)])?)
}

/// What the window says after a login.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoginReport {
    pub message: String,
}

/// `lembas login --token-stdin`'s path with the token from the window's field (never logged).
pub async fn login(server: &str, token: &str) -> Result<LoginReport, CommandError> {
    let token = Token::new(token)
        .map_err(|_| CommandError::new("malformed_token", "Paste the device token first."))?;
    let done = login::login(server, token, TokenStorage::Keychain)
        .await
        .map_err(login_error)?;
    let name = done
        .name
        .or(done.connection)
        .unwrap_or_else(|| done.base_url.clone());
    let account = done.account.map(|a| format!(" as {a}")).unwrap_or_default();
    let again = if done.fresh { "" } else { " again" };
    Ok(LoginReport {
        message: format!(
            "Logged in{again} to {name} ({}), LLeMbas {}{account}. The token is in the OS keychain.",
            done.base_url, done.version
        ),
    })
}

fn login_error(e: LoginError) -> CommandError {
    let code = match &e {
        // The core's sentence speaks of standard input; the window has a field.
        LoginError::MalformedToken => {
            return CommandError::new(
                "malformed_token",
                "The token has spaces or line breaks inside it; paste only the token, on one line.",
            );
        }
        LoginError::BadServer(_) => "bad_server",
        LoginError::ServerNeedsUpdate(_) | LoginError::OlderServer { .. } => "server_needs_update",
        LoginError::Unreachable { .. } => "unreachable",
        LoginError::TokenRefused { .. } => "token_refused",
        LoginError::NoLinkScope { .. } => "no_link_scope",
        LoginError::BadAnswer { .. } => "bad_answer",
        LoginError::Config(_) | LoginError::Save(_) => "config_unwritable",
        LoginError::Keychain(_) => "keychain",
        LoginError::Internal(_) => "internal",
    };
    CommandError::new(code, e.to_string())
}

pub async fn logout() -> Result<String, CommandError> {
    match login::logout().await {
        Ok(done) => Ok(match done.server {
            Some(server) => format!(
                "Logged out of {server}: the login is gone from the config and the token from this computer."
            ),
            None => "This device was not logged in; any token left is gone too.".to_string(),
        }),
        Err(e) => Err(CommandError::new("logout_incomplete", e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_peer::{Peer, PeerConfig};
    use serde_json::json;

    fn config() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        (dir, path)
    }

    #[test]
    fn the_ui_sends_typed_changes() {
        let parse = |v| serde_json::from_value::<SettingChange>(v);
        assert_eq!(
            parse(json!({ "setting": "scheduled", "value": true })).unwrap(),
            SettingChange::Scheduled(true)
        );
        assert_eq!(
            parse(json!({ "setting": "max_mode", "value": "auto" })).unwrap(),
            SettingChange::MaxMode(Mode::Auto)
        );
        assert!(parse(json!({ "setting": "server", "value": "x" })).is_err());
        assert!(parse(json!({ "setting": "max_mode", "value": "root" })).is_err());
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

    #[tokio::test]
    async fn an_empty_or_broken_token_is_refused_before_any_network() {
        let e = login("http://127.0.0.1:9", "  ").await.unwrap_err();
        assert_eq!(e.code, "malformed_token");
        let e = login("http://127.0.0.1:9", "two words").await.unwrap_err();
        assert_eq!(e.code, "malformed_token");
        assert!(
            !e.message.contains("two"),
            "the token must not be echoed: {}",
            e.message
        );
    }

    #[tokio::test]
    async fn an_unreachable_server_says_so() {
        // Port 9 (discard) is closed on test machines: the dial is refused at once.
        let e = login("http://127.0.0.1:9", "tok").await.unwrap_err();
        assert_eq!(e.code, "unreachable", "{}", e.message);
    }

    #[tokio::test]
    async fn a_refused_token_and_an_old_server_say_what_to_do() {
        let peer = Peer::start(PeerConfig::with_token("right")).await.unwrap();
        let e = login(&peer.url(), "wrong").await.unwrap_err();
        assert_eq!(e.code, "token_refused", "{}", e.message);
        assert!(e.message.contains("Get a new device token"), "{}", e.message);
        peer.stop().await;
        let old = Peer::start(PeerConfig::with_token("right").protocol_2_server())
            .await
            .unwrap();
        let e = login(&old.url(), "right").await.unwrap_err();
        assert_eq!(e.code, "server_needs_update", "{}", e.message);
        old.stop().await;
    }
}
