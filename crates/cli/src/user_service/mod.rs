//! `lembas service install | uninstall | status`: the device started at login by the OS's own
//! service manager, as `code tunnel service install` does: a systemd user unit on Linux, a launchd
//! agent on macOS. The file is written first, then the manager is asked; a manager that cannot be
//! reached (no user session bus, a container) leaves the file in place and says the command to run.

#[cfg(windows)]
mod run_key;
mod unit;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lembas_device::paths::Dirs;
use lembas_device::setup::Setup;
use serde::Serialize;
use serde_json::json;

/// What `status` (and the end of `install` and `uninstall`) reports.
#[derive(Debug, Serialize)]
struct Report {
    installed: bool,
    /// The unit's (or agent's) file.
    file: PathBuf,
    /// The executable it starts, when installed.
    starts: Option<String>,
    /// The manager's words: `enabled`, `disabled`… (launchd: `loaded`, `not loaded`).
    enabled: Option<String>,
    /// `active`, `inactive`, `failed`… (launchd: `running`, `not running`).
    active: Option<String>,
    /// Why the manager could not be asked, when it could not.
    manager_error: Option<String>,
}

/// This `lembas` executable, which the service runs; the sentence when its path cannot be read.
fn this_executable() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("the path of this lembas executable cannot be read: {e}"))
}

// On Windows the Run key serves it (`run_key`), and what follows is not reached.
#[cfg_attr(windows, allow(unreachable_code))]
pub fn install(setup: &Setup, json: bool) -> ExitCode {
    #[cfg(windows)]
    return run_key::install(setup, json);
    let dirs = &setup.dirs;
    let exe = match this_executable() {
        Ok(exe) => exe,
        Err(why) => return fail(json, why),
    };
    let Some(platform) = Platform::here() else {
        return fail(json, UNSUPPORTED.to_string());
    };
    let file = platform.file(dirs);
    let text = platform.text(&exe, dirs);
    match std::fs::read_to_string(&file) {
        Ok(old) if old == text => {}
        Ok(_) => {
            return fail(
                json,
                format!(
                    "a service is already installed at {} and starts another lembas (not {}); run `lembas service uninstall` first, then `lembas service install` again",
                    file.display(),
                    exe.display()
                ),
            );
        }
        // Not there (or a file where its folder should be: the write says so).
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            if let Err(e) = write_new(&file, &text) {
                return fail(
                    json,
                    format!(
                        "the service's file {} cannot be written ({e}); check that folder's permissions, then run `lembas service install` again",
                        file.display()
                    ),
                );
            }
        }
        Err(e) => {
            return fail(
                json,
                format!(
                    "{} cannot be read ({e}); move it away, then run `lembas service install` again",
                    file.display()
                ),
            );
        }
    }
    let started = platform.start(&file);
    let report = platform.report(dirs);
    match started {
        Ok(()) => {
            if json {
                println!("{}", json!({ "event": "installed", "service": report }));
            } else {
                println!(
                    "Installed: {} starts {} service run at login, and it runs now.",
                    file.display(),
                    exe.display()
                );
                println!("{}", platform.where_it_logs(dirs));
            }
            ExitCode::SUCCESS
        }
        Err(why) => fail(
            json,
            format!(
                "the service's file is written ({}), but {why}; in your desktop session run: {}",
                file.display(),
                platform.start_by_hand(&file)
            ),
        ),
    }
}

// On Windows the Run key serves it (`run_key`), and what follows is not reached.
#[cfg_attr(windows, allow(unreachable_code))]
pub fn uninstall(setup: &Setup, json: bool) -> ExitCode {
    #[cfg(windows)]
    return run_key::uninstall(setup, json);
    let dirs = &setup.dirs;
    let Some(platform) = Platform::here() else {
        return fail(json, UNSUPPORTED.to_string());
    };
    let file = platform.file(dirs);
    if !file.exists() {
        if json {
            println!("{}", json!({ "event": "not_installed", "file": file }));
        } else {
            println!("No service is installed (there is no {}).", file.display());
        }
        return ExitCode::SUCCESS;
    }
    // Stopped first, while the manager still knows the file; the file goes even when it cannot be
    // asked (nothing starts the device at the next login then).
    let stopped = platform.stop(&file);
    if let Err(e) = std::fs::remove_file(&file) {
        return fail(
            json,
            format!("{} cannot be removed ({e}); remove it by hand", file.display()),
        );
    }
    platform.forget();
    if json {
        println!(
            "{}",
            json!({ "event": "uninstalled", "file": file, "manager_error": stopped.as_ref().err() })
        );
    } else {
        println!(
            "Uninstalled: {} is removed; the device no longer starts at login.",
            file.display()
        );
        if let Err(why) = stopped {
            println!(
                "But {why}: if the device still runs, stop it with: {}",
                platform.stop_by_hand()
            );
        }
    }
    ExitCode::SUCCESS
}

