//! The `lembas-peer` demo binary as a real process.

mod fake_device;

use std::process::Stdio;

use fake_device::{WAIT, dial, hello, read_json, refused_status, send_json};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

fn peer_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lembas-peer"));
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

#[tokio::test]
async fn demo_instance_reads_the_token_from_stdin_and_initializes_a_linked_device() {
    let mut child = peer_command().arg("--token-stdin").spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"demo-token\n")
        .await
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = tokio::time::timeout(WAIT, stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let link_url = format!("{}/api/devices/link", url.replacen("http", "ws", 1));

    assert_eq!(
        refused_status(dial(&link_url, Some("other")).await.err().unwrap()),
        401
    );
    let mut device = dial(&link_url, Some("demo-token")).await.unwrap();
    send_json(&mut device, hello(3)).await;
    let initialize = read_json(&mut device).await;
    assert_eq!(initialize["method"], "initialize");
    let result = json!({ "protocolVersion": 1, "agentInfo": { "name": "fake device" } });
    send_json(
        &mut device,
        json!({ "jsonrpc": "2.0", "id": initialize["id"], "result": result }),
    )
    .await;

    // The result is printed, pretty, after the URL.
    let mut printed = String::new();
    while !printed.contains("fake device") {
        let line = tokio::time::timeout(WAIT, stdout.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        printed.push_str(&line);
    }
    // A request the demo cannot serve gets method-not-found rather than silence.
    send_json(
        &mut device,
        json!({ "jsonrpc": "2.0", "id": 7, "method": "_lembas/show", "params": {} }),
    )
    .await;
    let answer = read_json(&mut device).await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(7), json!(-32601))
    );
    child.kill().await.unwrap();
}

#[tokio::test]
async fn without_token_stdin_it_refuses_to_start() {
    let output = peer_command().args(["--port", "0"]).output().await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("--token-stdin is required"), "{stderr}");
}

#[tokio::test]
async fn an_empty_stdin_is_a_clear_error() {
    let mut child = peer_command().arg("--token-stdin").spawn().unwrap();
    drop(child.stdin.take());
    let status = tokio::time::timeout(WAIT, child.wait()).await.unwrap().unwrap();
    assert!(!status.success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    assert!(stderr.contains("standard input held no token"), "{stderr}");
}

#[tokio::test]
async fn a_bad_port_is_a_clear_error() {
    let output = peer_command()
        .args(["--token-stdin", "--port", "seventy"])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("--port seventy: not a port number"), "{stderr}");
}
