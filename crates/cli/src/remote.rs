//! The settings commands: `lembas remote …`, `lembas trust|untrust <path>` and
//! `lembas service scheduled on|off`. Each is one change through the settings' one write path,
//! then prints the new state; a running device picks the change up from the file by itself.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;
use lembas_device::policy::Mode;
use lembas_device::settings::edit::{self, Change};
use lembas_device::settings::{self, KeepAwakeSetting, Settings};
use lembas_device::setup::Setup;
use serde_json::{Value, json};

use crate::login::fail;

#[derive(Clone, Copy, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

impl OnOff {
    fn is_on(self) -> bool {
        matches!(self, OnOff::On)
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Plan,
    Manual,
    Edit,
    Auto,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Plan => Mode::Plan,
            ModeArg::Manual => Mode::Manual,
            ModeArg::Edit => Mode::Edit,
            ModeArg::Auto => Mode::Auto,
        }
    }
}

/// `remote.keep_awake`, as the command line spells it.
#[derive(Clone, Copy, ValueEnum)]
pub enum KeepAwakeArg {
    /// Only on mains power.
    OnPower,
    Always,
    Never,
}

impl From<KeepAwakeArg> for KeepAwakeSetting {
    fn from(k: KeepAwakeArg) -> KeepAwakeSetting {
        match k {
            KeepAwakeArg::OnPower => KeepAwakeSetting::OnPower,
            KeepAwakeArg::Always => KeepAwakeSetting::Always,
            KeepAwakeArg::Never => KeepAwakeSetting::Never,
        }
    }
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

pub fn list(setup: &Setup, json: bool) -> ExitCode {
    match settings::load(&setup.dirs) {
        Ok(s) => {
            print_state(&s, json);
            ExitCode::SUCCESS
        }
        Err(e) => fail(json, e.to_string()),
    }
}

pub fn enabled(setup: &Setup, on: bool, json: bool) -> ExitCode {
    apply(
        setup,
        Change::RemoteEnabled(on),
        json,
        &format!("Remote work is {}.", on_off(on)),
    )
}

pub fn add_root(setup: &Setup, path: PathBuf, json: bool) -> ExitCode {
    let shown = resolved(setup, &path);
    apply(
        setup,
        Change::AddRoot(path),
        json,
        &format!("Remote work may use {shown}."),
    )
}

pub fn remove_root(setup: &Setup, path: PathBuf, json: bool) -> ExitCode {
    let shown = path.display().to_string();
    apply(
        setup,
        Change::RemoveRoot(path),
        json,
        &format!("Remote work may no longer use {shown}."),
    )
}

pub fn max_mode(setup: &Setup, mode: ModeArg, json: bool) -> ExitCode {
    let mode = Mode::from(mode);
    apply(
        setup,
        Change::MaxMode(mode),
        json,
        &format!("Remote sessions get at most {mode} mode."),
    )
}

pub fn terminal(setup: &Setup, state: OnOff, json: bool) -> ExitCode {
    apply(
        setup,
        Change::Terminal(state.is_on()),
        json,
        &format!("Terminals for remote work are {}.", on_off(state.is_on())),
    )
}

pub fn require_trust(setup: &Setup, state: OnOff, json: bool) -> ExitCode {
    let headline = if state.is_on() {
        "A remote session's folder must be in a trusted project."
    } else {
        "A remote session's folder need not be in a trusted project."
    };
    apply(setup, Change::RequireTrust(state.is_on()), json, headline)
}

pub fn scheduled(setup: &Setup, state: OnOff, json: bool) -> ExitCode {
    apply(
        setup,
        Change::Scheduled(state.is_on()),
        json,
        &format!("Accept scheduled work is {}.", on_off(state.is_on())),
    )
}

pub fn keep_awake(setup: &Setup, setting: KeepAwakeArg, json: bool) -> ExitCode {
    let setting = KeepAwakeSetting::from(setting);
    let headline = match setting {
        KeepAwakeSetting::OnPower => {
            "This computer is kept awake while remote work runs, on mains power only."
        }
        KeepAwakeSetting::Always => "This computer is kept awake while remote work runs, on battery too.",
        KeepAwakeSetting::Never => "This computer sleeps as it would, remote work or not.",
    };
    apply(setup, Change::KeepAwake(setting), json, headline)
}

pub fn trust(setup: &Setup, path: PathBuf, json: bool) -> ExitCode {
    let shown = resolved(setup, &path);
    apply(
        setup,
        Change::Trust(path),
        json,
        &format!("{shown} is a trusted project."),
    )
}

pub fn untrust(setup: &Setup, path: PathBuf, json: bool) -> ExitCode {
    let shown = path.display().to_string();
    apply(
        setup,
        Change::Untrust(path),
        json,
        &format!("{shown} is no longer a trusted project."),
    )
}

/// The folder as it will be stored, for the sentence; the change itself resolves it again and
/// refuses what does not exist.
fn resolved(setup: &Setup, path: &Path) -> String {
    let expanded = setup.dirs.expand_tilde(&path.to_string_lossy());
    lembas_device::canonical::canonicalize(&expanded)
        .unwrap_or(expanded)
        .display()
        .to_string()
}

/// Applies one change, then prints the new state (after `headline` in sentences).
fn apply(setup: &Setup, change: Change, json: bool, headline: &str) -> ExitCode {
    let before = settings::load(&setup.dirs).ok();
    match edit::apply(&setup.dirs, &[change]) {
        Ok(after) => {
            if !json {
                let same = before.as_ref() == Some(&after);
                println!("{headline}{}", if same { " (It already was.)" } else { "" });
                println!();
            }
            print_state(&after, json);
            ExitCode::SUCCESS
        }
        Err(e) => fail(json, e.to_string()),
    }
}

/// `{ remote: { …every key… }, trusted: [...] }`, as stored.
pub fn state_json(s: &Settings) -> Value {
    let r = &s.remote;
    json!({
        "remote": {
            "enabled": r.enabled,
            "roots": r.roots,
            "max_mode": r.max_mode,
            "require_trust": r.require_trust,
            "terminal": r.terminal,
            "terminal_integration": r.terminal_integration,
            "scheduled": r.scheduled,
            "approval_timeout": r.approval_timeout,
            "keep_awake": r.keep_awake.as_str(),
        },
        "trusted": s.trusted,
    })
}

fn print_state(s: &Settings, json: bool) {
    if json {
        println!("{}", state_json(s));
        return;
    }
    let r = &s.remote;
    let folders = |list: &[PathBuf], none: &str| {
        if list.is_empty() {
            format!("  (none: {none})")
        } else {
            list.iter()
                .map(|p| format!("  {}", p.display()))
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    println!("Remote work: {}", on_off(r.enabled));
    println!(
        "Folders remote work may use:\n{}",
        folders(&r.roots, "add one with lembas remote roots add <folder>")
    );
    println!("Widest mode: {}", r.max_mode);
    println!("Trusted project required: {}", on_off(r.require_trust));
    println!("Terminals: {}", on_off(r.terminal));
    println!("Shell integration: {}", on_off(r.terminal_integration));
    println!("Accept scheduled work: {}", on_off(r.scheduled));
    println!("Approval timeout: {} s", r.approval_timeout);
    println!(
        "Kept awake while remote work runs: {}",
        match r.keep_awake {
            KeepAwakeSetting::OnPower => "on mains power",
            KeepAwakeSetting::Always => "always",
            KeepAwakeSetting::Never => "never",
        }
    );
    println!(
        "Trusted projects:\n{}",
        folders(&s.trusted, "add one with lembas trust <folder>")
    );
    if r.scheduled && !r.enabled {
        println!("\nScheduled work also needs remote work on: lembas remote on");
    }
}
