//! The real device: `lembas service run` in a throwaway home, linked to the lean instance, with
//! the bench's token in the keychain (run the bench inside scripts/with-keyring).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

use crate::instance::{LeanInstance, RawLink};
use crate::model_server::TOKEN;

/// How long a device gets to link (and a link to answer) before the benchmark gives up.
pub const LINK_WAIT: Duration = Duration::from_secs(20);

/// The prompt every bench shell shows, so output can be searched for it.
pub const PROMPT: &str = "BENCH$ ";
/// How long a device gets to close its link and exit after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// The `lembas` binary: `LEMBAS_BIN`, or the one built beside this bench.
pub fn lembas_binary() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("LEMBAS_BIN") {
        return Ok(PathBuf::from(path));
    }
    beside_the_bench("lembas").map_err(|e| anyhow!("{e}, or set LEMBAS_BIN"))
}

/// A binary `scripts/bench` builds beside the bench.
pub fn beside_the_bench(name: &str) -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe().context("cannot find the bench's own binary")?;
    let beside = me.with_file_name(name);
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(anyhow!(
            "no {name} at {}: build it with the bench (scripts/bench does)",
            beside.display()
        ))
    }
}

/// Puts the bench's token in the person's keychain entry (the one the `lembas` the bench starts
/// reads) through the function login uses.
pub fn store_token() -> anyhow::Result<()> {
    let token = lembas_device::keychain::Token::new(TOKEN).map_err(|e| anyhow!("{e}"))?;
    let dirs = lembas_device::paths::Dirs::from_env();
    lembas_device::keychain::Keychain::of(&dirs)
        .store(&token)
        .map_err(|e| anyhow!("the bench needs a Secret Service (run it through scripts/bench): {e}"))
}

/// A throwaway home with a config linking to `server`.
pub struct DeviceHome {
    dir: tempfile::TempDir,
    binary: PathBuf,
}

impl DeviceHome {
    /// `remote` is the config's `remote:` block, given the home's work folder.
    pub fn new(server: &str, remote: impl Fn(&Path) -> String) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir().context("cannot make a temporary home")?;
        let home = DeviceHome {
            dir,
            binary: lembas_binary()?,
        };
        for sub in [".config/lembas", ".local/state", "work"] {
            std::fs::create_dir_all(home.path().join(sub))?;
        }
        let config = format!(
            "server:\n  url: {server}\n  connection: example\n{}",
            remote(&home.work())
        );
        std::fs::write(home.path().join(".config/lembas/config.yaml"), config)?;
        // A login bash reads .bash_profile; an interactive one .bashrc: both show the bench prompt.
        let rc = format!("PS1='{PROMPT}'\nunset PROMPT_COMMAND\n");
        std::fs::write(home.path().join(".bash_profile"), &rc)?;
        std::fs::write(home.path().join(".bashrc"), &rc)?;
        Ok(home)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn work(&self) -> PathBuf {
        self.path().join("work")
    }

    /// Starts `lembas service run` in this home.
    pub fn spawn(&self) -> anyhow::Result<DeviceProcess> {
        let log = std::fs::File::create(self.path().join("service.log"))?;
        let child = Command::new(&self.binary)
            .args(["service", "run"])
            .env("HOME", self.path())
            .env("XDG_CONFIG_HOME", self.path().join(".config"))
            .env("XDG_STATE_HOME", self.path().join(".local/state"))
            .env("SHELL", "/bin/bash")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {}", self.binary.display()))?;
        Ok(DeviceProcess { child })
    }

    /// Starts the device and waits for its link to the instance, past hello and initialize.
    pub async fn link(&self, instance: &mut LeanInstance) -> anyhow::Result<(DeviceProcess, RawLink)> {
        instance.forget_links();
        let device = self.spawn()?;
        let mut link = instance.next_link(LINK_WAIT).await?;
        link.hello(LINK_WAIT).await?;
        link.initialize(LINK_WAIT).await?;
        Ok((device, link))
    }

    /// The device's log so far, for an error message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.path().join("service.log")).unwrap_or_default()
    }
}

/// A running device; dropping it stops it as a person would (SIGTERM), killing it if it lingers.
pub struct DeviceProcess {
    child: Child,
}

impl DeviceProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for DeviceProcess {
    fn drop(&mut self) {
        // SAFETY: kill has no memory preconditions; the pid is our own child, not yet reaped.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let end = Instant::now() + STOP_GRACE;
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
