//! Token hygiene: a whole session with a distinctive token — login, link, turns with bash and the
//! file tools, an approval, a terminal, a monitor — and then the token searched for (as is, in
//! base64 and in hex) in the argv and environment of every process the device started (sampled
//! while they run), every file under the home (config, state, session store, attachments, copies,
//! activity log, the shell's start files), the service's log, the login's output and everything
//! the peer received on the link and in the model's request bodies. Absent everywhere. The
//! service logs at `trace`, the most any person could ask for: the libraries under the link and
//! the model's requests log what they send at that level.

// Processes are read in /proc: Linux only.
#![cfg(target_os = "linux")]

#[path = "../common/mod.rs"]
mod common;
mod scan;

use base64::Engine;
use common::*;
use lembas_peer::{LinkHandle, ModelReply, Peer, PeerConfig};
use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);

/// Sends a prompt and answers every approval it asks (once) until the turn ends.
async fn turn(link: &mut LinkHandle, session: &str, text: &str, turn_id: &str) -> Value {
    let id = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }],
                    "_meta": { "lembas": { "turnId": turn_id } } }),
        )
        .await
        .unwrap();
    let end = Instant::now() + WAIT;
    while Instant::now() < end {
        if let Ok(card) = link
            .recv_request("session/request_permission", Duration::from_millis(200))
            .await
        {
            link.answer(
                card["id"].clone(),
                json!({ "outcome": { "outcome": "selected", "optionId": "once" } }),
            )
            .await
            .unwrap();
        }
        if let Ok(answer) = link.recv_answer(id, Duration::from_millis(200)).await {
            return answer;
        }
    }
    panic!("turn {turn_id} did not end");
}

