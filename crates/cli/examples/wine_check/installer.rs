//! The installer (`scripts/package-windows`) run silently under Wine: it installs the tray, the
//! window and lembas.exe for this account with a Start menu folder, the app's id for toasts, the
//! entry Windows lists under installed apps, and its folder on the account's Path (once, however
//! often it runs, after the entries already there; a Path too long to read whole is left as it
//! is); its uninstaller, run silently, removes them, the folder from the Path and both
//! start-at-login entries (the service's and the tray's), and leaves the person's config and the
//! rest of the Path.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::{Wine, output, said};

const UNINSTALL_KEY: &str = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\LLeMbas";
const APP_ID_KEY: &str = r"HKCU\Software\Classes\AppUserModelId\LLeMbas.Desktop";
const RUN_KEY: &str = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run";
const ENVIRONMENT_KEY: &str = r"HKCU\Environment";
/// The account's Path before the install, as Windows keeps one: a variable left unexpanded.
const PATH_BEFORE: &str = r"C:\tools;%USERPROFILE%\bin";
const INSTALLED: [&str; 8] = [
    "lembas-desktop.exe",
    "lembas-window.exe",
    "WebView2Loader.dll",
    "lembas.exe",
    "lembas.ico",
    "uninstall.exe",
    "LICENSE.txt",
    "THIRD-PARTY-NOTICES.txt",
];
const SHORTCUTS: [&str; 2] = ["LLeMbas Desktop.lnk", "Uninstall LLeMbas.lnk"];

