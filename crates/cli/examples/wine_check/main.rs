//! The Windows `lembas.exe` under Wine against the reference peer running natively on loopback
//! (`scripts/test-windows` runs it), in order:
//!
//! - `lembas --version`; `lembas login --token-stdin` (the token in Windows Credential Manager,
//!   Wine's); the limits set with `lembas remote` and `lembas trust` (a root on `C:`);
//!   `lembas doctor` printing its checks;
//! - `lembas service run` linking: hello with the limits, initialize with the sandbox it reports;
//!   `lembas status` over the control pipe ([`link`]);
//! - a session whose file tools work: the peer's scripted model writes, reads and edits a file in
//!   the root, which is on disk afterwards; the bash tool is not offered (no Git Bash in the
//!   prefix) and the device says why once ([`session`]);
//! - `lembas approvals` listing and allowing a card over the control pipe ([`session`]);
//! - terminals opened and closed, each exit told ([`terminal`]);
//! - the limits changed with `lembas remote scheduled on`: the device closes the link and dials
//!   again with the new limits ([`link`]);
//! - the service's files: config in `%APPDATA%`, state and logs in `%LOCALAPPDATA%`; then
//!   `lembas service install|status|uninstall` writing, reading and removing the Run key's value
//!   (read back independently with Wine's `reg query`) ([`service_entry`]).
//!
//! - the tray, `lembas-desktop.exe` beside `lembas.exe`, hosting the device on a display: it links,
//!   and `lembas status` reaches it ([`tray`]);
//! - with an installer given, it installs and uninstalls silently ([`installer`]).
//!
//! `wine_check <wine> <lembas.exe> [<installer.exe>]`; the prefix is the environment's
//! `WINEPREFIX`. Exits 1 at the first check that fails, saying which.

mod installer;
mod link;
mod service_entry;
mod session;
mod terminal;
mod tray;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Output, Stdio};
use std::time::Duration;

use lembas_peer::{Peer, PeerConfig};

const TOKEN: &str = "wine-check-token";
pub const WAIT: Duration = Duration::from_secs(60);

#[tokio::main]
async fn main() -> ExitCode {
    match check().await {
        Ok(()) => {
            println!("wine check: every check passed");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("wine check FAILED: {why}");
            ExitCode::FAILURE
        }
    }
}

/// `lembas.exe` under Wine in one prefix.
pub struct Wine {
    pub wine: String,
    exe: String,
    prefix: PathBuf,
}

/// The root the remote work gets: `C:\work`, which is `<prefix>/drive_c/work` here.
pub struct Work {
    pub native: PathBuf,
    pub windows: String,
}

impl Wine {
    /// `lembas.exe args…` under Wine, with none of this machine's XDG folders (Wine hands the
    /// environment on, and the device would take them over `%APPDATA%`).
    pub fn lembas(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.wine);
        command.arg(&self.exe).args(args);
        for xdg in [
            "XDG_CONFIG_HOME",
            "XDG_STATE_HOME",
            "XDG_RUNTIME_DIR",
            "XDG_DATA_HOME",
        ] {
            command.env_remove(xdg);
        }
        command
    }

    /// Runs `lembas.exe args…` to its end.
    pub fn run(&self, args: &[&str]) -> Result<Output, String> {
        output(self.lembas(args), None)
    }

    /// Runs `lembas.exe args…`, which must succeed and say `needle`.
    pub fn run_saying(&self, args: &[&str], needle: &str) -> Result<Output, String> {
        let out = self.run(args)?;
        let what = format!("lembas {}", args.join(" "));
        if !out.status.success() {
            return Err(format!("{what} failed: {}", said(&out)));
        }
        expect(&out, &what, needle)?;
        Ok(out)
    }

    /// The Windows account's profile folder here (`C:\users\<name>`), found by the folder the
    /// device made in it.
    pub fn profile(&self) -> Result<PathBuf, String> {
        let users = self.prefix.join("drive_c/users");
        std::fs::read_dir(&users)
            .map_err(|e| format!("{} cannot be read: {e}", users.display()))?
            .flatten()
            .map(|entry| entry.path())
            .find(|profile| profile.join("AppData/Roaming/lembas").is_dir())
            .ok_or_else(|| {
                format!(
                    "no profile under {} has AppData\\Roaming\\lembas",
                    users.display()
                )
            })
    }
}

