//! The activity log end to end: the real `lembas service run` against the reference peer writes
//! every remote action of a turn to `activity.jsonl`, and `lembas activity` reads it back, with
//! or without the service running. Run inside `scripts/with-keyring` (it needs a keychain).

mod common;

use common::*;
use lembas_peer::{ModelReply, Peer, PeerConfig};
use serde_json::{Value, json};
use std::process::Output;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);
/// What the model writes: it must never reach the log.
const CONTENT: &str = "activity-content-8d41f0 never logged";

/// A device running as `lembas service run` in a home of its own, with remote work on in
/// `<home>/work` (edit at most, trusted), linked and initialized.
struct Linked {
    peer: Peer,
    home: Home,
    work: std::path::PathBuf,
    service: Service,
    link: lembas_peer::LinkHandle,
}

async fn linked() -> Linked {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    home.config_for(
        &peer.url(),
        &format!(
            "remote:\n  enabled: true\n  max_mode: edit\n  roots:\n    - {w}\ntrusted:\n  - {w}\n",
            w = work.display()
        ),
    );
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    Linked {
        peer,
        home,
        work,
        service,
        link,
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

fn log_lines(home: &Home) -> Vec<Value> {
    std::fs::read_to_string(home.state().join("activity.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `kind` with what tells lines of that kind apart, for comparing a log's order.
fn label(line: &Value) -> String {
    let detail = match line["kind"].as_str().unwrap_or("") {
        "link" => line["link"]["state"].clone(),
        "turn" => line["state"].clone(),
        "approval_settled" => line["outcome"].clone(),
        "tool_call" => json!([line["decision"], line["answered_by"], line["outcome"]]),
        _ => Value::Null,
    };
    match detail {
        Value::Null => line["kind"].as_str().unwrap_or("").to_string(),
        Value::String(s) => format!("{} {s}", line["kind"].as_str().unwrap_or("")),
        other => format!("{} {other}", line["kind"].as_str().unwrap_or("")),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_with_an_approved_tool_call_is_logged_in_order_and_read_back() {
    let Linked {
        peer,
        home,
        work,
        mut service,
        mut link,
    } = linked().await;

    let session = link.new_session(&work, "manual", WAIT).await.unwrap();
    // Manual mode asks before a write.
    peer.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "notes.txt", "content": CONTENT }),
    ));
    peer.model().push(ModelReply::text("Written."));
    let id = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "write the notes" }],
                    "_meta": { "lembas": { "turnId": "turn-1" } } }),
        )
        .await
        .unwrap();
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    link.answer(
        card["id"].clone(),
        json!({ "outcome": { "outcome": "selected", "optionId": "once" } }),
    )
    .await
    .unwrap();
    let answer = link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(std::fs::read_to_string(work.join("notes.txt")).unwrap(), CONTENT);

    // The writer runs beside the turn: the turn's end reaches the file a moment later.
    assert!(
        eventually(WAIT, || log_lines(&home)
            .iter()
            .any(|l| l["kind"] == "turn" && l["state"] == "end")),
        "{:?}\n{}",
        log_lines(&home),
        service.log()
    );
    let lines = log_lines(&home);
    let order: Vec<String> = lines.iter().map(label).filter(|l| l != "limits_sent").collect();
    assert_eq!(
        order,
        [
            "link linked",
            "session_opened",
            "turn start",
            "approval_asked",
            "approval_settled allowed once",
            r#"tool_call ["ask","client","completed"]"#,
            "turn end",
        ],
        "{lines:?}"
    );
    let call = lines.iter().find(|l| l["kind"] == "tool_call").unwrap();
    assert_eq!(call["session_id"], session.as_str());
    assert_eq!(call["tool_call_id"], "call_w");
    assert_eq!(call["tool"], "write");
    assert!(call["at_ms"].as_u64().unwrap() > 0);
    let opened = lines.iter().find(|l| l["kind"] == "session_opened").unwrap();
    assert_eq!(opened["cwd"], work.to_str().unwrap());
    let ended = lines.iter().find(|l| label(l) == "turn end").unwrap();
    assert_eq!(ended["turn_id"], "turn-1");
    assert_eq!(ended["stop_reason"], "end_turn");

    // The newest three, newest first, while the service runs.
    let out = ok(home.run(&["activity", "--json", "-n", "3"]));
    let newest: Value = serde_json::from_slice(&out.stdout).unwrap();
    let want: Vec<Value> = lines.iter().rev().take(3).cloned().collect();
    assert_eq!(newest, Value::Array(want));
    let out = ok(home.run(&["activity", "-n", "2"]));
    let printed: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(printed.len(), 2, "{printed:?}");
    assert!(
        printed[0].ends_with(&format!("turn Turn turn-1 of {session} ended (end_turn)")),
        "{printed:?}"
    );
    assert!(
        printed[1].contains(" tool_call write call_w (")
            && printed[1].contains("ask, answered by client, completed"),
        "{printed:?}"
    );
    assert!(printed.iter().all(|l| is_clock(&l[..8])), "{printed:?}");

    // The link's end is the last line once the service stopped, and the log still reads.
    service.signal(libc::SIGTERM);
    assert!(
        service.wait_exit(WAIT).is_some_and(|s| s.success()),
        "{}",
        service.log()
    );
    assert_eq!(label(log_lines(&home).last().unwrap()), "link stopped");
    let out = ok(home.run(&["activity", "--json", "-n", "1"]));
    assert_eq!(
        label(&serde_json::from_slice::<Value>(&out.stdout).unwrap()[0]),
        "link stopped"
    );

    let all = std::fs::read_to_string(home.state().join("activity.jsonl")).unwrap();
    assert!(!all.contains(TOKEN), "the token is in the log");
    assert!(
        !all.contains("activity-content-8d41f0"),
        "the file's content is in the log"
    );
}

