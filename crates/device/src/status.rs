//! The runtime's state, written to `$XDG_STATE_HOME/lembas/status.json` (atomically) on every
//! change, so `lembas status` and the tray app can read it from another process.

use lembas_protocol::limits::Limits;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use crate::events::LinkState;
use crate::paths::Dirs;
use crate::whole_file::{self, Mode};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Status {
    pub pid: u32,
    #[serde(flatten)]
    pub link: LinkState,
    pub server: Option<String>,
    pub connection: Option<String>,
    /// The limits as last sent to the instance. A newer runtime's that this version cannot read
    /// (a mode it does not know) reads as none, so the rest of its status still does.
    #[serde(default, deserialize_with = "crate::lenient::lenient")]
    pub limits: Option<Limits>,
    pub last_error: Option<String>,
    /// Which walls stand under remote commands: `namespaces, landlock ABI n (scopes), seccomp`, `seatbelt` or `none: <why>`
    /// (absent in a file an older device wrote).
    #[serde(default)]
    pub sandbox: Option<String>,
    /// Agent turns running now, and the folders they work in (absent in an older file).
    #[serde(default)]
    pub agents_working: usize,
    #[serde(default)]
    pub working_in: Vec<String>,
    /// While remote work runs: whether the computer is kept from sleeping, and why (or why not).
    #[serde(default)]
    pub keep_awake: Option<Awake>,
    /// Unix milliseconds of the last change.
    pub updated_ms: u64,
}

impl Status {
    pub fn new() -> Self {
        Self {
            pid: std::process::id(),
            link: LinkState::Starting,
            server: None,
            connection: None,
            limits: None,
            last_error: None,
            sandbox: Some(crate::sandbox::support()),
            agents_working: 0,
            working_in: Vec::new(),
            keep_awake: None,
            updated_ms: now_ms(),
        }
    }
}

impl Default for Status {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether the computer is kept awake now (`crate::keep_awake`), and why or why not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Awake {
    pub held: bool,
    pub why: String,
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub fn status_file(dirs: &Dirs) -> PathBuf {
    dirs.state.join("status.json")
}

/// Writes the status whole ([`crate::whole_file`]): a reader never sees half of it. Not synced:
/// it is rewritten at every change and says what is happening now, not what must survive a crash.
pub fn write(dirs: &Dirs, status: &Status) -> std::io::Result<()> {
    std::fs::create_dir_all(&dirs.state)?;
    let text = serde_json::to_vec_pretty(status).map_err(std::io::Error::other)?;
    whole_file::write_unsynced(&status_file(dirs), &text, Mode::New)
}

/// The last status written, and whether a runtime holds the device lock now (when none does, the
/// status is what the last one said as it stopped, its last error included).
pub fn read(dirs: &Dirs) -> (bool, Option<Status>) {
    let running = crate::lock::holder(dirs).is_some();
    let last = std::fs::read_to_string(status_file(dirs))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    (running, last)
}

/// The status of the runtime running now, if one is.
pub fn read_live(dirs: &Dirs) -> Option<Status> {
    match read(dirs) {
        (true, status) => status,
        (false, _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Mode;

    #[test]
    fn a_status_whose_limits_name_an_unknown_mode_still_reads() {
        let mut written = serde_json::to_value(Status {
            limits: Some(Limits {
                roots: vec!["/w".into()],
                max_mode: Mode::Manual,
                require_trust: Some(true),
                scheduled: false,
            }),
            ..Status::new()
        })
        .unwrap();
        assert_eq!(written["limits"]["max_mode"], "manual");
        let read: Status = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(read.limits.map(|l| l.max_mode), Some(Mode::Manual));

        written["limits"]["max_mode"] = "turbo".into();
        let read: Status = serde_json::from_value(written).unwrap();
        assert_eq!((read.limits, read.pid), (None, std::process::id()));
    }
}
