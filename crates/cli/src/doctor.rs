//! `lembas doctor`: whether this computer can link and work, one check a line, each failing one
//! with what to do. Checks: the config, the login (the token where it is kept, the server reachable
//! on protocol 3 and accepting it), the device running here (the lock's holder, its control
//! socket), the log folder, whether commands run sandboxed, and on Linux the desktop's D-Bus parts (the session bus,
//! a tray host, a notification server). A failed check makes the exit 1; a warning does not.

use serde::Serialize;
use std::process::ExitCode;

use lembas_device::keychain::TokenStorage;
use lembas_device::setup::Setup;
use lembas_device::{control, lock, login, paths, sandbox, settings};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    Ok,
    /// Works, with less than it could (no tray host, no sandbox).
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    check: &'static str,
    level: Level,
    said: String,
    /// What to do, for a warning or a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

fn ok(check: &'static str, said: impl Into<String>) -> Check {
    Check {
        check,
        level: Level::Ok,
        said: said.into(),
        fix: None,
    }
}

fn not(check: &'static str, level: Level, said: impl Into<String>, fix: impl Into<String>) -> Check {
    Check {
        check,
        level,
        said: said.into(),
        fix: Some(fix.into()),
    }
}

pub fn run(setup: &Setup, json: bool) -> ExitCode {
    let checks = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime.block_on(checks(setup)),
        Err(e) => vec![not(
            "start",
            Level::Fail,
            format!("cannot start: {e}"),
            "Try again.",
        )],
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&checks).unwrap_or_default());
    } else {
        for c in &checks {
            let mark = match c.level {
                Level::Ok => "ok  ",
                Level::Warn => "warn",
                Level::Fail => "FAIL",
            };
            println!("{mark}  {:<10} {}", c.check, c.said);
            if let Some(fix) = &c.fix {
                println!("      {:<10} → {fix}", "");
            }
        }
    }
    if checks.iter().any(|c| c.level == Level::Fail) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

async fn checks(setup: &Setup) -> Vec<Check> {
    let mut out = Vec::new();
    let config = setup.dirs.config_file();
    let settings = match settings::load(&setup.dirs) {
        Ok(settings) => {
            out.push(ok(
                "config",
                match config.exists() {
                    true => format!("{} reads well", config.display()),
                    false => format!("no {} yet: the defaults", config.display()),
                },
            ));
            Some(settings)
        }
        Err(e) => {
            out.push(not(
                "config",
                Level::Fail,
                e.to_string(),
                format!(
                    "Fix {} (or move it away to start from the defaults).",
                    config.display()
                ),
            ));
            None
        }
    };
    out.extend(login_checks(setup, settings.as_ref()).await);
    out.extend(device_checks(setup).await);
    out.push(log_check(setup));
    let support = sandbox::support();
    out.push(match support.strip_prefix("none: ") {
        None if support.contains("no namespaces") => not(
            "sandbox",
            Level::Warn,
            format!("commands run in part of the box ({support})"),
            "Without namespaces a command still sees other processes, the machine's /tmp and sockets; \
             allow user namespaces for the device, or set remote.sandbox: required to refuse commands.",
        ),
        None => ok("sandbox", format!("commands run in a box ({support})")),
        Some(why) => not(
            "sandbox",
            Level::Warn,
            format!("commands run without a kernel sandbox: {why}"),
            "Commands are still judged and asked; set remote.sandbox: required to refuse them instead.",
        ),
    });
    #[cfg(windows)]
    out.push(match lembas_device::commands_shell::found() {
        Ok(bash) => ok("commands", format!("commands run with {}", bash.display())),
        Err(why) => not(
            "commands",
            Level::Warn,
            why,
            "Install Git for Windows (its bash.exe runs the bash tool, jobs and watches), then restart the device.",
        ),
    });
    out.extend(desktop_checks().await);
    out
}

/// The log folder takes today's lines (opened for appending, as the service's log does).
fn log_check(setup: &Setup) -> Check {
    let dir = setup.dirs.log_dir();
    let file = lembas_device::log_file::today(&setup.dirs, "service");
    let writable = paths::ensure_private_dir(&dir).and_then(|()| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .map(drop)
    });
    match writable {
        Ok(()) => ok(
            "logs",
            format!("kept in {} (a file a day, a week kept)", dir.display()),
        ),
        Err(e) => not(
            "logs",
            Level::Warn,
            format!(
                "the log cannot be written in {} ({e}): the device logs to standard error only",
                dir.display()
            ),
            format!("Make {} a folder you can write.", dir.display()),
        ),
    }
}

