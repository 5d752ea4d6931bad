//! A temporary home laid out as a person's: the config and state folders where `XDG_*` put them,
//! a private runtime folder (the control socket's), a `work` folder for sessions, and a keychain
//! entry of its own. A program run in it gets [`Home::env`]; a runtime this test hosts gets
//! [`Home::setup`], so tests hosting runtimes run side by side in one process.

use crate::Config;
use lembas_device::decisions::Decisions;
use lembas_device::keychain::{Keychain, Token};
use lembas_device::paths::Dirs;
use lembas_device::setup::Setup;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct Home {
    pub dir: tempfile::TempDir,
    /// The keychain service name of this home's runtime (`lembas-test-<pid>-<n>`).
    keychain_service: String,
    /// The least wait of a scheduled approval, for this home's runtime.
    least_approval_wait_s: Option<u64>,
    /// Whether a token was put in the keychain entry, to be taken out with the home.
    token_stored: AtomicBool,
}

impl Drop for Home {
    fn drop(&mut self) {
        if self.token_stored.load(Ordering::Relaxed) {
            let _ = self.setup().keychain.delete();
        }
    }
}

impl Default for Home {
    fn default() -> Self {
        Self::new()
    }
}

impl Home {
    pub fn new() -> Self {
        Self::at(tempfile::tempdir().expect("a temporary folder"))
    }

    /// A home under `parent` rather than the temp folders: a remote command's sandbox lets it
    /// write in the temp folders, so a home there would be writable by design (integration tests
    /// pass `env!("CARGO_TARGET_TMPDIR")`).
    pub fn outside_temp(parent: impl AsRef<Path>) -> Self {
        Self::at(tempfile::tempdir_in(parent).expect("a folder in the target's own tmp"))
    }

    fn at(dir: tempfile::TempDir) -> Self {
        static HOMES: AtomicU64 = AtomicU64::new(0);
        for d in [".config/lembas", ".local/state", "work"] {
            std::fs::create_dir_all(dir.path().join(d)).expect("the home's folders");
        }
        // The home's own XDG_RUNTIME_DIR (private, as a session's is): the control socket of a
        // test's runtime lives there, never in the runtime folder of the person running the tests.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir.path().join("run"))
            .expect("the home's runtime folder");
        Home {
            dir,
            keychain_service: format!(
                "lembas-test-{}-{}",
                std::process::id(),
                HOMES.fetch_add(1, Ordering::Relaxed)
            ),
            least_approval_wait_s: None,
            token_stored: AtomicBool::new(false),
        }
    }

    /// This home with a scheduled approval's least wait lowered to `seconds` for its runtime, so a
    /// test sees one time out quickly.
    pub fn with_least_approval_wait(mut self, seconds: u64) -> Self {
        self.least_approval_wait_s = Some(seconds);
        self
    }

    /// The device's folders in this home, as a program run with [`Home::env`] finds them.
    pub fn dirs(&self) -> Dirs {
        Dirs::under_home(&self.path(), &self.runtime_dir())
    }

    /// A device in this home for a runtime this test hosts, with this home's own keychain entry.
    pub fn setup(&self) -> Setup {
        let dirs = self.dirs();
        Setup {
            keychain: Keychain::named(&self.keychain_service, &dirs),
            dirs,
            decisions: Decisions::built_in(),
            least_approval_wait_s: self.least_approval_wait_s,
        }
    }

    /// Puts `token` in this home's keychain entry (the function login uses), for a runtime this
    /// test hosts. A program run in the home reads the person's entry: [`crate::store_token`].
    pub fn store_token(&self, token: &str) {
        let token = Token::new(token).expect("a test token is one line of text");
        self.setup()
            .keychain
            .store(&token)
            .expect("the tests need a Secret Service: run them through scripts/with-keyring");
        self.token_stored.store(true, Ordering::Relaxed);
    }

    /// The home, resolved (a temp folder may be reached through a symlink).
    pub fn path(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).expect("the home exists")
    }
    /// A folder sessions may use (`<home>/work`).
    pub fn work(&self) -> PathBuf {
        self.path().join("work")
    }
    pub fn config(&self) -> PathBuf {
        self.path().join(".config/lembas/config.yaml")
    }
    pub fn runtime_dir(&self) -> PathBuf {
        self.path().join("run")
    }
    /// The running runtime's control socket.
    pub fn socket(&self) -> PathBuf {
        self.runtime_dir().join("lembas/control.sock")
    }
    pub fn state(&self) -> PathBuf {
        self.path().join(".local/state/lembas")
    }
    /// The running runtime's control cookie, which a connection to its socket presents first.
    pub fn cookie(&self) -> PathBuf {
        self.state().join("control.cookie")
    }

    /// Written whole at once (a new file renamed over the old), as the device and editors write
    /// it: a running device never reads half of it.
    pub fn write_config(&self, text: &str) {
        let config = self.config();
        let next = config.with_extension("yaml.next");
        std::fs::write(&next, text).expect("the config written");
        std::fs::rename(&next, &config).expect("the config put in place");
    }
    pub fn write(&self, config: &Config) {
        self.write_config(&config.text());
    }
    /// A config linking to `server` with fast link timings, so tests see redials quickly, then
    /// `extra` (YAML at the top level).
    pub fn config_for(&self, server: &str, extra: &str) {
        self.write(&Config::linked_to(server).yaml(extra));
    }
    /// [`Home::config_for`] with remote work on in `<home>/work`, trusted.
    pub fn config_with_work(&self, server: &str, extra: &str) {
        self.write(&Config::linked_to(server).work_in(&self.work()).yaml(extra));
    }

    /// The environment that puts a process in this home.
    pub fn env(&self) -> [(&'static str, PathBuf); 4] {
        [
            ("HOME", self.path()),
            ("XDG_CONFIG_HOME", self.path().join(".config")),
            ("XDG_STATE_HOME", self.path().join(".local/state")),
            ("XDG_RUNTIME_DIR", self.runtime_dir()),
        ]
    }
}
