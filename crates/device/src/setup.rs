//! What the program hosting the device hands it: its folders, its keychain entry, the decided
//! numbers and texts, and the one number a test may lower. [`Setup::from_env`] is for the
//! programs (`lembas`, the tray, the bench): nothing below them reads the environment, so tests
//! host runtimes side by side in one process, each in a home of its own.

use crate::decisions::Decisions;
use crate::keychain::Keychain;
use crate::paths::Dirs;

/// Lowers the least wait a scheduled run's approval may ask for (60 s), for tests of the programs.
pub const LEAST_APPROVAL_WAIT_ENV: &str = "LEMBAS_APPROVAL_WAIT_MIN_S";

#[derive(Debug, Clone)]
pub struct Setup {
    pub dirs: Dirs,
    pub keychain: Keychain,
    /// The numbers and texts the spec refers to, read once at start-up and handed down from here.
    pub decisions: &'static Decisions,
    /// The least wait, in seconds, a scheduled run's approval may ask for, when lower than the
    /// decided one (tests); `None` keeps the decided one.
    pub least_approval_wait_s: Option<u64>,
}

impl Setup {
    /// The person's device as this process's environment places it.
    pub fn from_env() -> Setup {
        let dirs = Dirs::from_env();
        Setup {
            keychain: Keychain::of(&dirs),
            dirs,
            decisions: Decisions::built_in(),
            least_approval_wait_s: std::env::var(LEAST_APPROVAL_WAIT_ENV)
                .ok()
                .and_then(|v| v.parse().ok()),
        }
    }
}
