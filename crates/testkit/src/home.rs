//! A temporary home laid out as a person's: the config and state folders where `XDG_*` put them,
//! a private runtime folder (the control socket's), and a `work` folder for sessions.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

pub struct Home {
    pub dir: tempfile::TempDir,
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
        for d in [".config/lembas", ".local/state", "work"] {
            std::fs::create_dir_all(dir.path().join(d)).expect("the home's folders");
        }
        // The home's own XDG_RUNTIME_DIR (private, as a session's is): the control socket of a
        // test's runtime lives there, never in the runtime folder of the person running the tests.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(dir.path().join("run"))
            .expect("the home's runtime folder");
        Home { dir }
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

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config(), text).expect("the config written");
    }
    /// A config linking to `server` with fast link timings, so tests see redials quickly, then
    /// `extra` (YAML at the top level).
    pub fn config_for(&self, server: &str, extra: &str) {
        self.write_config(&format!(
            "server:\n  url: {server}\n  connection: example\nlink:\n  backoff_first_ms: 100\n  backoff_max_ms: 400\n{extra}"
        ));
    }
    /// [`Home::config_for`] with remote work on in `<home>/work`, trusted.
    pub fn config_with_work(&self, server: &str, extra: &str) {
        self.config_for(
            server,
            &format!(
                "remote:\n  enabled: true\n  roots:\n    - {w}\ntrusted:\n  - {w}\n{extra}",
                w = self.work().display()
            ),
        );
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

    /// Puts this test's own process in this home, for a runtime it hosts: the core reads its
    /// folders from the environment when it needs them.
    ///
    /// # Safety
    /// Before any other thread of the process reads the environment: one such test per binary.
    pub unsafe fn enter(&self) {
        for (name, value) in self.env() {
            // SAFETY: the caller's promise above.
            unsafe { std::env::set_var(name, value) };
        }
    }
}
