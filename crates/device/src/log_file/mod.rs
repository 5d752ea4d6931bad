//! The device's own lines: on standard error, and in a file a day under `<state>/logs/` (a week
//! kept), so a device started at login with no terminal (the tray, a launchd agent) still leaves a
//! log to read: the tray's "Open logs", `lembas doctor`. Whatever `RUST_LOG` asks, the device
//! token is in no line: the libraries that log what they send are held at `info`, and every line
//! passes a redaction of credentials on its way out.

mod redact;

use std::path::PathBuf;

use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::filter::{EnvFilter, FilterFn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::paths::Dirs;
use redact::Redacting;

/// How many daily files are kept.
const KEPT_FILES: usize = 7;

/// Libraries whose `debug` and `trace` lines carry what they send: tungstenite writes the link's
/// upgrade request with its `Authorization: Bearer <device token>` header at `trace`; the HTTP
/// stack under the model's requests and the instance's MCP endpoint (same header) logs requests
/// and connections. Held at `info` for good: their details are not worth the token.
const HELD_AT_INFO: &[&str] = &[
    "tungstenite",
    "tokio_tungstenite",
    "hyper",
    "hyper_util",
    "h2",
    "reqwest",
    "rustls",
    "rmcp",
];

/// Starts logging for a process named `name` (`service`, `desktop`): `RUST_LOG`, else info. A log
/// folder that cannot be written is said on standard error once and the process goes on with
/// standard error alone: a read-only state folder must not stop the device.
pub fn init(dirs: &Dirs, name: &str) {
    match appender(dirs, name) {
        Ok(file) => start(std::io::stderr.and(file)),
        Err(why) => {
            start(std::io::stderr);
            tracing::warn!("{why}");
        }
    }
}

/// Logging to the file alone, for a process whose terminal is its screen (`lembas chat` hosting the
/// runtime): a line on standard error would tear the drawn screen. A log folder that cannot be
/// written leaves the process without a log; it goes on.
pub fn init_file_only(dirs: &Dirs, name: &str) {
    if let Ok(file) = appender(dirs, name) {
        start(file);
    }
}

/// Logging on standard error alone, for `lembas serve --stdio` (standard output is the protocol).
pub fn init_stderr() {
    start(std::io::stderr);
}

fn start<W>(writer: W)
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let held = FilterFn::new(|meta| *meta.level() <= tracing::Level::INFO || !is_held(meta.target()));
    let lines = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(Redacting(writer));
    // A second start in one process (a test) keeps the first.
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(held)
        .with(lines)
        .try_init();
}

/// Whether `target` (a module path) is in one of the libraries held at info.
fn is_held(target: &str) -> bool {
    HELD_AT_INFO.iter().any(|library| {
        target
            .strip_prefix(library)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_libraries_that_log_what_they_send_are_held_by_their_module_paths() {
        for held in [
            "tungstenite",
            "tungstenite::handshake::client",
            "hyper_util::client",
            "reqwest::connect",
        ] {
            assert!(is_held(held), "{held}");
        }
        for free in ["lembas_device::link", "hyperfine", "tungstenite_extra", "h2o"] {
            assert!(!is_held(free), "{free}");
        }
    }
}
