//! Where the device keeps things. Every path honours `HOME` and `XDG_*` at the moment it is asked
//! for, so tests run in temporary homes.

use std::path::{Path, PathBuf};

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn xdg(var: &str, fallback: &[&str]) -> PathBuf {
    match std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from) {
        Some(p) if p.is_absolute() => p,
        _ => fallback.iter().fold(home(), |p, part| p.join(part)),
    }
}

/// The folder holding `config.yaml`.
pub fn config_dir() -> PathBuf {
    if cfg!(target_os = "macos") && std::env::var_os("XDG_CONFIG_HOME").is_none() {
        return home().join("Library/Application Support/lembas");
    }
    if cfg!(windows)
        && let Some(appdata) = std::env::var_os("APPDATA")
    {
        return PathBuf::from(appdata).join("lembas");
    }
    xdg("XDG_CONFIG_HOME", &[".config"]).join("lembas")
}

/// `$XDG_CONFIG_HOME` (`~/.config`): where a systemd user unit goes.
pub fn xdg_config_home() -> PathBuf {
    xdg("XDG_CONFIG_HOME", &[".config"])
}

/// The global config file.
pub fn config_file() -> PathBuf {
    config_dir().join("config.yaml")
}

/// `$XDG_STATE_HOME/lembas/`: the lock, the status file, turns, attachments.
pub fn state_dir() -> PathBuf {
    xdg("XDG_STATE_HOME", &[".local", "state"]).join("lembas")
}

/// `<state>/logs/`: the rolling log files of the service and the tray.
pub fn log_dir() -> PathBuf {
    state_dir().join("logs")
}

/// The user's home folder, for `~` expansion and protected paths.
pub fn home_dir() -> PathBuf {
    home()
}

/// The home folder with its symlinks resolved (as it is when unresolvable), for comparing with
/// resolved paths: the policy judges paths after resolving them.
pub fn resolved_home_dir() -> PathBuf {
    let home = home();
    std::fs::canonicalize(&home).unwrap_or(home)
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

/// Expands a leading `~` or `~/`.
pub fn expand_tilde(path: &str) -> PathBuf {
    if path == "~" {
        home()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home().join(rest)
    } else {
        PathBuf::from(path)
    }
}

/// This computer's protected places as the device's folders are now (docs/protocol.md "Paths"): the
/// home folder's credential folders, the config and state folders wherever the environment puts
/// them (resolved, as the policy compares resolved paths).
pub fn protected_places() -> crate::policy::protected::Protected {
    let resolve = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    crate::policy::protected::Protected::new(
        &resolved_home_dir(),
        &resolve(config_dir()),
        &resolve(state_dir()),
    )
}
