//! What the tray and the window show, computed from the device's state, the settings and the
//! activity. Pure: the tray and the window only render it. It lives with the runtime so the
//! runtime can serve the window's snapshot over the control endpoint (`window/state`): the window
//! then needs nothing but the socket, whichever process runs the device.

pub mod activity;
pub mod cards;
pub mod pending;

use lembas_protocol::limits::Limits;
use std::path::{Path, PathBuf};

use crate::decisions;
use crate::events::LinkState;
use crate::policy::Mode;
use crate::policy::roots::{self, is_trusted};
use crate::settings::{Settings, SettingsError};
use crate::status::Status;
use serde::Serialize;

use activity::{Entry, Now};
use pending::ApprovalCard;

/// Who runs the device and what it last said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostState {
    /// The runtime's status: this app's own, or the status file of the process holding the lock.
    pub status: Option<Status>,
    /// Another process holds the device lock (a headless `lembas service run`).
    pub held_by: Option<String>,
    /// Why the app's runtime could not start (an invalid config, an unusable lock file).
    pub problem: Option<String>,
}

/// The tray icon's looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IconLook {
    Linked,
    Active,
    Offline,
    /// An approval card waits for the person: it wins over every other look.
    NeedsYou,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct LinkView {
    /// The state's code, for the UI to branch on (`linked`, `offline`, `not_logged_in`, ...).
    pub state: &'static str,
    /// The tray's status line.
    pub line: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RootView {
    pub path: String,
    pub trusted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct RemoteView {
    pub enabled: bool,
    pub scheduled: bool,
    pub terminal: bool,
    pub require_trust: bool,
    pub max_mode: Mode,
    pub roots: Vec<RootView>,
    /// Whether remote commands run in a kernel sandbox here, as a sentence.
    pub sandbox: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SettingText {
    pub label: String,
    pub description: String,
}

/// Everything the window shows, sent whole on every change (it is small).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Snapshot {
    pub link: LinkView,
    pub held_by: Option<String>,
    pub server: Option<String>,
    pub connection: Option<String>,
    pub last_error: Option<String>,
    /// The limits as last sent to the instance.
    pub limits: Option<Limits>,
    /// The config cannot be read: the reason, and the settings shown are the defaults.
    pub settings_error: Option<String>,
    pub remote: RemoteView,
    pub scheduled_setting: SettingText,
    pub modes: Vec<Mode>,
    pub now: Now,
    pub now_line: String,
    /// The person's home folder: a face shows folders under it as `~/…` (cards and sessions carry
    /// whole paths).
    pub home: String,
    pub activity: Vec<Entry>,
    /// The approval cards waiting for an answer, oldest first.
    pub cards: Vec<ApprovalCard>,
}

/// The window's line for `support` (`namespaces, landlock ABI 7 (scopes), seccomp`, `seatbelt`,
/// `none: <why>`).
fn sandbox_line(support: &str) -> String {
    match support.strip_prefix("none: ") {
        Some(why) => format!(
            "Commands are not sandboxed here ({why}): only the permission judge stands between a command and your files."
        ),
        None => format!(
            "Commands run in a kernel sandbox ({support}): they write only inside these folders and their own temp folder, and never read your keys, sockets or other programs."
        ),
    }
}

pub fn link_view(host: &HostState) -> LinkView {
    let Some(status) = &host.status else {
        let line = match (&host.problem, &host.held_by) {
            (Some(_), _) => "Not running: see the window".to_string(),
            (None, Some(holder)) => format!("Run by {holder}"),
            (None, None) => "Starting…".to_string(),
        };
        return LinkView {
            state: if host.problem.is_some() {
                "problem"
            } else {
                "starting"
            },
            line,
        };
    };
    let (state, mut line) = match &status.link {
        LinkState::Starting | LinkState::Connecting => ("connecting", "Connecting…".to_string()),
        LinkState::Linked => {
            let name = status
                .connection
                .as_deref()
                .or(status.server.as_deref())
                .unwrap_or("the instance");
            ("linked", format!("Linked to {name}"))
        }
        LinkState::Offline { retry_in_ms } => (
            "offline",
            format!("Offline, retrying in {}s", retry_in_ms.div_ceil(1000)),
        ),
        LinkState::NotLoggedIn => ("not_logged_in", "Not logged in".to_string()),
        LinkState::ServerNeedsUpdate => ("server_needs_update", "Server needs updating".to_string()),
        LinkState::TokenRefused => ("token_refused", "Token refused: log in again".to_string()),
        LinkState::Stopped => ("stopped", "Stopped".to_string()),
    };
    if let Some(holder) = &host.held_by {
        line = format!("{line} (run by {holder})");
    }
    LinkView { state, line }
}

/// `waiting`: the approval cards open now.
pub fn icon_look(host: &HostState, now: Now, waiting: usize) -> IconLook {
    match host.status.as_ref().map(|s| &s.link) {
        _ if waiting > 0 => IconLook::NeedsYou,
        Some(LinkState::Linked) if !now.is_idle() => IconLook::Active,
        Some(LinkState::Linked) => IconLook::Linked,
        _ => IconLook::Offline,
    }
}

/// The folders remote work may use, each marked trusted when it or a folder above it is.
pub fn root_views(settings: &Settings) -> Vec<RootView> {
    let trusted: Vec<PathBuf> = settings
        .trusted
        .iter()
        .map(|t| roots::resolve(t).unwrap_or_else(|_| t.clone()))
        .collect();
    settings
        .roots()
        .into_iter()
        .map(|root| {
            let resolved = roots::resolve(&root).unwrap_or_else(|_| root.clone());
            RootView {
                trusted: is_trusted(&resolved, &trusted),
                path: root.to_string_lossy().into_owned(),
            }
        })
        .collect()
}

pub fn snapshot(
    host: &HostState,
    settings: Result<&Settings, String>,
    activity: &activity::Activity,
    cards: Vec<ApprovalCard>,
    home: &Path,
    setting: &decisions::Setting,
) -> Snapshot {
    let defaults = Settings::default();
    let (settings, settings_error) = match settings {
        Ok(s) => (s, None),
        Err(e) => (&defaults, Some(e)),
    };
    let status = host.status.as_ref();
    let now = activity.now();
    Snapshot {
        link: link_view(host),
        held_by: host.held_by.clone(),
        server: settings.server.as_ref().map(|s| s.url.clone()),
        connection: settings.server.as_ref().and_then(|s| s.connection.clone()),
        last_error: status
            .and_then(|s| s.last_error.clone())
            .or_else(|| host.problem.clone()),
        limits: status
            .and_then(|s| s.limits.clone())
            .or_else(|| activity.limits().cloned()),
        settings_error,
        remote: RemoteView {
            enabled: settings.remote.enabled,
            scheduled: settings.remote.scheduled,
            terminal: settings.remote.terminal,
            require_trust: settings.remote.require_trust,
            max_mode: settings.remote.max_mode,
            roots: root_views(settings),
            sandbox: sandbox_line(
                &status
                    .and_then(|s| s.sandbox.clone())
                    .unwrap_or_else(crate::sandbox::support),
            ),
        },
        scheduled_setting: SettingText {
            label: setting.label.clone(),
            description: setting.description.clone(),
        },
        modes: Mode::ALL.to_vec(),
        now,
        now_line: activity::now_line(
            now,
            &activity.working_folders(),
            home,
            status.and_then(|s| s.keep_awake.as_ref()),
        ),
        home: home.display().to_string(),
        activity: activity.entries(),
        cards,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(link: LinkState) -> HostState {
        let mut status = Status::new();
        status.link = link;
        status.server = Some("https://llm.example".into());
        status.connection = Some("home".into());
        HostState {
            status: Some(status),
            ..HostState::default()
        }
    }

    #[test]
    fn status_lines_say_each_state() {
        let line = |l| link_view(&host(l)).line;
        assert_eq!(line(LinkState::Linked), "Linked to home");
        assert_eq!(line(LinkState::Connecting), "Connecting…");
        assert_eq!(
            line(LinkState::Offline { retry_in_ms: 7200 }),
            "Offline, retrying in 8s"
        );
        assert_eq!(line(LinkState::NotLoggedIn), "Not logged in");
        assert_eq!(line(LinkState::ServerNeedsUpdate), "Server needs updating");
        assert_eq!(line(LinkState::TokenRefused), "Token refused: log in again");
    }

    #[test]
    fn a_headless_holder_is_named() {
        let mut h = host(LinkState::Linked);
        h.held_by = Some("lembas service run (pid 7)".into());
        assert_eq!(
            link_view(&h).line,
            "Linked to home (run by lembas service run (pid 7))"
        );
        h.status = None;
        assert_eq!(link_view(&h).line, "Run by lembas service run (pid 7)");
    }

    #[test]
    fn the_icon_follows_link_and_work() {
        let busy = Now {
            terminals: 1,
            watches: 0,
            turns: 0,
        };
        assert_eq!(
            icon_look(&host(LinkState::Linked), Now::default(), 0),
            IconLook::Linked
        );
        assert_eq!(icon_look(&host(LinkState::Linked), busy, 0), IconLook::Active);
        assert_eq!(
            icon_look(&host(LinkState::NotLoggedIn), busy, 0),
            IconLook::Offline
        );
        assert_eq!(
            icon_look(&HostState::default(), Now::default(), 0),
            IconLook::Offline
        );
        // A card waiting wins: the person is needed, whatever else is going on.
        assert_eq!(icon_look(&host(LinkState::Linked), busy, 1), IconLook::NeedsYou);
        assert_eq!(
            icon_look(&host(LinkState::Offline { retry_in_ms: 1000 }), Now::default(), 2),
            IconLook::NeedsYou
        );
    }

    #[test]
    fn roots_below_a_trusted_folder_are_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(a.join("inner")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let mut s = Settings::default();
        s.remote.roots = vec![a.join("inner"), b.clone()];
        s.trusted = vec![a.clone()];
        let views = root_views(&s);
        assert!(views[0].trusted);
        assert!(!views[1].trusted);
    }
}

/// An error as the UI gets it: it branches on `code` and shows `message`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommandError {
    pub code: String,
    pub message: String,
}

impl CommandError {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
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
