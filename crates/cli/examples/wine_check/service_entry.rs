//! The service's files where Windows keeps them, and `lembas service install|status|uninstall`
//! writing, reading and removing the Run key's value.

use std::process::Command;

use crate::{Wine, Work, expect, output, read, said};

/// Config in `%APPDATA%\lembas`, state and logs in `%LOCALAPPDATA%\lembas`, as the running device
/// left them: the config with the root set, the status file saying it is linked, the day's log
/// with the link in it, and the activity log with the card allowed from the shell.
pub fn files(wine: &Wine, work: &Work) -> Result<(), String> {
    let profile = wine.profile()?;
    let config = read(&profile.join("AppData/Roaming/lembas/config.yaml"))?;
    if !config.contains(&work.windows) {
        return Err(format!(
            "%APPDATA%\\lembas\\config.yaml does not hold the root: {config}"
        ));
    }
    let state = profile.join("AppData/Local/lembas");
    let status = read(&state.join("status.json"))?;
    if !status.contains("\"linked\"") {
        return Err(format!(
            "%LOCALAPPDATA%\\lembas\\status.json does not say linked: {status}"
        ));
    }
    let logs = state.join("logs");
    let log = std::fs::read_dir(&logs)
        .map_err(|e| format!("{} cannot be read: {e}", logs.display()))?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("service."))
        })
        .ok_or_else(|| format!("no service log in {}", logs.display()))?;
    if !read(&log)?.contains("linked") {
        return Err(format!("{} does not say the device linked", log.display()));
    }
    let activity = read(&state.join("activity.jsonl"))?;
    if !activity.contains("call_card") {
        return Err(format!(
            "the activity log does not have the card allowed: {activity}"
        ));
    }
    println!(
        "files: %APPDATA%\\lembas\\config.yaml, %LOCALAPPDATA%\\lembas\\status.json, activity.jsonl, logs\\{}",
        log.file_name().unwrap_or_default().to_string_lossy()
    );
    Ok(())
}

/// `lembas service install`, `status`, `uninstall`: the Run key's value written, read, removed.
pub fn run_key(wine: &Wine) -> Result<(), String> {
    let reg_query = || {
        let mut command = Command::new(&wine.wine);
        command.args([
            "reg",
            "query",
            r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run",
            "/v",
            "LLeMbas",
        ]);
        output(command, None)
    };
    wine.run_saying(&["service", "install"], "Installed:")?;
    let key = reg_query()?;
    expect(&key, "reg query after install", "lembas.exe\" service run")?;
    let status = wine.run(&["service", "status", "--json"])?;
    let report: serde_json::Value = serde_json::from_slice(&status.stdout)
        .map_err(|e| format!("lembas service status --json: {e}: {}", said(&status)))?;
    let starts = report["starts"].as_str().unwrap_or_default();
    if report["installed"] != true || !starts.ends_with("lembas.exe\" service run") {
        return Err(format!("lembas service status did not read the entry: {report}"));
    }
    if !report["running"]
        .as_str()
        .unwrap_or_default()
        .contains("service run")
    {
        return Err(format!(
            "lembas service status did not see the running device: {report}"
        ));
    }
    println!("service: installed, status reads {starts:?}");
    wine.run_saying(&["service", "uninstall"], "Uninstalled:")?;
    if reg_query()?.status.success() {
        return Err("the Run key's value is still there after uninstall".into());
    }
    let status = wine.run(&["service", "status"])?;
    expect(&status, "lembas service status after uninstall", "Not installed")?;
    println!("service: uninstalled, the entry is gone");
    Ok(())
}