async fn login_checks(setup: &Setup, settings: Option<&settings::Settings>) -> Vec<Check> {
    let Some(server) = settings.and_then(|s| s.server.as_ref()) else {
        return vec![not(
            "login",
            Level::Fail,
            "not logged in: the config names no server",
            "lembas login --token-stdin --server <url> < file-holding-the-token",
        )];
    };
    let keychain = setup.keychain.clone();
    let token = match tokio::task::spawn_blocking(move || keychain.load_with_storage()).await {
        Ok(Ok((token, storage))) => {
            let mut checks = vec![match storage {
                TokenStorage::Keychain => ok("token", "the device token is in the OS keychain"),
                TokenStorage::InsecureFile => not(
                    "token",
                    Level::Warn,
                    format!(
                        "the device token is in a plain file ({})",
                        setup.keychain.token_file().display()
                    ),
                    "Log in again without --insecure-storage once a keychain is unlocked.",
                ),
            }];
            checks.push(
                match login::prove(&server.url, &token, setup.decisions.protocol).await {
                    Ok(version) => ok(
                        "server",
                        format!("{} answers (LLeMbas {version}) and accepts the token", server.url),
                    ),
                    Err(e) => not(
                        "server",
                        Level::Fail,
                        e.to_string(),
                        "Check the address and the network; a refused token needs a new login.",
                    ),
                },
            );
            return checks;
        }
        Ok(Err(e)) => e.to_string(),
        Err(e) => format!("the keychain could not be read: {e}"),
    };
    vec![not(
        "token",
        Level::Fail,
        token,
        "Unlock the keychain, or log in again: lembas login --token-stdin --server <url>",
    )]
}

async fn device_checks(setup: &Setup) -> Vec<Check> {
    let dirs = setup.dirs.clone();
    let holder = tokio::task::spawn_blocking(move || lock::holder(&dirs))
        .await
        .ok()
        .flatten();
    let Some(holder) = holder else {
        return vec![not(
            "device",
            Level::Warn,
            "no device runs for this user: nothing links this computer now",
            "Start one: lembas service run (or LLeMbas Desktop).",
        )];
    };
    let running = ok("device", format!("{holder} holds this computer's link"));
    let socket = match control::Client::connect(&setup.dirs).await {
        Ok(_) => ok("control", "its control socket answers"),
        Err(e) => not(
            "control",
            Level::Fail,
            format!("its control socket does not answer: {e}"),
            "Restart it: the window, lembas approvals and lembas status need the socket.",
        ),
    };
    vec![running, socket]
}

/// The session bus and who is on it, on Linux.
#[cfg(target_os = "linux")]
async fn desktop_checks() -> Vec<Check> {
    use lembas_device::desktop_bus::{self, BusError};
    let bus = match desktop_bus::ask().await {
        Ok(bus) => bus,
        Err(e @ BusError::NoBus(_)) => {
            return vec![not(
                "d-bus",
                Level::Warn,
                e.to_string(),
                "Headless, that is fine; LLeMbas Desktop needs one for its tray icon, notifications and keychain.",
            )];
        }
        Err(e @ BusError::NoAnswer(_)) => {
            return vec![not(
                "d-bus",
                Level::Warn,
                e.to_string(),
                "Restart the desktop session.",
            )];
        }
    };
    let tray = if bus.tray_host {
        ok("tray", "a tray host shows status icons (StatusNotifier)")
    } else {
        not(
            "tray",
            Level::Warn,
            "no tray host: LLeMbas Desktop's icon will not show",
            "On GNOME, turn on the AppIndicator extension; the window remains the place to control the device.",
        )
    };
    let notices = if bus.notifications {
        ok("notices", "a notification server shows approval cards")
    } else {
        not(
            "notices",
            Level::Warn,
            "no notification server: approval cards show only in the window and LLeMbas",
            "Start the desktop's notification daemon (dunst, mako, the desktop's own).",
        )
    };
    vec![ok("d-bus", "the session bus answers"), tray, notices]
}

#[cfg(not(target_os = "linux"))]
async fn desktop_checks() -> Vec<Check> {
    Vec::new()
}
