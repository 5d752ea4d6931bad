//! `lembas serve --stdio` end to end: the real binary, its stdin and stdout driven line by line
//! (this file, and chats.rs for an editor's chats kept across restarts), and by the official ACP SDK
//! as the editor (sdk.rs), against the reference peer and its scripted model. Every session/update and session/request_permission is checked against the
//! official ACP schema.

mod acp_v1;
mod chats;
#[path = "../common/mod.rs"]
mod common;
mod editors;
mod mcp_servers;
mod sdk;

use common::*;
use lembas_peer::{ModelReply, Part, Peer, PeerConfig};
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);
const MODEL: &str = lembas_peer::DEFAULT_MODEL;

/// A logged-in home whose config has no remote block at all: an editor needs none.
async fn logged_in() -> (Peer, Home) {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    home.config_for(&peer.url(), "");
    (peer, home)
}

/// `lembas serve --stdio` with its stdout read line by line on a thread.
struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Every message read so far, in order.
    seen: Vec<Value>,
    log: std::path::PathBuf,
    next_id: u64,
}

impl Editor {
    fn start(home: &Home) -> Editor {
        static STARTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let log = home.path().join(format!("stdio-{n}.log"));
        let mut child = home
            .command(&["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Editor {
            stdin: child.stdin.take(),
            child,
            lines,
            seen: Vec::new(),
            log,
            next_id: 1,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.write_raw(&line);
    }

    /// Sends a request; its id.
    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// The next message matching `want`, every line before it kept in `seen`. Every line on stdout
    /// must be one JSON-RPC message.
    fn recv_until(&mut self, within: Duration, want: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "nothing wanted on stdout; seen {:?}\nstderr:\n{}",
                    self.seen,
                    self.log()
                )
            });
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a line that is not JSON ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            self.seen.push(message.clone());
            if want(&message) {
                return message;
            }
        }
    }

    /// The answer to request `id` (a permission asked meanwhile is allowed once).
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let message = self.recv_until(WAIT, |m| {
                m["id"] == json!(id) && m.get("method").is_none()
                    || m["method"] == "session/request_permission"
            });
            if message["method"] == "session/request_permission" {
                validate_acp("RequestPermissionRequest", &message["params"])
                    .unwrap_or_else(|e| panic!("the permission request does not validate: {e}"));
                self.send(json!({ "jsonrpc": "2.0", "id": message["id"],
                                  "result": { "outcome": { "outcome": "selected", "optionId": "once" } } }));
                continue;
            }
            return message;
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.answer(id)
    }

    fn initialize(&mut self, lembas: bool) -> Value {
        let capabilities = if lembas {
            json!({ "_meta": { "lembas": { "protocol": 3 } } })
        } else {
            json!({ "fs": { "readTextFile": false, "writeTextFile": false } })
        };
        self.request(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": capabilities }),
        )
    }

    /// Closes stdin (the editor went away); the exit status.
    fn end_input(&mut self, within: Duration) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let end = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < end,
                "still running after its input ended:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What stdout still carried after the end of input.
    fn drain(&mut self) {
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(500)) {
            self.seen.push(serde_json::from_str(&line).unwrap());
        }
    }

    /// Every session/update seen, checked against the ACP schema.
    fn updates(&self) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| {
                validate_acp("SessionNotification", &m["params"])
                    .unwrap_or_else(|e| panic!("session/update does not validate: {e}\n{m}"));
                m["params"]["update"].clone()
            })
            .collect()
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The example server's binary, beside this test's (built by `cargo test --workspace`; built here
/// when a narrower run left it out).
pub fn example_server() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let built = exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("example-mcp-server");
    if !built.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "lembas-peer", "--bin", "example-mcp-server"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    built
}

fn error_of(answer: &Value) -> (i64, String) {
    (
        answer["error"]["code"].as_i64().unwrap_or(0),
        answer["error"]["message"].as_str().unwrap_or("").to_string(),
    )
}

fn new_session(editor: &mut Editor, cwd: &std::path::Path, meta: Value) -> Value {
    editor.request(
        "session/new",
        json!({ "cwd": cwd, "mcpServers": [], "_meta": meta }),
    )
}

/// A plain editor (no `_meta.lembas`) with a session open in `<home>/work` in `mode`.
async fn plain_editor_session(mode: &str) -> (Peer, Home, Editor, String) {
    let (peer, home) = logged_in().await;
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    let opened = new_session(&mut editor, &home.path().join("work"), json!({ "mode": mode }));
    let session = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{opened}"))
        .to_string();
    (peer, home, editor, session)
}

