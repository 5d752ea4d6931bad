//! The official ACP SDK (`@agentclientprotocol/sdk`, pinned in tests/acp-client/package.json and
//! installed by scripts/setup) as the editor: the scripts of tests/acp-client run with the `lembas`
//! binary. Shared by the stdio tests and the login tests (an editor's authenticate and logout).

use super::Home;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn client_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/acp-client"))
}

/// The SDK as scripts/setup installs it; a clear failure, never a skip, when it is not there.
pub fn installed_sdk() -> PathBuf {
    let dir = client_dir();
    let wanted: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    let wanted = wanted["dependencies"]["@agentclientprotocol/sdk"]
        .as_str()
        .unwrap()
        .to_string();
    let installed = dir.join("node_modules/@agentclientprotocol/sdk/package.json");
    let found = std::fs::read_to_string(&installed)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|p| p["version"].as_str().map(str::to_string));
    match found {
        Some(version) if version == wanted => {}
        Some(version) => panic!(
            "the ACP SDK in {} is {version}, the tests pin {wanted}: run scripts/setup (or npm --prefix tests/acp-client ci)",
            dir.display()
        ),
        None => panic!(
            "the official ACP SDK is not installed in {}: run scripts/setup (or npm --prefix tests/acp-client ci)",
            dir.display()
        ),
    }
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "node is needed to run the ACP SDK: run scripts/setup-desktop (it installs Node)"
    );
    dir
}

/// Runs `script` of tests/acp-client with the `lembas` binary and `args`, in `home`: what it printed
/// (one JSON object) and its standard error.
pub fn run_script(
    dir: &std::path::Path,
    home: &Home,
    script: &str,
    args: &[&std::ffi::OsStr],
) -> (Value, String) {
    run_script_with_env(dir, home, script, args, &[])
}

/// [`run_script`] with `env` set for the script too.
pub fn run_script_with_env(
    dir: &std::path::Path,
    home: &Home,
    script: &str,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &str)],
) -> (Value, String) {
    let output = Command::new("node")
        .arg(dir.join(script))
        .arg(env!("CARGO_BIN_EXE_lembas"))
        .args(args)
        .current_dir(dir)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_STATE_HOME", home.path().join(".local/state"))
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{script} failed:\n{stderr}");
    let seen = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{script} printed no JSON ({e}):\n{stderr}"));
    (seen, stderr)
}
