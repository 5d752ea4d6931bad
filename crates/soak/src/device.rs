//! The device under test: the real `lembas service run` in a temporary home, with the token in
//! the real keychain (run under `scripts/with-keyring`), and what /proc says about it.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use anyhow::Context;

/// The token the device presents and the peer accepts.
pub const TOKEN: &str = "soak-device-token-5e1d02";

/// The link timings the device runs with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timings {
    /// docs/protocol.md's, untouched: the config sets no `link:` block.
    Decided,
    /// The config's `link:` block narrows the backoff (100 ms doubling to 400 ms, as the
    /// end-to-end tests use) and pings every second, so a short soak fits in CI.
    Short,
}

pub const SHORT_BACKOFF_FIRST_MS: u64 = 100;
pub const SHORT_BACKOFF_MAX_MS: u64 = 400;
const SHORT_PING_MS: u64 = 1000;

pub struct Device {
    pub home: tempfile::TempDir,
    pub lembas: PathBuf,
    pub child: Child,
    pub log: PathBuf,
}

impl Device {
    /// Stores the token in the keychain, writes the config and starts the service.
    pub fn start(lembas: &Path, server: &str, timings: Timings) -> anyhow::Result<Device> {
        let token = lembas_device::keychain::Token::new(TOKEN).context("the soak's token")?;
        // The person's entry: the `lembas service run` started below reads it.
        let dirs = lembas_device::paths::Dirs::from_env();
        lembas_device::keychain::Keychain::of(&dirs)
            .store(&token)
            .context("the soak needs a Secret Service: run it through scripts/with-keyring")?;
        let home = tempfile::tempdir()?;
        let root = std::fs::canonicalize(home.path())?;
        for d in [".config/lembas", ".local/state", "work"] {
            std::fs::create_dir_all(root.join(d))?;
        }
        std::fs::DirBuilder::new().mode(0o700).create(root.join("run"))?;
        std::fs::write(root.join(".bashrc"), "PS1='$ '\n")?;
        let work = root.join("work");
        let link = match timings {
            Timings::Decided => String::new(),
            Timings::Short => format!(
                "link:\n  backoff_first_ms: {SHORT_BACKOFF_FIRST_MS}\n  backoff_max_ms: {SHORT_BACKOFF_MAX_MS}\n  ping_interval_ms: {SHORT_PING_MS}\n"
            ),
        };
        // Approvals time out after 3 s so one left unanswered by a drop ends its turn soon.
        let config = format!(
            "server:\n  url: {server}\n  connection: example\n{link}remote:\n  enabled: true\n  max_mode: edit\n  terminal: true\n  approval_timeout: 3\n  roots:\n    - {w}\ntrusted:\n  - {w}\n",
            w = work.display()
        );
        std::fs::write(root.join(".config/lembas/config.yaml"), config)?;
        let log = root.join("service.log");
        let child = command(lembas, &root, &["service", "run"])
            .env("SHELL", "/bin/bash")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("could not start lembas service run")?;
        Ok(Device {
            home,
            lembas: lembas.to_path_buf(),
            child,
            log,
        })
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.home.path()).unwrap_or_else(|_| self.home.path().to_path_buf())
    }

    pub fn work(&self) -> PathBuf {
        self.root().join("work")
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// `lembas ARGS` in the device's home.
    pub fn command(&self, args: &[&str]) -> Command {
        command(&self.lembas, &self.root(), args)
    }

    /// The exit status, if the service has ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `lembas ARGS` with `root` as its home.
fn command(lembas: &Path, root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(lembas);
    c.args(args)
        .env("HOME", root)
        .env("XDG_CONFIG_HOME", root.join(".config"))
        .env("XDG_STATE_HOME", root.join(".local/state"))
        .env("XDG_RUNTIME_DIR", root.join("run"))
        // The device's log filter: info, or what LEMBAS_SOAK_RUST_LOG says (to look closer).
        .env(
            "RUST_LOG",
            std::env::var("LEMBAS_SOAK_RUST_LOG").unwrap_or_else(|_| "info".into()),
        )
        .stdin(Stdio::null());
    c
}

/// One look at the device process.
#[derive(Debug, Clone)]
pub struct Sample {
    pub rss_kb: u64,
    pub fds: usize,
}

pub fn sample(pid: i32) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss_kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some(Sample { rss_kb, fds })
}

/// A process as /proc names it: its pid, its start time (so a reused pid is not mistaken for it),
/// its name and process group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Process {
    pub pid: i32,
    pub start: u64,
    pub comm: String,
    pub pgid: i32,
}

/// pid, parent, process group, start time and name from /proc/PID/stat.
fn stat(pid: i32) -> Option<(i32, Process)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name is in parentheses and may hold spaces: the fields after the last ')' are plain.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 2..].split(' ').collect();
    // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime
    // cstime priority nice num_threads itrealvalue starttime
    let state = *rest.first()?;
    if state == "Z" || state == "X" {
        return None;
    }
    let ppid = rest.get(1)?.parse().ok()?;
    let pgid = rest.get(2)?.parse().ok()?;
    let start = rest.get(19)?.parse().ok()?;
    Some((
        ppid,
        Process {
            pid,
            start,
            comm,
            pgid,
        },
    ))
}

/// Every living process now: (parent, process).
fn all_processes() -> Vec<(i32, Process)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

/// Every descendant of `root` now (children, their children, ...).
pub fn descendants(root: i32) -> Vec<Process> {
    let all = all_processes();
    let mut found: Vec<Process> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (ppid, p) in &all {
            if *ppid == parent && !found.iter().any(|f| f.pid == p.pid) {
                frontier.push(p.pid);
                found.push(p.clone());
            }
        }
    }
    found
}

/// Those of `seen` still alive (same pid and start time), plus any process now in a process
/// group one of them led: what the device left behind.
pub fn still_alive(seen: &[Process]) -> Vec<Process> {
    let groups: Vec<i32> = seen.iter().filter(|p| p.pid == p.pgid).map(|p| p.pid).collect();
    all_processes()
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| seen.iter().any(|s| s.pid == p.pid && s.start == p.start) || groups.contains(&p.pgid))
        .collect()
}

/// Every living process whose working directory is `root` or below it: a shell or command the
/// device started there, whatever became of its parent.
pub fn working_under(root: &Path) -> Vec<Process> {
    all_processes()
        .into_iter()
        .map(|(_, p)| p)
        .filter(|p| std::fs::read_link(format!("/proc/{}/cwd", p.pid)).is_ok_and(|cwd| cwd.starts_with(root)))
        .collect()
}
