//! The Windows `lembas.exe` under Wine against the reference peer running natively on loopback
//! (`scripts/test-windows` runs it): login with the keychain (Windows Credential Manager, Wine's),
//! `lembas doctor` printing its checks, `lembas service run` linking (hello, initialize, the sandbox
//! it reports), `lembas status` asking the running device over the control pipe, and
//! `lembas service install|status|uninstall` writing, reading and removing the Run key's value
//! (read back independently with Wine's `reg query`).
//!
//! `wine_check <wine> <lembas.exe>`; the prefix is the environment's `WINEPREFIX`. Exits 1 at the
//! first check that fails, saying which.

use std::io::Write;
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::Duration;

use lembas_peer::{Peer, PeerConfig};

const TOKEN: &str = "wine-check-token";
const WAIT: Duration = Duration::from_secs(60);

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

async fn check() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(wine), Some(exe)) = (args.next(), args.next()) else {
        return Err("usage: wine_check <wine> <lembas.exe>".into());
    };
    let lembas = |args: &[&str]| {
        let mut command = Command::new(&wine);
        command.arg(&exe).args(args);
        command
    };
    let peer = Peer::start(PeerConfig::with_token(TOKEN))
        .await
        .map_err(|e| format!("the reference peer did not start: {e}"))?;

    let version = output(lembas(&["--version"]), None)?;
    expect(&version, "lembas --version", "lembas ")?;

    let login = output(
        lembas(&["login", "--token-stdin", "--server", &peer.url()]),
        Some(&format!("{TOKEN}\n")),
    )?;
    if !login.status.success() {
        return Err(format!("lembas login failed: {}", said(&login)));
    }
    println!("login: stored in the keychain ({})", said(&login).trim());

    // The doctor fails while no device runs (its checks say so): what matters is that it prints them.
    let doctor = output(lembas(&["doctor"]), None)?;
    for check in ["config", "token", "server", "sandbox", "commands"] {
        expect(&doctor, "lembas doctor", check)?;
    }
    expect(&doctor, "lembas doctor", "without a kernel sandbox")?;
    print!("doctor:\n{}", String::from_utf8_lossy(&doctor.stdout));

    let mut service = lembas(&["service", "run"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("lembas service run did not start: {e}"))?;
    let linked = link_and_ask(&peer, &lembas).await;
    // While the device runs, so install starts no second one.
    let installed = linked.and_then(|()| service_entry(&wine, &lembas));
    let _ = service.kill();
    let _ = service.wait();
    installed
}

/// `lembas service install`, `status`, `uninstall`: the Run key's value written, read, removed.
fn service_entry(wine: &str, lembas: &dyn Fn(&[&str]) -> Command) -> Result<(), String> {
    let reg_query = || {
        let mut command = Command::new(wine);
        command.args([
            "reg",
            "query",
            r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run",
            "/v",
            "LLeMbas",
        ]);
        output(command, None)
    };
    let install = output(lembas(&["service", "install"]), None)?;
    if !install.status.success() {
        return Err(format!("lembas service install failed: {}", said(&install)));
    }
    expect(&install, "lembas service install", "Installed:")?;
    let key = reg_query()?;
    expect(&key, "reg query after install", "lembas.exe\" service run")?;
    let status = output(lembas(&["service", "status", "--json"]), None)?;
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
    let uninstall = output(lembas(&["service", "uninstall"]), None)?;
    expect(&uninstall, "lembas service uninstall", "Uninstalled:")?;
    if reg_query()?.status.success() {
        return Err("the Run key's value is still there after uninstall".into());
    }
    let status = output(lembas(&["service", "status"]), None)?;
    expect(&status, "lembas service status after uninstall", "Not installed")?;
    println!("service: uninstalled, the entry is gone");
    Ok(())
}

/// The service's link (hello, initialize) and `lembas status` over the control pipe.
async fn link_and_ask(peer: &Peer, lembas: &dyn Fn(&[&str]) -> Command) -> Result<(), String> {
    let mut link = peer
        .next_link(WAIT)
        .await
        .map_err(|e| format!("the service did not link: {e}"))?;
    link.hello(WAIT).await.map_err(|e| format!("no hello: {e}"))?;
    let initialized = link
        .initialize(WAIT)
        .await
        .map_err(|e| format!("initialize was not answered: {e}"))?;
    let sandbox = initialized
        .pointer("/_meta/lembas/sandbox")
        .and_then(|s| s.as_str())
        .unwrap_or_default()
        .to_string();
    if !sandbox.starts_with("none") {
        return Err(format!("initialize said the sandbox is {sandbox:?}, not none"));
    }
    println!("link: hello and initialize; sandbox {sandbox:?}");
    // The device serves its control pipe once it runs; asked until it answers.
    let started = std::time::Instant::now();
    loop {
        let status = output(lembas(&["status"]), None)?;
        let text = String::from_utf8_lossy(&status.stdout).into_owned();
        if text.contains("Linked to") {
            print!("status over the control pipe:\n{text}");
            return Ok(());
        }
        if started.elapsed() > WAIT {
            return Err(format!(
                "lembas status never said it is linked: {}",
                said(&status)
            ));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn output(mut command: Command, stdin: Option<&str>) -> Result<Output, String> {
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

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn expect(out: &Output, what: &str, needle: &str) -> Result<(), String> {
    if said(out).contains(needle) {
        Ok(())
    } else {
        Err(format!("{what} did not say {needle:?}: {}", said(out)))
    }
}