fn prompt_params(session: &str, text: &str) -> Value {
    json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_line_gets_a_parse_error_and_serving_goes_on() {
    let (_peer, home) = logged_in().await;
    let mut editor = Editor::start(&home);
    editor.write_raw(b"this is not json\n");
    let parse = editor.recv_until(WAIT, |m| m.get("error").is_some());
    assert_eq!(parse["id"], Value::Null, "{parse}");
    assert_eq!(error_of(&parse).0, -32700, "{parse}");
    editor.write_raw(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initi\xffalize\"}\n");
    let not_utf8 = editor.recv_until(WAIT, |m| m.get("error").is_some());
    assert_eq!(error_of(&not_utf8).0, -32700, "{not_utf8}");
    // A blank line is nothing; the next message is served.
    editor.write_raw(b"\n");
    let init = editor.initialize(false);
    let result = &init["result"];
    validate_acp("InitializeResponse", result).unwrap();
    assert_eq!(result["protocolVersion"], 1, "{init}");
    assert_eq!(result["agentInfo"]["name"], "LLeMbas CLI");
    assert_eq!(
        result["_meta"]["lembas"]["limits"],
        Value::Null,
        "limits is null on serve --stdio"
    );
    assert_eq!(result["_meta"]["lembas"]["connection"], "example");
    let status = editor.end_input(WAIT);
    assert_eq!(status.code(), Some(0), "{}", editor.log());
}

#[tokio::test(flavor = "multi_thread")]
async fn link_only_methods_are_errors_and_the_service_may_run_beside_it() {
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    home.config_for(
        &peer.url(),
        &format!(
            "remote:\n  enabled: true\n  roots:\n    - {w}\ntrusted:\n  - {w}\n",
            w = work.display()
        ),
    );
    // The service holds the device lock and the link; serve --stdio takes neither.
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let mut editor = Editor::start(&home);
    // Even a client that says it is LLeMbas: these are the link's alone.
    let init = editor.initialize(true);
    let caps = init["result"]["_meta"]["lembas"]["capabilities"].clone();
    assert!(
        !caps.as_array().unwrap().contains(&json!("directories")),
        "{caps}"
    );
    for method in ["_lembas/directories", "_lembas/terminal/open", "_lembas/monitor"] {
        let answer = editor.request(method, json!({}));
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32601, "{method}: {answer}");
        assert!(message.contains("serve --stdio"), "{message}");
    }
    assert!(
        peer.next_link(Duration::from_millis(500)).await.is_err(),
        "serve --stdio dialled the instance's link"
    );
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_editor_gets_plain_acp_on_the_instance_s_default_model() {
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    // No model named: the instance's default_model. The folder is in no root and not trusted.
    let opened = new_session(&mut editor, &work, json!({ "mode": "manual" }));
    let session = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{opened}"))
        .to_string();
    assert_eq!(opened["result"]["_meta"]["lembas"]["model"], MODEL, "{opened}");
    assert_eq!(opened["result"]["modes"]["currentModeId"], "manual");
    peer.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "from-editor.txt", "content": "written" }),
    ));
    peer.model().push(ModelReply::text("Wrote it."));
    let id = editor.send_request("session/prompt", prompt_params(&session, "write a file"));
    let answer = editor.answer(id);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(work.join("from-editor.txt")).unwrap(),
        "written"
    );
    let asked: Vec<&Value> = editor
        .seen
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .collect();
    assert_eq!(asked.len(), 1, "manual mode asks before writing");
    let updates = editor.updates();
    assert!(
        updates.iter().any(|u| u["sessionUpdate"] == "tool_call"),
        "{updates:?}"
    );
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed"),
        "{updates:?}"
    );
    let lembas: Vec<&Value> = editor
        .seen
        .iter()
        .filter(|m| m["method"].as_str().is_some_and(|m| m.starts_with("_lembas/")))
        .collect();
    assert!(
        lembas.is_empty(),
        "a client that did not say _meta.lembas got {lembas:?}"
    );
    let requests = peer.model().requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["model"], MODEL);
    assert_eq!(editor.end_input(WAIT).code(), Some(0));

    // The same engine to a client that said _meta.lembas: its events do come.
    let mut lembas_client = Editor::start(&home);
    lembas_client.initialize(true);
    let opened = new_session(&mut lembas_client, &work, json!({ "model": MODEL }));
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    peer.model().push(ModelReply::text("hi"));
    lembas_client.request("session/prompt", prompt_params(&session, "hello"));
    assert!(lembas_client.seen.iter().any(|m| m["method"] == "_lembas/event"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_the_login_does_not_serve_is_invalid_params() {
    let (_peer, home) = logged_in().await;
    let work = home.path().join("work");
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    for model in ["example/nope", "example/embed"] {
        let answer = new_session(&mut editor, &work, json!({ "model": model }));
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32602, "{answer}");
        assert!(message.contains(model), "{message}");
    }
    let missing = new_session(&mut editor, &home.path().join("nowhere"), json!({}));
    assert_eq!(error_of(&missing).0, -32602, "{missing}");
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_input_cancels_the_running_turn_and_exits_0() {
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    let opened = new_session(&mut editor, &work, json!({}));
    let session = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{opened}"))
        .to_string();
    peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("working on it".into()),
            Part::Hang,
            Part::Text(" never".into()),
        ],
        finish_reason: "stop".into(),
    });
    let id = editor.send_request("session/prompt", prompt_params(&session, "a long task"));
    editor.recv_until(WAIT, |m| {
        m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    });
    // The model's stream hangs for good: only the cancel ends the turn, within the wait.
    let status = editor.end_input(WAIT);
    assert_eq!(status.code(), Some(0), "{}", editor.log());
    editor.drain();
    let answer = editor
        .seen
        .iter()
        .find(|m| m["id"] == json!(id) && m.get("method").is_none())
        .cloned()
        .unwrap_or_else(|| panic!("the prompt got no answer: {:?}", editor.seen));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // The session's records are on disk: the prompt is in its file.
    let stored = files_under(&home.state())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(&session))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect::<String>();
    assert!(
        stored.contains("a long task"),
        "nothing of the session on disk: {stored}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_input_while_a_permission_waits_cancels_the_turn_and_runs_nothing() {
    let (peer, home, mut editor, session) = plain_editor_session("manual").await;
    let work = home.path().join("work");
    peer.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "never.txt", "content": "no" }),
    ));
    let id = editor.send_request("session/prompt", prompt_params(&session, "write it"));
    // The editor shows the card, and goes away before anyone answers it.
    editor.recv_until(WAIT, |m| m["method"] == "session/request_permission");
    let status = editor.end_input(WAIT);
    assert_eq!(status.code(), Some(0), "{}", editor.log());
    editor.drain();
    let answer = editor
        .seen
        .iter()
        .find(|m| m["id"] == json!(id) && m.get("method").is_none())
        .cloned()
        .unwrap_or_else(|| panic!("the prompt got no answer: {:?}", editor.seen));
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(
        !work.join("never.txt").exists(),
        "a write nobody allowed was done"
    );
    assert_eq!(
        peer.model().requests().len(),
        1,
        "the turn went on after the end of input"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_permission_is_cancelled_with_acp_s_own_notification_and_denied() {
    let (peer, home) = logged_in().await;
    home.config_for(&peer.url(), "remote:\n  approval_timeout: 1\n");
    let work = home.path().join("work");
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    let opened = new_session(&mut editor, &work, json!({ "mode": "manual" }));
    let session = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{opened}"))
        .to_string();
    peer.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "late.txt", "content": "no" }),
    ));
    peer.model().push(ModelReply::text("Nobody answered."));
    let id = editor.send_request("session/prompt", prompt_params(&session, "write it"));
    let asked = editor.recv_until(WAIT, |m| m["method"] == "session/request_permission");
    // Nobody answers: after remote.approval_timeout the card is taken down, the ACP way.
    let cancelled = editor.recv_until(WAIT, |m| m["method"] == "$/cancel_request");
    validate_acp("CancelRequestNotification", &cancelled["params"]).unwrap();
    assert_eq!(cancelled["params"]["requestId"], asked["id"], "{cancelled}");
    let answer = editor.answer(id);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(!work.join("late.txt").exists());
    let second = &peer.model().requests()[1];
    let denial = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned();
    assert!(
        denial.is_some_and(|m| m["content"]
            .as_str()
            .unwrap_or("")
            .contains("Nobody answered within 1 seconds")),
        "{second}"
    );
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
}
