//! The activity log: every remote action, one JSON line each, appended to
//! `$XDG_STATE_HOME/lembas/activity.jsonl` by the device runtime, rotated at the decided size with
//! the decided number of old files kept (`activity.jsonl.1`, …). A line is
//! `{ "at_ms", "kind", …fields }`, the fields those of the [`crate::events::DeviceEvent`] it comes
//! from; never a file's contents, a command's output or the token.

mod file;
mod line;
mod read;
mod writer;

#[cfg(test)]
mod tests;

pub use file::{LogFile, old_file};
pub use line::{Lines, MISSED};
pub use read::{Newest, clock, describe, newest, parse};
pub use writer::{Writer, spawn};

use std::path::PathBuf;

use crate::decisions;
use crate::paths::Dirs;

/// When the current file is rotated, and how many old ones are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    pub max_bytes: u64,
    pub kept_files: u32,
}

impl Rotation {
    /// The decided ones (`decisions.json`, `activity`).
    pub fn decided(d: &decisions::ActivityLog) -> Rotation {
        Rotation {
            max_bytes: d.max_bytes,
            kept_files: d.kept_files,
        }
    }
}

/// `$XDG_STATE_HOME/lembas/activity.jsonl`.
pub fn path(dirs: &Dirs) -> PathBuf {
    dirs.state.join("activity.jsonl")
}

/// The log this user's device writes, with the decided limits.
pub fn default_file(dirs: &Dirs, numbers: &decisions::ActivityLog) -> LogFile {
    LogFile::new(path(dirs), Rotation::decided(numbers))
}
