//! The global config (`config.yaml`): typed reads with defaults here; the one lossless, atomic
//! write path in [`edit`]. The file is the source of truth: the CLI, the tray and the window all
//! write it through [`edit::apply`], and a running device reacts to it changing.

use serde::Deserialize;
use std::path::{Path, PathBuf};

use crate::paths::{Dirs, expand_tilde, resolved};
use crate::policy::Mode;
pub use crate::policy::bash_judge::BashRules;
use crate::policy::roots::{self, FolderRules};
pub use project_rules::{project_bash_rules, project_rules};

mod atomic_write;
pub mod edit;
mod project_rules;
pub mod watch;

/// Everything the device reads from `config.yaml`. Unknown keys are ignored here and kept on write.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The instance this device is logged in to (`server: { url, connection }`).
    pub server: Option<Server>,
    /// `<connection>/<id>` of the embedding model, set at login when none is set.
    pub embedding: Option<String>,
    pub remote: Remote,
    /// Trusted projects: a directory is trusted when it or an ancestor is listed.
    pub trusted: Vec<PathBuf>,
    pub permissions: Permissions,
    /// Chats started at this computer (`lembas chat`, the window's composer).
    pub chat: Chat,
    /// Optional overrides of the link's timings (docs/protocol.md `link`), for slow or lossy networks
    /// and for tests; absent keys keep the decided values.
    pub link: LinkTimings,
    /// Not in the file: the home folder of the person whose file this is ([`load`] sets it), what
    /// `~` means in the folder lists and where [`FolderRules`] finds the credential folders.
    #[serde(skip)]
    pub home: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct LinkTimings {
    pub ping_interval_ms: Option<u64>,
    pub dead_after_missed_pings: Option<u32>,
    pub backoff_first_ms: Option<u64>,
    pub backoff_max_ms: Option<u64>,
    pub stable_after_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct Server {
    pub url: String,
    #[serde(default)]
    pub connection: Option<String>,
}

/// The `remote:` block (docs/protocol.md, "The device's global config").
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct Remote {
    pub enabled: bool,
    pub roots: Vec<PathBuf>,
    pub max_mode: Mode,
    pub require_trust: bool,
    pub terminal: bool,
    pub terminal_integration: bool,
    pub scheduled: bool,
    /// Seconds.
    pub approval_timeout: u64,
    /// Whether a command may run where no kernel sandbox can be had (docs/protocol.md "The sandbox under
    /// every command").
    pub sandbox: SandboxSetting,
    /// Variables a command keeps although their names look secret (`KEY`, `TOKEN`…).
    pub env_keep: Vec<String>,
    /// Whether the computer is kept from sleeping while remote work runs (`crate::keep_awake`).
    pub keep_awake: KeepAwakeSetting,
}

/// The `chat:` block.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct Chat {
    /// Whether a new chat is shared with the instance from its start.
    pub share: ChatShare,
}

/// `chat.share`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatShare {
    /// Once per folder, the front end asks; the answer is kept for the folder.
    #[default]
    Ask,
    Always,
    /// Not from the start (`/share` still shares).
    Never,
}

/// `remote.keep_awake`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeepAwakeSetting {
    /// Only while the computer runs on mains power: a laptop on battery sleeps as it would.
    #[default]
    OnPower,
    Always,
    Never,
}

impl KeepAwakeSetting {
    pub const ALL: [KeepAwakeSetting; 3] = [Self::OnPower, Self::Always, Self::Never];

    /// As the file spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OnPower => "on_power",
            Self::Always => "always",
            Self::Never => "never",
        }
    }
}

/// `remote.sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    /// Sandbox where the kernel can; elsewhere run as before, and say so.
    #[default]
    Auto,
    /// Refuse commands where no sandbox can be had.
    Required,
}

impl Default for Remote {
    fn default() -> Self {
        Self {
            enabled: false,
            roots: Vec::new(),
            max_mode: Mode::Edit,
            require_trust: true,
            terminal: false,
            terminal_integration: true,
            scheduled: false,
            approval_timeout: 300,
            sandbox: SandboxSetting::Auto,
            env_keep: Vec::new(),
            keep_awake: KeepAwakeSetting::OnPower,
        }
    }
}

/// `permissions: { bash: { allow, ask, deny } }`, command patterns.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct Permissions {
    pub bash: BashRules,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The file is not valid: `line` is 1-based where the parser could tell.
    #[error("{path}{} is not valid: {message}. Fix it by hand; nothing was changed.", line.map(|l| format!(", line {l},")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    /// A requested change cannot be made (a folder that does not exist, an entry not listed, ...);
    /// the sentence says what to do instead.
    #[error("{0}")]
    Refused(String),
    #[error("cannot write {path}: {source}. Nothing was changed.")]
    Write { path: PathBuf, source: std::io::Error },
    /// The lossless editor could not make the change without touching anything else.
    #[error(
        "cannot change {path} without disturbing the rest of it ({message}). Nothing was changed; edit it by hand."
    )]
    EditFailed { path: PathBuf, message: String },
    /// Other writers kept changing the file while this one tried to save.
    #[error("{path} kept changing while saving ({attempts} tries). Nothing was changed; try again.")]
    Contended { path: PathBuf, attempts: usize },
    #[error("cannot watch {path} for changes: {source}")]
    Watch { path: PathBuf, source: notify::Error },
}

impl Settings {
    /// The folder rules of these settings, roots and trusted folders resolved (the I/O half of
    /// [`crate::policy::roots`]).
    pub fn folder_rules(&self) -> FolderRules {
        let resolve_all = |paths: Vec<PathBuf>| paths.iter().filter_map(|p| roots::resolve(p).ok()).collect();
        FolderRules {
            enabled: self.remote.enabled,
            roots: resolve_all(self.roots()),
            trusted: resolve_all(self.expanded(&self.trusted)),
            require_trust: self.remote.require_trust,
            home: resolved(&self.home),
        }
    }

    /// Roots with `~` expanded (as stored, not yet resolved).
    pub fn roots(&self) -> Vec<PathBuf> {
        self.expanded(&self.remote.roots)
    }

    fn expanded(&self, folders: &[PathBuf]) -> Vec<PathBuf> {
        folders
            .iter()
            .map(|f| expand_tilde(&f.to_string_lossy(), &self.home))
            .collect()
    }
}

/// Reads the global config of the device in `dirs`; a missing file is the defaults.
pub fn load(dirs: &Dirs) -> Result<Settings, SettingsError> {
    load_from(&dirs.config_file(), &dirs.home)
}

/// Reads the config file at `path`, written by the person whose home is `home`.
pub fn load_from(path: &Path, home: &Path) -> Result<Settings, SettingsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(SettingsError::Io {
                path: path.to_owned(),
                source,
            });
        }
    };
    let mut settings = parse(path, &text)?;
    settings.home = home.to_path_buf();
    Ok(settings)
}

pub fn parse(path: &Path, text: &str) -> Result<Settings, SettingsError> {
    if text.trim().is_empty() {
        return Ok(Settings::default());
    }
    serde_norway::from_str::<Option<Settings>>(text)
        .map(Option::unwrap_or_default)
        .map_err(|e| SettingsError::Invalid {
            path: path.to_owned(),
            line: e.location().map(|l| l.line()),
            message: e.to_string(),
        })
}