async fn check() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(wine), Some(exe)) = (args.next(), args.next()) else {
        return Err("usage: wine_check <wine> <lembas.exe> [<installer.exe>]".into());
    };
    let installer = args.next().map(PathBuf::from);
    let prefix = std::env::var_os("WINEPREFIX")
        .map(PathBuf::from)
        .ok_or("WINEPREFIX is not set: the check runs in a prefix of its own")?;
    let work = Work {
        native: prefix.join("drive_c/work"),
        windows: r"C:\work".to_string(),
    };
    std::fs::create_dir_all(&work.native).map_err(|e| format!("{}: {e}", work.native.display()))?;
    let wine = Wine { wine, exe, prefix };
    let peer = Peer::start(PeerConfig::with_token(TOKEN))
        .await
        .map_err(|e| format!("the reference peer did not start: {e}"))?;

    wine.run_saying(&["--version"], "lembas ")?;
    let login = output(
        wine.lembas(&["login", "--token-stdin", "--server", &peer.url()]),
        Some(&format!("{TOKEN}\n")),
    )?;
    if !login.status.success() {
        return Err(format!("lembas login failed: {}", said(&login)));
    }
    println!("login: stored in the keychain ({})", said(&login).trim());

    // The limits, as a person sets them: remote work on in C:\work, trusted, terminals on.
    wine.run_saying(&["remote", "on"], "")?;
    wine.run_saying(&["remote", "roots", "add", &work.windows], "work")?;
    wine.run_saying(&["remote", "max-mode", "edit"], "")?;
    wine.run_saying(&["remote", "terminal", "on"], "")?;
    wine.run_saying(&["trust", &work.windows], "")?;
    let limits = wine.run_saying(&["remote", "list", "--json"], "terminal")?;
    println!("limits: {}", String::from_utf8_lossy(&limits.stdout).trim());

    // The doctor fails while no device runs (its checks say so): what matters is that it prints them.
    let doctor = wine.run(&["doctor"])?;
    for check in ["config", "token", "server", "sandbox", "commands"] {
        expect(&doctor, "lembas doctor", check)?;
    }
    expect(&doctor, "lembas doctor", "without a kernel sandbox")?;
    expect(&doctor, "lembas doctor", "bash.exe was not found")?;
    print!("doctor:\n{}", String::from_utf8_lossy(&doctor.stdout));

    let device = Device::start(&wine)?;
    let checked = checks_on_the_device(&wine, &peer, &work, &device).await;
    device.stop();
    checked?;
    let tray = Path::new(&wine.exe).with_file_name("lembas-desktop.exe");
    tray::hosts_the_device(&wine, &peer, &tray).await?;
    match installer {
        Some(installer) => installer::install_and_uninstall(&wine, &installer),
        None => Ok(()),
    }
}

/// Everything checked while `lembas service run` runs.
async fn checks_on_the_device(wine: &Wine, peer: &Peer, work: &Work, device: &Device) -> Result<(), String> {
    let mut link = link::linked(peer, work).await?;
    link::status_over_the_pipe(wine).await?;
    session::file_tools(&mut link, &peer.model(), work).await?;
    session::approvals(wine, &mut link, &peer.model(), work).await?;
    terminal::open_and_close(&mut link, work).await?;
    let link = link::limits_change(wine, peer, link).await?;
    session::bash_said_once(device)?;
    service_entry::files(wine, work)?;
    // While the device runs, so install starts no second one.
    service_entry::run_key(wine)?;
    drop(link);
    Ok(())
}

/// `lembas service run` under Wine, its standard error kept in a file.
pub struct Device {
    child: Child,
    log: PathBuf,
}

impl Device {
    fn start(wine: &Wine) -> Result<Device, String> {
        let log = wine.prefix.join("service-stderr.log");
        let file = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let child = wine
            .lembas(&["service", "run"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .map_err(|e| format!("lembas service run did not start: {e}"))?;
        Ok(Device { child, log })
    }

    /// What the device wrote on standard error so far.
    pub fn said(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::env::var_os("WINE_CHECK_VERBOSE").is_some() {
            eprint!("the device's log:\n{}", self.said());
        }
    }
}

pub fn output(mut command: Command, stdin: Option<&str>) -> Result<Output, String> {
    let mut child = command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{command:?} did not start: {e}"))?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .map_err(|e| format!("{command:?} took no input: {e}"))?;
    }
    child
        .wait_with_output()
        .map_err(|e| format!("{command:?} was lost: {e}"))
}

pub fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn expect(out: &Output, what: &str, needle: &str) -> Result<(), String> {
    if said(out).contains(needle) {
        Ok(())
    } else {
        Err(format!("{what} did not say {needle:?}: {}", said(out)))
    }
}

/// A file's text, or a sentence saying why it could not be read.
pub fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{} cannot be read: {e}", path.display()))
}