// On Windows the Run key serves it (`run_key`), and what follows is not reached.
#[cfg_attr(windows, allow(unreachable_code))]
pub fn status(setup: &Setup, json: bool) -> ExitCode {
    #[cfg(windows)]
    return run_key::status(setup, json);
    let dirs = &setup.dirs;
    let Some(platform) = Platform::here() else {
        return fail(json, UNSUPPORTED.to_string());
    };
    let report = platform.report(dirs);
    if json {
        println!("{}", serde_json::to_string(&report).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    if !report.installed {
        println!(
            "Not installed: nothing starts the device at login ({} does not exist). Install it with: lembas service install",
            report.file.display()
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "Installed: {} starts {} service run at login.",
        report.file.display(),
        report.starts.as_deref().unwrap_or("lembas")
    );
    match (&report.enabled, &report.active, &report.manager_error) {
        (Some(enabled), Some(active), _) => println!("The service manager says: {enabled}, {active}."),
        (_, _, Some(why)) => println!("The service manager could not be asked: {why}."),
        _ => {}
    }
    ExitCode::SUCCESS
}

const UNSUPPORTED: &str = "lembas service install works on Linux (systemd), macOS (launchd) and Windows (the Run key); on this system start `lembas service run` with the system's own service tool";

fn fail(json: bool, message: String) -> ExitCode {
    crate::login::fail(json, message)
}

/// Writes a new file, its folder made first, through the device's atomic replace: a half-written
/// unit is never read.
fn write_new(file: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))?;
    lembas_device::tools::replace_file(file, text.as_bytes())
}

/// The service manager of this OS.
#[derive(Clone, Copy)]
enum Platform {
    Systemd,
    Launchd,
}

impl Platform {
    fn here() -> Option<Platform> {
        if cfg!(target_os = "macos") {
            Some(Platform::Launchd)
        } else if cfg!(unix) {
            Some(Platform::Systemd)
        } else {
            None
        }
    }

    fn file(self, dirs: &Dirs) -> PathBuf {
        match self {
            Platform::Systemd => lembas_device::paths::xdg_config_home_from_env()
                .join("systemd/user")
                .join(unit::SYSTEMD_NAME),
            Platform::Launchd => dirs
                .home
                .join("Library/LaunchAgents")
                .join(format!("{}.plist", unit::LAUNCHD_LABEL)),
        }
    }

    fn text(self, exe: &Path, dirs: &Dirs) -> String {
        match self {
            Platform::Systemd => unit::systemd(exe),
            // Its own output apart from the service's daily files: what is said before logging starts.
            Platform::Launchd => unit::launchd(exe, &launchd_output(dirs)),
        }
    }

    fn where_it_logs(self, dirs: &Dirs) -> String {
        match self {
            Platform::Systemd => format!(
                "`lembas service status` shows it; its log: journalctl --user -u lembas, and a file a day in {}",
                dirs.log_dir().display()
            ),
            Platform::Launchd => format!(
                "`lembas service status` shows it; its log: a file a day in {}",
                dirs.log_dir().display()
            ),
        }
    }

    /// Asks the manager to read the file, start it at login and start it now.
    fn start(self, file: &Path) -> Result<(), String> {
        match self {
            Platform::Systemd => {
                manager(&["systemctl", "--user", "daemon-reload"])?;
                manager(&["systemctl", "--user", "enable", "--now", unit::SYSTEMD_NAME]).map(|_| ())
            }
            Platform::Launchd => {
                let _ = manager(&["launchctl", "bootout", &launchd_target()]);
                manager(&[
                    "launchctl",
                    "bootstrap",
                    &launchd_domain(),
                    &file.to_string_lossy(),
                ])
                .map(|_| ())
            }
        }
    }

    fn start_by_hand(self, file: &Path) -> String {
        match self {
            Platform::Systemd => format!(
                "systemctl --user daemon-reload && systemctl --user enable --now {}",
                unit::SYSTEMD_NAME
            ),
            Platform::Launchd => format!("launchctl bootstrap {} '{}'", launchd_domain(), file.display()),
        }
    }

    fn stop(self, _file: &Path) -> Result<(), String> {
        match self {
            Platform::Systemd => {
                manager(&["systemctl", "--user", "disable", "--now", unit::SYSTEMD_NAME]).map(|_| ())
            }
            Platform::Launchd => manager(&["launchctl", "bootout", &launchd_target()]).map(|_| ()),
        }
    }

    fn stop_by_hand(self) -> String {
        match self {
            Platform::Systemd => format!("systemctl --user stop {}", unit::SYSTEMD_NAME),
            Platform::Launchd => format!("launchctl bootout {}", launchd_target()),
        }
    }

    /// After the file is gone: the manager forgets it (best effort; nothing reads it again).
    fn forget(self) {
        if let Platform::Systemd = self {
            let _ = manager(&["systemctl", "--user", "daemon-reload"]);
        }
    }

    fn report(self, dirs: &Dirs) -> Report {
        let file = self.file(dirs);
        let text = std::fs::read_to_string(&file).ok();
        let starts = text.as_deref().and_then(|t| self.starts(t));
        let mut report = Report {
            installed: text.is_some(),
            file,
            starts,
            enabled: None,
            active: None,
            manager_error: None,
        };
        if !report.installed {
            return report;
        }
        let asked = match self {
            Platform::Systemd => manager_says(&["systemctl", "--user", "is-enabled", unit::SYSTEMD_NAME])
                .and_then(|enabled| {
                    let active = manager_says(&["systemctl", "--user", "is-active", unit::SYSTEMD_NAME])?;
                    Ok((enabled, active))
                }),
            Platform::Launchd => match manager(&["launchctl", "print", &launchd_target()]) {
                Ok(out) if out.contains("state = running") => Ok(("loaded".into(), "running".into())),
                Ok(_) => Ok(("loaded".into(), "not running".into())),
                Err(_) => Ok(("not loaded".into(), "not running".into())),
            },
        };
        match asked {
            Ok((enabled, active)) => {
                report.enabled = Some(enabled);
                report.active = Some(active);
            }
            Err(why) => report.manager_error = Some(why),
        }
        report
    }

    /// The executable the installed file starts, read back from it.
    fn starts(self, text: &str) -> Option<String> {
        match self {
            Platform::Systemd => text
                .lines()
                .find_map(|l| l.strip_prefix("ExecStart="))
                .and_then(|l| l.strip_suffix(" service run"))
                .map(|w| w.trim_matches('"').to_string()),
            Platform::Launchd => text
                .split("<string>")
                .nth(2)
                .and_then(|s| s.split("</string>").next())
                .map(str::to_string),
        }
    }
}

fn launchd_output(dirs: &Dirs) -> PathBuf {
    dirs.log_dir().join("launchd-output.log")
}

fn launchd_domain() -> String {
    // SAFETY: getuid cannot fail and touches no memory.
    #[cfg(unix)]
    let uid = unsafe { libc::getuid() };
    // launchd is macOS's: `Platform::here` never names it elsewhere.
    #[cfg(not(unix))]
    let uid = 0;
    format!("gui/{uid}")
}

fn launchd_target() -> String {
    format!("{}/{}", launchd_domain(), unit::LAUNCHD_LABEL)
}

/// Runs a manager's command; its output, or why it failed in its own words.
fn manager(argv: &[&str]) -> Result<String, String> {
    let out = manager_output(argv)?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(format!(
        "`{}` failed ({})",
        argv.join(" "),
        if said.is_empty() {
            out.status.to_string()
        } else {
            said
        }
    ))
}

/// A query whose answer is its output even when it exits non-zero (`is-enabled` says `disabled`
/// with status 1); an error only when it said nothing on standard output.
fn manager_says(argv: &[&str]) -> Result<String, String> {
    let out = manager_output(argv)?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if said.is_empty() {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(format!("`{}` failed ({err})", argv.join(" ")));
    }
    Ok(said)
}

fn manager_output(argv: &[&str]) -> Result<std::process::Output, String> {
    std::process::Command::new(argv[0])
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{} cannot be run ({e})", argv[0]))
}
