//! Windows: `lembas service install` as a value under the person's own Run key
//! (`HKCU\Software\Microsoft\Windows\CurrentVersion\Run`, value `LLeMbas`), which starts
//! `lembas.exe service run` at their logon. Chosen over a Task Scheduler logon task: it needs no
//! administrator (an `ONLOGON` task does, in most setups) and no COM, the person sees and turns it
//! off where Windows lists startup apps (Task Manager, Settings), and Wine has it, so it is tested
//! here. What it lacks against systemd: no restart after a crash.

use std::path::Path;
use std::process::ExitCode;

use super::this_executable;
use lembas_device::paths::Dirs;
use lembas_device::setup::Setup;
use serde::Serialize;
use serde_json::json;
use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_SUCCESS};
use windows_sys::Win32::System::Registry::{
    HKEY_CURRENT_USER, REG_SZ, RRF_RT_REG_SZ, RegDeleteKeyValueW, RegGetValueW, RegSetKeyValueW,
};

const RUN_KEY: &str = r"Software\Microsoft\Windows\CurrentVersion\Run";
const VALUE: &str = "LLeMbas";

/// What `status` (and the end of `install` and `uninstall`) reports.
#[derive(Debug, Serialize)]
struct Report {
    installed: bool,
    /// Where the entry is: `HKCU\…\Run\LLeMbas`.
    entry: String,
    /// The command line it runs at logon, when installed.
    starts: Option<String>,
    /// Who holds the device lock now (`lembas service run (pid N)`), when a device runs.
    running: Option<String>,
}

fn entry() -> String {
    format!(r"HKCU\{RUN_KEY}\{VALUE}")
}

/// The command line the Run key holds: the executable quoted, as Windows parses it.
pub fn command_line(exe: &Path) -> String {
    format!("\"{}\" service run", exe.display())
}

fn report(dirs: &Dirs) -> Result<Report, String> {
    let starts = read()?;
    Ok(Report {
        installed: starts.is_some(),
        entry: entry(),
        starts,
        running: lembas_device::lock::holder(dirs),
    })
}

pub fn install(setup: &Setup, json: bool) -> ExitCode {
    let exe = match this_executable() {
        Ok(exe) => exe,
        Err(why) => return fail(json, why),
    };
    let line = command_line(&exe);
    match read() {
        Ok(Some(old)) if old != line => {
            return fail(
                json,
                format!(
                    "{} already starts another lembas ({old}); run `lembas service uninstall` first, then `lembas service install` again",
                    entry()
                ),
            );
        }
        Ok(_) => {}
        Err(e) => return fail(json, e),
    }
    if let Err(e) = write(&line) {
        return fail(json, e);
    }
    // Started now too, as the logon will: detached, with no console window of its own.
    let started = match lembas_device::lock::holder(&setup.dirs) {
        Some(_) => Ok(()),
        None => start(&exe),
    };
    let report = match report(&setup.dirs) {
        Ok(report) => report,
        Err(e) => return fail(json, e),
    };
    match started {
        Ok(()) if json => println!("{}", json!({ "event": "installed", "service": report })),
        Ok(()) => println!(
            "Installed: {} runs {line} at logon, and it runs now.",
            report.entry
        ),
        Err(why) => {
            return fail(
                json,
                format!(
                    "{} is written, but {why}; start it now with: {line}",
                    report.entry
                ),
            );
        }
    }
    ExitCode::SUCCESS
}

pub fn uninstall(setup: &Setup, json: bool) -> ExitCode {
    match read() {
        Ok(None) => {
            if json {
                println!("{}", json!({ "event": "not_installed", "entry": entry() }));
            } else {
                println!("No service is installed (there is no {}).", entry());
            }
            return ExitCode::SUCCESS;
        }
        Ok(Some(_)) => {}
        Err(e) => return fail(json, e),
    }
    if let Err(e) = remove() {
        return fail(json, e);
    }
    // The device running now is left to run: Windows has no gentle way to stop another console's
    // process (no signals), and the tray stops it when asked.
    let running = lembas_device::lock::holder(&setup.dirs);
    if json {
        println!(
            "{}",
            json!({ "event": "uninstalled", "entry": entry(), "running": running })
        );
    } else {
        println!(
            "Uninstalled: {} is removed; the device no longer starts at logon.",
            entry()
        );
        if let Some(running) = running {
            println!("The device running now ({running}) runs until you log off or end it.");
        }
    }
    ExitCode::SUCCESS
}