fn bash(id: &str, command: &str) -> ModelReply {
    ModelReply::tool_call(id, "bash", json!({ "command": command }))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_is_nowhere_but_the_keychain_and_the_authorization_header() {
    let token = format!("hyg-{:016x}-tok", fastrand_seed());
    let spellings = scan::spellings(&token);
    let peer = Peer::start(PeerConfig::with_token(&token)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    let tmp = home.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(home.path().join(".bashrc"), "PS1='$ '\n").unwrap();

    // Login, the token on standard input.
    let mut login = home
        .command(&["login", "--token-stdin", "--server", &peer.url(), "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    login
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{token}\n").as_bytes())
        .unwrap();
    let login = login.wait_with_output().unwrap();
    assert!(
        login.status.success(),
        "{}",
        String::from_utf8_lossy(&login.stderr)
    );
    let config = std::fs::read_to_string(home.config()).unwrap();
    home.write_config(&format!(
        "{config}link:\n  backoff_first_ms: 100\nremote:\n  enabled: true\n  max_mode: edit\n  terminal: true\n  scheduled: true\n  roots:\n    - {w}\ntrusted:\n  - {w}\n",
        w = work.display()
    ));

    let service = home.service_with_env(&[
        ("SHELL", "/bin/bash"),
        ("RUST_LOG", "trace"),
        ("TMPDIR", tmp.to_str().unwrap()),
    ]);
    let sampler = scan::Sampler::start(service.pid(), spellings.clone());
    let mut link = peer.next_link(WAIT).await.unwrap();
    assert_eq!(
        link.headers.get("authorization").and_then(|h| h.to_str().ok()),
        Some(format!("Bearer {token}").as_str()),
        "the link carries the token where it belongs"
    );
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();

    // A terminal, alive through the turns.
    let opened = link
        .request("_lembas/terminal/open", json!({}), WAIT)
        .await
        .unwrap();
    let terminal = opened["result"]["terminalId"]
        .as_str()
        .unwrap_or_else(|| panic!("no terminal: {opened}"))
        .to_string();
    let keys = base64::engine::general_purpose::STANDARD.encode("env | sort > /dev/null; sleep 1\n");
    link.notify(
        "_lembas/terminal/input",
        json!({ "terminalId": terminal, "data": keys }),
    )
    .await
    .unwrap();

    // An agent session: bash (asked and approved), git, rg, the file tools, a mention.
    let opened = link
        .request(
            "session/new",
            json!({ "cwd": work, "mcpServers": [],
                    "_meta": { "mode": "edit", "lembas_model": lembas_peer::DEFAULT_MODEL } }),
            WAIT,
        )
        .await
        .unwrap();
    let session = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {opened}"))
        .to_string();
    let model = peer.model();
    // git stays alive for a second (its alias runs `sleep`), so the sampler sees it.
    model.push(bash(
        "call_git",
        "git init -q . && git status --short && git -c alias.pause='!sleep 1' pause",
    ));
    // rg reads its input until sleep ends, so the sampler sees it too.
    model.push(bash("call_env", "env > /dev/null; sleep 0.7 | rg -c x; echo ok"));
    model.push(ModelReply::tool_call(
        "call_write",
        "write",
        json!({ "path": "notes.md", "content": "one\ntwo\n" }),
    ));
    model.push(ModelReply::tool_call(
        "call_edit",
        "edit",
        json!({ "path": "notes.md", "old_string": "two", "new_string": "2" }),
    ));
    model.push(ModelReply::tool_call(
        "call_grep",
        "grep",
        json!({ "pattern": "one" }),
    ));
    model.push(bash(
        "call_sleep",
        "sleep 1 & wait; git log --oneline 2>/dev/null | head -1",
    ));
    model.push(ModelReply::text("Done."));
    let answer = turn(&mut link, &session, "set it up, see @notes.md", "t1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    model.push(ModelReply::text("Again."));
    let answer = turn(&mut link, &session, "and once more", "t2").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    // A monitor's watch command.
    let watched = link
        .request(
            "_lembas/monitor",
            json!({ "cwd": work, "command": "sleep 0.5; date; git status --short", "mode": "edit" }),
            WAIT,
        )
        .await
        .unwrap();
    assert!(watched["result"]["hash"].is_string(), "{watched}");
    link.notify("_lembas/terminal/close", json!({ "terminalId": terminal }))
        .await
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let sampled = sampler.finish();

    // The processes: the service and what it started, all sampled, none holding the token.
    let programs: Vec<&str> = sampled.processes.iter().map(|(_, p)| p.as_str()).collect();
    eprintln!(
        "{} rounds sampled {} processes: {programs:?}",
        sampled.rounds,
        programs.len()
    );
    assert!(sampled.leaks.is_empty(), "{:#?}", sampled.leaks);
    let mut expected = vec!["lembas", "bash", "git", "sleep"];
    if std::process::Command::new("rg").arg("--version").output().is_ok() {
        expected.push("rg");
    }
    for expected in expected {
        assert!(
            programs.contains(&expected),
            "{expected} was never sampled: {programs:?}"
        );
    }

    // Files: config, state (sessions, turns, copies, attachments, activity log), the shell's
    // start files in TMPDIR, the service's log.
    let files = files_under(&home.path());
    assert!(files.iter().any(|f| f == &service.log), "{files:?}");
    let day_log = files
        .iter()
        .find(|f| f.parent().is_some_and(|d| d.ends_with("logs")))
        .unwrap_or_else(|| panic!("no log file in the state folder: {files:?}"));
    let day_log = std::fs::read_to_string(day_log).unwrap_or_default();
    assert!(day_log.contains("TRACE"), "the log is at trace: {day_log:.2000}");
    // The libraries that log what they send are held at info, so the redaction under the log
    // (its second wall) had nothing to do.
    assert!(
        !day_log.contains("[redacted]"),
        "a credential reached the log's writer"
    );
    assert!(files.len() > 5, "{files:?}");
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_default();
        if let Some(spelling) = scan::leak(&bytes, &spellings) {
            panic!("{spelling:?} is in {}", file.display());
        }
    }
    // Captured output: the login's, and everything the peer got on the link and from the model.
    for (what, bytes) in [
        ("the login's output", [login.stdout, login.stderr].concat()),
        ("the link", serde_json::to_vec(&link.received()).unwrap()),
        (
            "the model's requests",
            serde_json::to_vec(&model.requests()).unwrap(),
        ),
    ] {
        assert!(scan::leak(&bytes, &spellings).is_none(), "the token is in {what}");
    }
}

/// A distinct number per run, so the token is one no other test uses.
fn fastrand_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7)
        ^ u64::from(std::process::id())
}
