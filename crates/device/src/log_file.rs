//! The device's own lines: on standard error, and in a file a day under `<state>/logs/` (a week
//! kept), so a device started at login with no terminal (the tray, a launchd agent) still leaves a
//! log to read: the tray's "Open logs", `lembas doctor`.

use std::path::PathBuf;

use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::fmt::writer::MakeWriterExt;

use crate::paths::Dirs;

/// How many daily files are kept.
const KEPT_FILES: usize = 7;

/// Starts logging for a process named `name` (`service`, `desktop`): `RUST_LOG`, else info. A log
/// folder that cannot be written is said on standard error once and the process goes on with
/// standard error alone: a read-only state folder must not stop the device.
pub fn init(dirs: &Dirs, name: &str) {
    let filter = || tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    match appender(dirs, name) {
        Ok(file) => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_ansi(false)
            .with_writer(std::io::stderr.and(file))
            .init(),
        Err(why) => {
            tracing_subscriber::fmt()
                .with_env_filter(filter())
                .with_writer(std::io::stderr)
                .init();
            tracing::warn!("{why}");
        }
    }
}

/// Today's file for `name` (`<name>.YYYY-MM-DD.log`).
pub fn today(dirs: &Dirs, name: &str) -> PathBuf {
    dirs.log_dir().join(format!("{name}.{}.log", crate::utc::today()))
}

fn appender(dirs: &Dirs, name: &str) -> Result<RollingFileAppender, String> {
    let dir = dirs.log_dir();
    crate::paths::ensure_private_dir(&dir).map_err(|e| no_file(&dir, &e.to_string()))?;
    RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(name)
        .filename_suffix("log")
        .max_log_files(KEPT_FILES)
        .build(&dir)
        .map_err(|e| no_file(&dir, &e.to_string()))
}

fn no_file(dir: &std::path::Path, why: &str) -> String {
    format!(
        "the log cannot be written in {} ({why}): logging to standard error only; make that folder writable and start again to keep a log file",
        dir.display()
    )
}
