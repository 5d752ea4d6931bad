//! The example MCP server (`src/bin/example-mcp-server.rs`) behaves as the device's tests rely on:
//! its tools answer through the official client, `exit` ends the call instead of hanging it, and
//! each start flag does what it says.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

const SERVER: &str = env!("CARGO_BIN_EXE_example-mcp-server");
/// Long enough for any answer on a loaded CI machine; a hang shows as this running out.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);
const GARBAGE_LINE: &str = "this is not json-rpc{";

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(arguments: &[&str]) -> Client {
    let mut command = Command::new(SERVER);
    command.args(arguments);
    let transport = TokioChildProcess::new(command).expect("the example server starts");
    tokio::time::timeout(ANSWER_WITHIN, ClientConfig::default().serve(transport))
        .await
        .expect("initialize answered in time")
        .expect("initialize succeeded")
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(name).with_arguments(arguments)
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

async fn answer(client: &Client, params: CallToolRequestParams) -> CallToolResult {
    tokio::time::timeout(ANSWER_WITHIN, client.call_tool(params))
        .await
        .expect("answered in time")
        .expect("the call succeeded")
}

#[tokio::test]
async fn its_tools_answer_through_the_official_client() {
    let client = connect(&[]).await;
    let info = client.peer_info().expect("the server introduced itself");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("example")
    );
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert_eq!(names, ["echo", "add", "sleep", "exit", "garbage"]);

    let echoed = answer(&client, call("echo", json!({ "text": "héllo\nworld" }))).await;
    assert_eq!(
        (text_of(&echoed), echoed.is_error),
        ("héllo\nworld".to_string(), Some(false))
    );
    let sum = answer(&client, call("add", json!({ "a": 2, "b": 0.5 }))).await;
    assert_eq!(text_of(&sum), "2.5");
    let slept = answer(&client, call("sleep", json!({ "seconds": 0.05 }))).await;
    assert_eq!(text_of(&slept), "slept");
    let refused = answer(&client, call("add", json!({ "a": "two" }))).await;
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    let _ = client.cancel().await;
}

#[tokio::test]
async fn exit_fails_the_call_instead_of_hanging_it() {
    let client = connect(&[]).await;
    let outcome = tokio::time::timeout(ANSWER_WITHIN, client.call_tool(call("exit", json!({})))).await;
    match outcome {
        Ok(Err(_)) => {}
        Ok(Ok(result)) => panic!("exit answered: {result:?}"),
        Err(_) => panic!("the call hung after the server exited"),
    }
}

fn spawn_raw(arguments: &[&str]) -> Child {
    Command::new(SERVER)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the example server starts")
}

const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#
);

/// The lines the server writes on its standard output, as they come.
async fn next_line(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Option<String> {
    tokio::time::timeout(ANSWER_WITHIN, lines.next_line())
        .await
        .expect("a line in time")
        .expect("standard output readable")
}

#[tokio::test]
async fn garbage_first_writes_its_line_then_serves() {
    let mut server = spawn_raw(&["--garbage-first"]);
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    stdin
        .write_all(format!("{INITIALIZE}\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(next_line(&mut lines).await.as_deref(), Some(GARBAGE_LINE));
    let answer: Value = serde_json::from_str(&next_line(&mut lines).await.unwrap()).unwrap();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["serverInfo"]["name"], "example");

    // The garbage tool: its line, then the answer.
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let garbage =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"garbage","arguments":{}}}"#;
    stdin
        .write_all(format!("{initialized}\n{garbage}\n").as_bytes())
        .await
        .unwrap();
    assert_eq!(next_line(&mut lines).await.as_deref(), Some(GARBAGE_LINE));
    let answer: Value = serde_json::from_str(&next_line(&mut lines).await.unwrap()).unwrap();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["isError"], false);

    // Standard input closed: it exits, cleanly.
    drop(stdin);
    let status = tokio::time::timeout(ANSWER_WITHIN, server.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn exit_at_start_says_so_and_exits_2() {
    let server = spawn_raw(&["--exit-at-start"]);
    let output = tokio::time::timeout(ANSWER_WITHIN, server.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(!output.stderr.is_empty());
}

#[tokio::test]
async fn hang_at_start_never_answers_even_after_stdin_closes() {
    let mut server = spawn_raw(&["--hang-at-start"]);
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = server.stdout.take().unwrap();
    stdin
        .write_all(format!("{INITIALIZE}\n").as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let mut first = [0u8; 1];
    let read = tokio::time::timeout(
        Duration::from_millis(300),
        tokio::io::AsyncReadExt::read(&mut stdout, &mut first),
    )
    .await;
    assert!(read.is_err(), "it answered: {read:?}");
    assert!(server.try_wait().unwrap().is_none(), "it exited");
    server.kill().await.unwrap();
}

#[tokio::test]
async fn closing_stdin_before_initialize_exits_cleanly_and_help_and_bad_flags_are_answered() {
    let mut server = spawn_raw(&[]);
    drop(server.stdin.take());
    let status = tokio::time::timeout(ANSWER_WITHIN, server.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");

    let help = spawn_raw(&["--help"]).wait_with_output().await.unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--hang-at-start"));
    let bad = spawn_raw(&["--nope"]).wait_with_output().await.unwrap();
    assert_eq!(bad.status.code(), Some(64));
}

/// What the device meets: rmcp's client skips a line that is not JSON-RPC, before `initialize` and
/// between answers, and the session goes on (an rmcp upgrade changing that fails here).
#[tokio::test]
async fn the_official_client_skips_the_garbage_lines() {
    let client = connect(&["--garbage-first"]).await;
    let garbage = answer(&client, call("garbage", json!({}))).await;
    assert_eq!(garbage.is_error, Some(false));
    let echoed = answer(&client, call("echo", json!({ "text": "after" }))).await;
    assert_eq!(text_of(&echoed), "after");
    let _ = client.cancel().await;
}