/// Sends a prompt and answers its cards in order with `answers` (`None`: allowed once as asked,
/// `Some(line)`: allowed once with the person's corrected line), then waits for its end.
async fn turn_answering(
    link: &mut lembas_peer::LinkHandle,
    session: &str,
    text: &str,
    answers: &[Option<&str>],
) -> Value {
    let id = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }],
                    "_meta": { "lembas": { "turnId": "turn-1" } } }),
        )
        .await
        .unwrap();
    for corrected in answers {
        let card = link
            .recv_request("session/request_permission", WAIT)
            .await
            .unwrap();
        let mut answer = json!({ "outcome": { "outcome": "selected", "optionId": "once" } });
        if let Some(line) = corrected {
            answer["_meta"] = json!({ "lembas": { "command": line } });
        }
        link.answer(card["id"].clone(), answer).await.unwrap();
    }
    link.recv_answer(id, WAIT).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_names_the_command_that_ran_and_each_file_changed() {
    let Linked {
        peer,
        home,
        work,
        service: _service,
        mut link,
    } = linked().await;
    let session = link.new_session(&work, "manual", WAIT).await.unwrap();

    // The model describes one thing and asks for a line; the person sends another line with the
    // answer, which is what runs.
    peer.model().push(ModelReply::tool_call(
        "call_fix",
        "bash",
        json!({ "command": "echo model-line > out.txt", "description": "Harmless tidy-up" }),
    ));
    peer.model().push(ModelReply::tool_call(
        "call_ls",
        "bash",
        json!({ "command": "ls -a", "description": "Look around" }),
    ));
    peer.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "notes.txt", "content": CONTENT }),
    ));
    peer.model().push(ModelReply::tool_call(
        "call_e",
        "edit",
        json!({ "path": "notes.txt", "old_string": "never", "new_string": "not" }),
    ));
    peer.model().push(ModelReply::text("Done."));
    let corrected = "echo person-line > out.txt";
    let answer = turn_answering(&mut link, &session, "tidy up", &[Some(corrected), None, None]).await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "person-line\n"
    );

    let logged = |id: &str| {
        log_lines(&home)
            .into_iter()
            .find(|l| l["kind"] == "tool_call" && l["tool_call_id"] == id)
    };
    assert!(
        eventually(WAIT, || logged("call_e").is_some()),
        "{:?}",
        log_lines(&home)
    );
    let fixed = logged("call_fix").unwrap();
    assert_eq!(fixed["command"], corrected, "{fixed}");
    assert_eq!(fixed["title"], "Harmless tidy-up", "{fixed}");
    let looked = logged("call_ls").unwrap();
    assert_eq!(looked["command"], "ls -a", "{looked}");
    let notes = work.join("notes.txt");
    for id in ["call_w", "call_e"] {
        let line = logged(id).unwrap();
        assert_eq!(line["changed_files"], json!([notes]), "{line}");
        assert!(line.get("command").is_none(), "{line}");
    }
    assert!(looked.get("changed_files").is_none(), "{looked}");
    let all = std::fs::read_to_string(home.state().join("activity.jsonl")).unwrap();
    assert!(
        !all.contains("model-line"),
        "the line that did not run is in the log: {all}"
    );

    // `lembas activity` says the same.
    let out = ok(home.run(&["activity", "-n", "20"]));
    let printed = text(&out.stdout);
    assert!(printed.contains(&format!("ran `{corrected}`")), "{printed}");
    assert!(
        printed.contains(&format!("changed {}", notes.display())),
        "{printed}"
    );
}

fn is_clock(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 8 && b[2] == b':' && b[5] == b':' && [0, 1, 3, 4, 6, 7].iter().all(|&i| b[i].is_ascii_digit())
}

#[test]
fn activity_reads_the_old_file_too_and_counts_what_it_cannot_read() {
    let home = Home::new();
    std::fs::create_dir_all(home.state()).unwrap();
    let out = ok(home.run(&["activity"]));
    assert_eq!(text(&out.stdout).trim(), "No activity on this computer yet.");
    assert_eq!(
        serde_json::from_slice::<Value>(&ok(home.run(&["activity", "--json"])).stdout).unwrap(),
        json!([])
    );

    let line =
        |at: u64, sid: &str| format!(r#"{{"at_ms":{at},"kind":"session_deleted","session_id":"{sid}"}}"#);
    // 1_700_000_000 s is 22:13:20 UTC.
    let old = [line(1_700_000_000_000, "ses_1"), line(1_700_000_001_000, "ses_2")].join("\n");
    std::fs::write(home.state().join("activity.jsonl.1"), old + "\n").unwrap();
    let current = [line(1_700_000_002_000, "ses_3"), "{cut sh".to_string()].join("\n");
    std::fs::write(home.state().join("activity.jsonl"), current + "\n").unwrap();

    let out = ok(home.run(&["activity", "-n", "3"]));
    assert_eq!(
        text(&out.stdout),
        "22:13:22 session_deleted Session ses_3 deleted\n\
         22:13:21 session_deleted Session ses_2 deleted\n\
         22:13:20 session_deleted Session ses_1 deleted\n\
         1 line of the log could not be read and was skipped.\n"
    );
    let out = ok(home.run(&["activity", "--json", "-n", "2"]));
    let ids: Vec<Value> = serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["session_id"].clone())
        .collect();
    assert_eq!(ids, [json!("ses_3"), json!("ses_2")]);
    assert!(text(&out.stderr).contains("1 line of the log could not be read"));
    // -n takes a count of one or more.
    assert!(!home.run(&["activity", "-n", "0"]).status.success());
}