pub fn install_and_uninstall(wine: &Wine, installer: &Path) -> Result<(), String> {
    let profile = wine.profile()?;
    let folder = profile.join("AppData/Local/Programs/LLeMbas");
    let menu = profile.join("AppData/Roaming/Microsoft/Windows/Start Menu/Programs/LLeMbas");
    // A Path longer than the installer can read whole is left as it is: written back cut, it
    // would lose the person's entries.
    let long: String = (0..110).map(|i| format!(r"C:\t\{i:04};")).collect();
    set_account_path(wine, &long)?;
    install(wine, installer)?;
    if account_path(wine)? != ("REG_EXPAND_SZ", long.clone()) {
        return Err(format!(
            "the installer changed a Path of {} characters it cannot read whole",
            long.len()
        ));
    }
    set_account_path(wine, PATH_BEFORE)?;
    // Twice, as an update over an installed one runs it: the folder goes on the Path once.
    install(wine, installer)?;
    install(wine, installer)?;
    for file in INSTALLED {
        if !folder.join(file).is_file() {
            return Err(format!(
                "the installer did not put {file} in {}",
                folder.display()
            ));
        }
    }
    for shortcut in SHORTCUTS {
        if !menu.join(shortcut).is_file() {
            return Err(format!("the Start menu has no {shortcut} in {}", menu.display()));
        }
    }
    let entry = reg(wine, &["query", UNINSTALL_KEY])?;
    for needle in [
        "DisplayVersion",
        "QuietUninstallString",
        r"Programs\LLeMbas\uninstall.exe",
    ] {
        if !said(&entry).contains(needle) {
            return Err(format!(
                "the installed apps' entry lacks {needle}: {}",
                said(&entry)
            ));
        }
    }
    if !said(&reg(wine, &["query", APP_ID_KEY])?).contains("LLeMbas Desktop") {
        return Err("the installer did not register the app's id for toasts".into());
    }
    let account = profile.file_name().unwrap_or_default().to_string_lossy();
    let folder_on_windows = format!(r"C:\users\{account}\AppData\Local\Programs\LLeMbas");
    let path = account_path(wine)?;
    let expected = format!("{PATH_BEFORE};{folder_on_windows}");
    if path != ("REG_EXPAND_SZ", expected.clone()) {
        return Err(format!(
            "after two installs the account's Path is {path:?}, not {expected:?} (REG_EXPAND_SZ)"
        ));
    }
    let mut said_versions = Vec::new();
    for program in ["lembas", "lembas-desktop", "lembas-window"] {
        let mut version = Command::new(&wine.wine);
        version.args([
            format!(r"{folder_on_windows}\{program}.exe").as_str(),
            "--version",
        ]);
        let version = output(version, None)?;
        if !said(&version).starts_with(&format!("{program} ")) {
            return Err(format!(
                "the installed {program}.exe did not run: {}",
                said(&version)
            ));
        }
        said_versions.push(said(&version).trim().to_string());
    }
    println!(
        "installer: {} installed in %LOCALAPPDATA%\\Programs\\LLeMbas; Start menu entries, the toasts' app id, the apps entry, the folder on the Path once",
        said_versions.join(" and ")
    );

    // The start-at-login entries for the installed programs, as `lembas service install` and the
    // tray's Start at login write them (without starting what would hold the files): the
    // uninstaller removes both.
    let service = format!("\"{folder_on_windows}\\lembas.exe\" service run");
    reg(wine, &["add", RUN_KEY, "/v", "LLeMbas", "/d", &service, "/f"])?;
    let tray = format!("{folder_on_windows}\\lembas-desktop.exe");
    reg(
        wine,
        &["add", RUN_KEY, "/v", "LLeMbas Desktop", "/d", &tray, "/f"],
    )?;
    let mut uninstall = Command::new(&wine.wine);
    uninstall.arg(folder.join("uninstall.exe")).arg("/S");
    output(uninstall, None)?;
    // NSIS's uninstaller runs from a copy in %TEMP% and returns at once: wait for its work, which
    // ends with the apps' entry.
    let started = Instant::now();
    while folder.exists() || menu.exists() || reg(wine, &["query", UNINSTALL_KEY])?.status.success() {
        if started.elapsed() > crate::WAIT {
            return Err(format!(
                "the uninstaller left {}, {} or the installed apps' entry",
                folder.display(),
                menu.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    for entry in ["LLeMbas", "LLeMbas Desktop"] {
        if reg(wine, &["query", RUN_KEY, "/v", entry])?.status.success() {
            return Err(format!(
                "the start-at-login entry {entry:?} is still there after uninstall"
            ));
        }
    }
    if reg(wine, &["query", APP_ID_KEY])?.status.success() {
        return Err("the app's id for toasts is still registered after uninstall".into());
    }
    let path = account_path(wine)?;
    if path != ("REG_EXPAND_SZ", PATH_BEFORE.to_string()) {
        return Err(format!(
            "after uninstall the account's Path is {path:?}, not {PATH_BEFORE:?} as before"
        ));
    }
    if !profile.join("AppData/Roaming/lembas/config.yaml").is_file() {
        return Err("the uninstaller removed the person's config".into());
    }
    println!(
        "installer: uninstalled silently; the files, the Start menu, the entries, the app id and the folder on the Path gone, the config and the rest of the Path kept"
    );
    Ok(())
}

fn install(wine: &Wine, installer: &Path) -> Result<(), String> {
    let mut setup = Command::new(&wine.wine);
    setup.arg(installer).arg("/S");
    let ran = output(setup, None)?;
    if !ran.status.success() {
        return Err(format!("the installer failed: {}", said(&ran)));
    }
    Ok(())
}

fn set_account_path(wine: &Wine, path: &str) -> Result<(), String> {
    let set = reg(
        wine,
        &[
            "add",
            ENVIRONMENT_KEY,
            "/v",
            "Path",
            "/t",
            "REG_EXPAND_SZ",
            "/d",
            path,
            "/f",
        ],
    )?;
    if !set.status.success() {
        return Err(format!("the account's Path could not be set: {}", said(&set)));
    }
    Ok(())
}

/// The account's Path value, its type and its text, as `reg query` shows them.
fn account_path(wine: &Wine) -> Result<(&'static str, String), String> {
    let query = reg(wine, &["query", ENVIRONMENT_KEY, "/v", "Path"])?;
    let shown = said(&query);
    for kind in ["REG_EXPAND_SZ", "REG_SZ"] {
        if let Some((_, value)) = shown.split_once(kind) {
            let line = value.lines().next().unwrap_or_default();
            return Ok((kind, line.trim().to_string()));
        }
    }
    Err(format!("the account's Path cannot be read: {shown}"))
}

fn reg(wine: &Wine, args: &[&str]) -> Result<std::process::Output, String> {
    let mut command = Command::new(&wine.wine);
    command.arg("reg").args(args);
    output(command, None)
}
