//! `lembas service run` and `lembas status`.

use lembas_device::events::LinkState;
use lembas_device::link::Stop;
use lembas_device::runtime::Runtime;
use lembas_device::setup::Setup;
use lembas_device::status;
use std::process::ExitCode;

use crate::live::{self, Live};

pub fn run(setup: &Setup) -> ExitCode {
    lembas_device::log_file::init(&setup.dirs, "service");
    #[cfg(windows)]
    leave_a_console_of_its_own();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lembas: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(setup.clone()))
}

async fn serve(setup: Setup) -> ExitCode {
    let device = match Runtime::start(setup, "lembas service run") {
        Ok(d) => d,
        Err(e) => {
            eprintln!("lembas: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = device.shutdown_handle();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("stopping: closing the link");
        let _ = shutdown.send(true);
    });
    match device.wait().await {
        Stop::Shutdown => ExitCode::SUCCESS,
        stop => {
            eprintln!("lembas: {}", stop.message().unwrap_or("stopped"));
            ExitCode::FAILURE
        }
    }
}

/// SIGTERM (the service manager's stop) or SIGINT (Ctrl-C).
#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
    else {
        // Without signal handlers the default action (exit) still applies.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// Ctrl-C or Ctrl-Break in its console, its console closed, the person logging off or the computer
/// shutting down.
#[cfg(windows)]
async fn wait_for_signal() {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_logoff, ctrl_shutdown};
    let (Ok(mut c), Ok(mut brk), Ok(mut close), Ok(mut logoff), Ok(mut shutdown)) = (
        ctrl_c(),
        ctrl_break(),
        ctrl_close(),
        ctrl_logoff(),
        ctrl_shutdown(),
    ) else {
        // Without handlers the default action (exit) still applies.
        return std::future::pending().await;
    };
    tokio::select! {
        _ = c.recv() => {}
        _ = brk.recv() => {}
        _ = close.recv() => {}
        _ = logoff.recv() => {}
        _ = shutdown.recv() => {}
    }
}

/// Started at logon by the Run key, `lembas.exe` (a console program) gets a console window of its
/// own, which would stay open all session and end the device when closed: it lets go of a console
/// no other process shares, so the window goes as it shows. Run in a terminal, it keeps the
/// terminal's. Its log is in its file either way. Without a console it is not told of log-off or
/// shut-down, and ends with the session as any windowless program.
#[cfg(windows)]
fn leave_a_console_of_its_own() {
    use windows_sys::Win32::System::Console::{FreeConsole, GetConsoleProcessList};
    let mut attached = [0u32; 2];
    // SAFETY: the buffer's length is the one given; the call writes at most that many ids.
    let sharing = unsafe { GetConsoleProcessList(attached.as_mut_ptr(), attached.len() as u32) };
    if sharing == 1 {
        // SAFETY: no handle of the console is held past this point; stdio then writes nowhere.
        unsafe { FreeConsole() };
    }
}

pub fn status(setup: &Setup, json: bool) -> ExitCode {
    // The running device says its state itself; with none running, the file has its last word.
    let (running, last) = match live::ask(&setup.dirs, |mut client| async move { client.status().await }) {
        Live::Answered(now) => (true, Some(now)),
        _ => status::read(&setup.dirs),
    };
    if json {
        println!("{}", serde_json::json!({ "running": running, "status": last }));
        return ExitCode::SUCCESS;
    }
    if !running {
        println!("No LLeMbas device is running for this user. Start one with: lembas service run");
    }
    let Some(s) = last else {
        return ExitCode::SUCCESS;
    };
    if !running {
        print!("When it stopped: ");
    }
    let server = s.server.as_deref().unwrap_or("no server");
    let line = match &s.link {
        LinkState::Linked => format!(
            "Linked to {} ({server}).",
            s.connection.as_deref().unwrap_or(server)
        ),
        LinkState::Connecting | LinkState::Starting => format!("Connecting to {server}…"),
        LinkState::Offline { retry_in_ms } => {
            format!("Offline, retrying in {}s.", retry_in_ms.div_ceil(1000))
        }
        LinkState::NotLoggedIn => "Not logged in.".to_string(),
        LinkState::ServerNeedsUpdate => format!("{server} needs updating."),
        LinkState::TokenRefused => format!("{server} refused the token: log in again."),
        LinkState::Stopped => "Stopped.".to_string(),
    };
    println!("{line}");
    match s.agents_working {
        0 => println!("No agent is working now."),
        n => println!(
            "{n} agent{} working now, in {}.",
            if n == 1 { " is" } else { "s are" },
            s.working_in.join(", ")
        ),
    }
    if let Some(awake) = &s.keep_awake {
        match awake.held {
            true => println!("Keeping this computer awake: {}.", awake.why),
            false => println!("Not keeping this computer awake: {}.", awake.why),
        }
    }
    if let Some(limits) = &s.limits {
        println!("Limits the instance was told: {limits}");
    }
    if let Some(sandbox) = &s.sandbox {
        println!("Sandbox for remote commands: {sandbox}");
    }
    if let Some(e) = &s.last_error {
        println!("Last error: {e}");
    }
    ExitCode::SUCCESS
}
