//! An editor's MCP servers on `lembas serve --stdio`: the example stdio server (the reference
//! peer's `example-mcp-server`, an `rmcp` server) started with the session, its tools offered as
//! `<server>__<tool>`, each call judged like a write (asked in manual, denied in plan), the
//! server stopped with the session; servers that do not start, exit mid-call or hang are said to
//! the editor and the model, the session intact.

use super::*;

/// A stdio server entry, tagged in its environment so the test can find its process.
fn server(name: &str, args: &[&str], tag: &str) -> Value {
    json!({
        "name": name, "command": example_server(), "args": args,
        "env": [{ "name": "LEMBAS_TEST_TAG", "value": tag }],
    })
}

/// The processes whose environment carries `LEMBAS_TEST_TAG=<tag>`.
fn tagged(tag: &str) -> Vec<u32> {
    let needle = format!("LEMBAS_TEST_TAG={tag}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

fn tag() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("t{}-{n}", std::process::id())
}

fn opened_with(editor: &mut Editor, work: &std::path::Path, mode: &str, servers: Value) -> (String, Value) {
    let opened = editor.request(
        "session/new",
        json!({ "cwd": work, "mcpServers": servers, "_meta": { "mode": mode } }),
    );
    let session = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{opened}"))
        .to_string();
    (session, opened["result"]["_meta"]["lembas"]["mcpServers"].clone())
}

/// What the model read back for `call_id`.
fn tool_text(peer: &Peer, call_id: &str) -> String {
    read_by_model(&peer.model(), call_id)
}

/// Sends a prompt, answering each card with the next of `answers`; the prompt's answer and how
/// many cards came.
fn prompt_answering(editor: &mut Editor, session: &str, text: &str, answers: &[&str]) -> (Value, usize) {
    let id = editor.send_request("session/prompt", prompt_params(session, text));
    let mut cards = 0;
    loop {
        let message = editor.recv_until(WAIT, |m| {
            m["id"] == json!(id) && m.get("method").is_none() || m["method"] == "session/request_permission"
        });
        if message["method"] != "session/request_permission" {
            return (message, cards);
        }
        validate_acp("RequestPermissionRequest", &message["params"]).unwrap();
        let option = answers.get(cards).copied().unwrap_or("deny");
        cards += 1;
        editor.send(json!({ "jsonrpc": "2.0", "id": message["id"],
                            "result": { "outcome": { "outcome": "selected", "optionId": option } } }));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editors_server_runs_with_the_session_asked_denied_and_allowed() {
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    let tag = tag();
    let mut editor = Editor::start(&home);
    let init = editor.initialize(false);
    assert_eq!(
        init["result"]["agentCapabilities"]["mcpCapabilities"],
        json!({ "http": true, "sse": false })
    );
    let (session, report) = opened_with(
        &mut editor,
        &work,
        "manual",
        json!([server("example", &[], &tag)]),
    );
    assert_eq!(report[0]["name"], "example", "{report}");
    assert_eq!(report[0]["started"], true, "{report}");
    assert_eq!(tagged(&tag).len(), 1, "one server process runs");

    // Denied, then allowed once, then allowed for the session: the third call asks nobody.
    for (id, text) in [
        ("call_1", "one"),
        ("call_2", "two"),
        ("call_3", "three"),
        ("call_4", "four"),
    ] {
        peer.model().push(ModelReply::tool_call(
            id,
            "example__echo",
            json!({ "text": text }),
        ));
    }
    peer.model().push(ModelReply::text("Echoed."));
    let (answer, cards) = prompt_answering(&mut editor, &session, "echo", &["deny", "once", "session"]);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(cards, 3, "the fourth call was allowed for the session");
    assert!(
        tool_text(&peer, "call_1").starts_with("Not done"),
        "{}",
        tool_text(&peer, "call_1")
    );
    assert_eq!(tool_text(&peer, "call_2"), "two");
    assert_eq!(tool_text(&peer, "call_3"), "three");
    assert_eq!(tool_text(&peer, "call_4"), "four");
    let offered: Vec<String> = peer.model().requests()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    for tool in ["example__echo", "example__add", "example__sleep"] {
        assert!(offered.contains(&tool.to_string()), "{offered:?}");
    }
    for update in editor.updates() {
        if update["toolCallId"] == "call_2" && update["sessionUpdate"] == "tool_call" {
            assert_eq!(update["title"], "echo (MCP server example)");
        }
    }

    // A tool that makes its server exit mid-call: a sentence to the model, the session goes on.
    peer.model()
        .push(ModelReply::tool_call("call_exit", "example__exit", json!({})));
    peer.model().push(ModelReply::text("It stopped."));
    let (answer, _) = prompt_answering(&mut editor, &session, "exit", &["once"]);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let said = tool_text(&peer, "call_exit");
    assert!(said.contains("MCP server example"), "{said}");

    // session/close stops what is left of the servers.
    let closed = editor.request("session/close", json!({ "sessionId": session }));
    assert!(closed.get("error").is_none(), "{closed}");
    assert!(
        eventually(WAIT, || tagged(&tag).is_empty()),
        "a server outlived its session"
    );
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn in_plan_mode_a_server_tool_is_denied_without_a_card() {
    let (peer, home) = logged_in().await;
    let tag = tag();
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    let (session, _) = opened_with(
        &mut editor,
        &home.path().join("work"),
        "plan",
        json!([server("ex", &[], &tag)]),
    );
    peer.model().push(ModelReply::tool_call(
        "call_p",
        "ex__add",
        json!({ "a": 1, "b": 2 }),
    ));
    peer.model().push(ModelReply::text("Not allowed."));
    let (answer, cards) = prompt_answering(&mut editor, &session, "add", &[]);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(cards, 0);
    assert!(tool_text(&peer, "call_p").contains("Plan mode only reads"));
    // The end of input stops the servers too.
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
    assert!(
        eventually(WAIT, || tagged(&tag).is_empty()),
        "a server outlived its session"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_that_do_not_start_are_said_and_the_session_starts() {
    let (peer, home) = logged_in().await;
    let tag = tag();
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    let servers = json!([
        { "name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": [] },
        server("dies", &["--exit-at-start"], &tag),
        server("garbled", &["--garbage-first"], &tag),
        server("silent", &["--hang-at-start"], &tag),
        server("good", &[], &tag),
        { "type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": [] },
    ]);
    let (session, report) = opened_with(&mut editor, &home.path().join("work"), "auto", servers);
    let reasons: Vec<String> = report
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["started"] == false)
        .map(|s| s["reason"].as_str().unwrap().to_string())
        .collect();
    let started: Vec<&str> = report
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["started"] == true)
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(started.contains(&"good"), "{report}");
    for name in ["missing", "dies", "silent", "old"] {
        assert!(
            reasons
                .iter()
                .any(|r| r.contains(&format!("The MCP server {name} "))),
            "{name}: {reasons:?}"
        );
    }
    assert!(
        reasons.iter().any(|r| r.contains("did not answer within")),
        "{reasons:?}"
    );
    // The model hears which are missing, and the good one still works.
    peer.model().push(ModelReply::tool_call(
        "call_g",
        "good__add",
        json!({ "a": 2, "b": 3 }),
    ));
    peer.model().push(ModelReply::text("Five."));
    let (answer, _) = prompt_answering(&mut editor, &session, "add", &[]);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(tool_text(&peer, "call_g"), "5");
    let system = peer.model().requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("## MCP servers") && system.contains("missing"),
        "{system}"
    );
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
    assert!(
        eventually(WAIT, || tagged(&tag).is_empty()),
        "a server outlived its session"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_server_list_is_invalid_params() {
    let (_peer, home) = logged_in().await;
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    let answer = editor.request(
        "session/new",
        json!({ "cwd": home.path().join("work"), "mcpServers": [{ "type": "http", "name": "x" }] }),
    );
    let (code, message) = error_of(&answer);
    assert_eq!(code, -32602, "{answer}");
    assert!(message.contains("mcpServers"), "{message}");
}
