//! Where the device keeps things. The folders are a [`Dirs`] handed down by the program hosting
//! the device (`lembas`, the tray, a test): [`Dirs::from_env`] is the one place that reads `HOME`,
//! `XDG_*`, `APPDATA` and `LOCALAPPDATA`, and only the programs call it, so a test hosts a runtime in a home of its
//! own without touching the process's environment.

use std::path::{Path, PathBuf};

/// The device's folders on this computer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// The person's home folder: what `~` means in settings and paths a person types.
    pub home: PathBuf,
    /// The folder holding `config.yaml` (and the `--insecure-storage` token file).
    pub config: PathBuf,
    /// `$XDG_STATE_HOME/lembas/`: the lock, the status file, sessions, turns, attachments, logs.
    pub state: PathBuf,
    /// The folder of the control socket and the tray's socket: `$XDG_RUNTIME_DIR/lembas`, else
    /// `<state>/run`.
    pub runtime: PathBuf,
    /// The OS keychain's files where `XDG_DATA_HOME` moves them (`$XDG_DATA_HOME/keyrings`):
    /// protected, beside the usual `~/.local/share/keyrings`.
    pub keyrings: Option<PathBuf>,
}

/// A folder as a person reads it: under the home folder as `~/…`. Only for showing: what is kept
/// and sent (a card's `cwd`, a session's) is the whole path.
pub fn home_shortened(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

impl Dirs {
    /// The folders as this process's environment places them. For the programs only: everything
    /// below them is handed the result.
    pub fn from_env() -> Dirs {
        let home = env_home();
        let config = if cfg!(target_os = "macos") && env_var("XDG_CONFIG_HOME").is_none() {
            home.join("Library/Application Support/lembas")
        } else if cfg!(windows)
            && let Some(appdata) = env_var("APPDATA")
        {
            appdata.join("lembas")
        } else {
            env_folder("XDG_CONFIG_HOME")
                .unwrap_or_else(|| home.join(".config"))
                .join("lembas")
        };
        let state = if cfg!(windows)
            && env_var("XDG_STATE_HOME").is_none()
            && let Some(local) = env_var("LOCALAPPDATA")
        {
            local.join("lembas")
        } else {
            env_folder("XDG_STATE_HOME")
                .unwrap_or_else(|| home.join(".local/state"))
                .join("lembas")
        };
        let runtime = match env_folder("XDG_RUNTIME_DIR") {
            Some(dir) => dir.join("lembas"),
            None => state.join("run"),
        };
        Dirs {
            home,
            config,
            state,
            runtime,
            keyrings: env_folder("XDG_DATA_HOME").map(|d| d.join("keyrings")),
        }
    }

    /// The folders a Linux home has when no `XDG_*` variable moves them, the runtime folder given
    /// apart (tests, the bench).
    pub fn under_home(home: &Path, runtime: &Path) -> Dirs {
        Dirs {
            home: home.to_path_buf(),
            config: home.join(".config/lembas"),
            state: home.join(".local/state/lembas"),
            runtime: runtime.join("lembas"),
            keyrings: None,
        }
    }

    /// The global config file.
    pub fn config_file(&self) -> PathBuf {
        self.config.join("config.yaml")
    }

    /// `<state>/logs/`: the rolling log files of the service and the tray.
    pub fn log_dir(&self) -> PathBuf {
        self.state.join("logs")
    }

    /// The home folder with its symlinks resolved (as it is when unresolvable), for comparing with
    /// resolved paths: the policy judges paths after resolving them.
    pub fn resolved_home(&self) -> PathBuf {
        resolved(&self.home)
    }

    /// Expands a leading `~` or `~/` to the home folder.
    pub fn expand_tilde(&self, path: &str) -> PathBuf {
        expand_tilde(path, &self.home)
    }

    /// This computer's protected places as the device's folders are (docs/protocol.md "Paths"):
    /// the home folder's credential folders, the config and state folders wherever they are
    /// (resolved, as the policy compares resolved paths).
    pub fn protected_places(&self) -> crate::policy::protected::Protected {
        crate::policy::protected::Protected::new(
            &self.resolved_home(),
            &resolved(&self.config),
            &resolved(&self.state),
        )
    }
}

/// `path` with its symlinks resolved, or as it is when it cannot be (it does not exist yet): for
/// comparing with resolved paths, as the policy judges paths after resolving them.
pub fn resolved(path: &Path) -> PathBuf {
    crate::canonical::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Expands a leading `~` or `~/` to `home`.
pub fn expand_tilde(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    }
}

/// `$XDG_CONFIG_HOME` (`~/.config`) as this process's environment says: where a systemd user
/// unit goes. For the programs only, as [`Dirs::from_env`].
pub fn xdg_config_home_from_env() -> PathBuf {
    env_folder("XDG_CONFIG_HOME").unwrap_or_else(|| env_home().join(".config"))
}

/// A variable of the environment, when set and not empty.
fn env_var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// A folder the environment names, when it names an absolute one (XDG ignores relative ones).
fn env_folder(name: &str) -> Option<PathBuf> {
    env_var(name).filter(|p| p.is_absolute())
}

/// `HOME`, else (Windows) `USERPROFILE`, else `/`.
fn env_home() -> PathBuf {
    env_var("HOME")
        .or_else(|| cfg!(windows).then(|| env_var("USERPROFILE")).flatten())
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// Creates `dir` and its parents when missing, private to the user on Unix (0700): the config and
/// the state (conversations, turns) live in such folders.
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tilde_is_the_home_handed_down() {
        let dirs = Dirs::under_home(Path::new("/home/ada"), Path::new("/run/user/1000"));
        assert_eq!(dirs.expand_tilde("~"), Path::new("/home/ada"));
        assert_eq!(dirs.expand_tilde("~/src"), Path::new("/home/ada/src"));
        assert_eq!(dirs.expand_tilde("~ada/src"), Path::new("~ada/src"));
        assert_eq!(dirs.expand_tilde("/srv/~"), Path::new("/srv/~"));
        assert_eq!(
            dirs.config_file(),
            Path::new("/home/ada/.config/lembas/config.yaml")
        );
        assert_eq!(dirs.runtime, Path::new("/run/user/1000/lembas"));
        assert_eq!(dirs.log_dir(), Path::new("/home/ada/.local/state/lembas/logs"));
    }
}