pub fn status(setup: &Setup, json: bool) -> ExitCode {
    let report = match report(&setup.dirs) {
        Ok(report) => report,
        Err(e) => return fail(json, e),
    };
    if json {
        println!("{}", serde_json::to_string(&report).unwrap_or_default());
        return ExitCode::SUCCESS;
    }
    match &report.starts {
        None => println!(
            "Not installed: nothing starts the device at logon ({} does not exist). Install it with: lembas service install",
            report.entry
        ),
        Some(line) => println!("Installed: {} runs {line} at logon.", report.entry),
    }
    match &report.running {
        Some(holder) => println!("Running now: {holder}."),
        None => println!("Not running now."),
    }
    ExitCode::SUCCESS
}

fn fail(json: bool, message: String) -> ExitCode {
    crate::login::fail(json, message)
}

fn start(exe: &Path) -> Result<(), String> {
    use std::os::windows::process::CommandExt;
    // DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW: not this console's, so
    // closing it does not end the device.
    const FLAGS: u32 = 0x0000_0008 | 0x0000_0200 | 0x0800_0000;
    std::process::Command::new(exe)
        .args(["service", "run"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .creation_flags(FLAGS)
        .spawn()
        .map(drop)
        .map_err(|e| format!("the device could not be started ({e})"))
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

/// The Run value's text, or `None` when there is none.
fn read() -> Result<Option<String>, String> {
    let (key, value) = (wide(RUN_KEY), wide(VALUE));
    let mut size: u32 = 0;
    // SAFETY: the names are NUL-terminated; a null buffer asks for the size in bytes.
    let found = unsafe {
        RegGetValueW(
            HKEY_CURRENT_USER,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut size,
        )
    };
    match found {
        ERROR_FILE_NOT_FOUND => return Ok(None),
        ERROR_SUCCESS => {}
        code => return Err(format!("{} cannot be read (Windows error {code})", entry())),
    }
    let mut buffer = vec![0u16; (size as usize).div_ceil(2)];
    let mut size = u32::try_from(buffer.len() * 2).unwrap_or(u32::MAX);
    // SAFETY: `buffer` holds `size` bytes; the call writes at most that.
    let read = unsafe {
        RegGetValueW(
            HKEY_CURRENT_USER,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            buffer.as_mut_ptr().cast(),
            &mut size,
        )
    };
    match read {
        ERROR_FILE_NOT_FOUND => Ok(None),
        ERROR_SUCCESS => {
            let end = buffer.iter().position(|&c| c == 0).unwrap_or(buffer.len());
            Ok(Some(String::from_utf16_lossy(&buffer[..end])))
        }
        code => Err(format!("{} cannot be read (Windows error {code})", entry())),
    }
}

fn write(line: &str) -> Result<(), String> {
    let (key, value, data) = (wide(RUN_KEY), wide(VALUE), wide(line));
    let bytes = u32::try_from(data.len() * 2).map_err(|_| "the command line is too long".to_string())?;
    // SAFETY: NUL-terminated names; `data` is `bytes` long, NUL included, as REG_SZ wants.
    let written = unsafe {
        RegSetKeyValueW(
            HKEY_CURRENT_USER,
            key.as_ptr(),
            value.as_ptr(),
            REG_SZ,
            data.as_ptr().cast(),
            bytes,
        )
    };
    match written {
        ERROR_SUCCESS => Ok(()),
        code => Err(format!("{} cannot be written (Windows error {code})", entry())),
    }
}

fn remove() -> Result<(), String> {
    let (key, value) = (wide(RUN_KEY), wide(VALUE));
    // SAFETY: NUL-terminated names.
    match unsafe { RegDeleteKeyValueW(HKEY_CURRENT_USER, key.as_ptr(), value.as_ptr()) } {
        ERROR_SUCCESS | ERROR_FILE_NOT_FOUND => Ok(()),
        code => Err(format!("{} cannot be removed (Windows error {code})", entry())),
    }
}
