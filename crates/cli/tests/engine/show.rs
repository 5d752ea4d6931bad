//! The show tool end to end: files sent to the client's viewer as `_lembas/show` (kind, language,
//! line, text), the client's answer given to the model, refusals made before anything is sent
//! (past 1 MB, binary, outside the roots, protected, symlinked out), the tool offered only to a
//! client that said `show: true` and never in a scheduled turn, and the desktop's copy served on
//! the control socket (`shown/list`, `shown/read`, the `shown` event).

use super::control::{Raw, socket_ready};
use super::*;

fn write(path: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One control request on a fresh connection; its answer.
async fn control(home: &Home, method: &str, params: Value) -> Value {
    let mut raw = Raw::connect(home).await;
    raw.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string())
        .await;
    raw.answer().await
}

#[tokio::test(flavor = "multi_thread")]
async fn shown_files_reach_the_client_the_model_and_the_desktop() {
    let mut l = linked("").await;
    let work = l.work.clone();
    write(&work.join("notes.md"), "# Notes\n\n- one\n- two\n");
    write(
        &work.join("src/main.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    );
    write(
        &work.join("page.html"),
        "<h1>Page</h1><script>alert(1)</script>\n",
    );
    write(&work.join("log.txt"), "plain text\n");
    socket_ready(&l.home).await;
    let mut watcher = Raw::connect(&l.home).await;
    watcher
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"subscribe"}"#)
        .await;
    let session = l.new_session("edit").await;
    let calls = [
        ("call_md", json!({ "path": "notes.md", "line": 3 })),
        ("call_rs", json!({ "path": "src/main.rs" })),
        ("call_html", json!({ "path": "page.html" })),
        ("call_txt", json!({ "path": work.join("log.txt") })),
    ];
    for (id, args) in &calls {
        l.model().push(ModelReply::tool_call(id, "show", args.clone()));
    }
    l.model().push(reply_text("Shown."));
    let prompt = l.send_prompt(&session, "show them", "t1").await;
    let mut got = Vec::new();
    for (id, _) in &calls {
        let request = l.link.recv_request("_lembas/show", WAIT).await.unwrap();
        assert_eq!(request["params"]["toolCallId"], *id);
        let answer = if *id == "call_html" {
            Err("The person closed the viewer.")
        } else {
            Ok(())
        };
        l.link.answer_show(&request, answer).await.unwrap();
        got.push(request["params"].clone());
    }
    let answer = l.link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    assert!(offered(&l.model(), 0).contains(&"show".to_string()));
    let expected = [
        ("notes.md", "markdown", None, Some(3), "# Notes\n\n- one\n- two\n"),
        (
            "src/main.rs",
            "code",
            Some("rust"),
            None,
            "fn main() {\n    println!(\"hi\");\n}\n",
        ),
        (
            "page.html",
            "html",
            None,
            None,
            "<h1>Page</h1><script>alert(1)</script>\n",
        ),
        ("log.txt", "text", None, None, "plain text\n"),
    ];
    for (params, (path, kind, language, line, text)) in got.iter().zip(expected) {
        assert_eq!(params["sessionId"], session.as_str());
        assert_eq!(params["path"], path, "{params}");
        assert_eq!(params["kind"], kind, "{params}");
        assert_eq!(params["language"].as_str(), language, "{params}");
        assert_eq!(params["line"].as_u64(), line, "{params}");
        assert_eq!(params["text"], text, "{params}");
    }
    assert_eq!(l.link.shows(), got, "the peer recorded the four files");
    assert!(tool_text(&l, "call_md").contains("notes.md is shown"));
    assert!(tool_text(&l, "call_rs").contains("src/main.rs is shown"));
    let refused = tool_text(&l, "call_html");
    assert!(
        refused.contains("not shown") && refused.contains("The person closed the viewer."),
        "{refused}"
    );
    // The ACP side: a read, titled by its path, validated against the schema.
    let titles: Vec<Value> = updates(&l.link)
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "call_rs")
        .map(|u| json!([u["title"], u["kind"]]))
        .collect();
    assert_eq!(titles, [json!(["Show src/main.rs", "read"])]);

    // The desktop: an event each (no text in it), the list newest first, each text readable.
    for (path, kind, language, _, text) in &expected {
        let event = watcher.event("shown").await;
        assert_eq!(event["session_id"], session.as_str());
        assert_eq!(
            (&event["path"], &event["file_kind"]),
            (&json!(path), &json!(kind))
        );
        assert_eq!(event["language"].as_str(), *language);
        assert_eq!(event["size"], text.len());
        assert!(event.get("text").is_none(), "{event}");
    }
    let list = control(&l.home, "shown/list", json!({ "session_id": session })).await;
    let listed = list["result"].as_array().cloned().unwrap_or_default();
    let paths: Vec<&str> = listed.iter().filter_map(|f| f["path"].as_str()).collect();
    assert_eq!(
        paths,
        ["log.txt", "page.html", "src/main.rs", "notes.md"],
        "{list}"
    );
    let md = &listed[3];
    assert_eq!(
        (md["kind"].as_str(), md["line"].as_u64()),
        (Some("markdown"), Some(3))
    );
    let read = control(&l.home, "shown/read", json!({ "id": md["id"] })).await;
    assert_eq!(read["result"]["text"], expected[0].4, "{read}");
    assert_eq!(read["result"]["file"]["path"], "notes.md");
    let other = control(&l.home, "shown/list", json!({ "session_id": "ses_other" })).await;
    assert_eq!(other["result"], json!([]));
    let gone = control(&l.home, "shown/read", json!({ "id": "shown-999" })).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
    assert_eq!(gone["error"]["data"]["reason"], "not_kept");
    let bad = control(&l.home, "shown/read", json!({ "ids": 1 })).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");

    // A deleted session's files go with it.
    let deleted = l
        .link
        .request("_lembas/session/delete", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(deleted["result"]["deleted"], true, "{deleted}");
    let after = control(&l.home, "shown/list", json!({})).await;
    assert_eq!(after["result"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_before_anything_is_sent() {
    let mut l = linked("").await;
    let work = l.work.clone();
    let most = 1024 * 1024;
    write(&work.join("big.md"), "a".repeat(most + 1));
    write(&work.join("exact.txt"), "b".repeat(most));
    write(&work.join("image.png"), [0x89u8, b'P', b'N', b'G', 0, 0, 0, 13]);
    write(&work.join(".env"), "SECRET=1\n");
    let outside = l.home.path().join("outside/secret.md");
    write(&outside, "# not for you\n");
    std::os::unix::fs::symlink(&outside, work.join("link.md")).unwrap();
    let session = l.new_session("auto").await;
    let calls = [
        ("call_big", json!({ "path": "big.md" })),
        ("call_bin", json!({ "path": "image.png" })),
        ("call_env", json!({ "path": ".env" })),
        ("call_out", json!({ "path": outside })),
        ("call_link", json!({ "path": "link.md" })),
        ("call_dots", json!({ "path": "../outside/secret.md" })),
        ("call_line", json!({ "path": "exact.txt", "line": 0 })),
    ];
    for (id, args) in &calls {
        l.model().push(ModelReply::tool_call(id, "show", args.clone()));
    }
    l.model().push(reply_text("Could not."));
    let answer = l.prompt(&session, "show them", "t1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(l.link.shows(), Vec::<Value>::new(), "nothing reached the viewer");

    let big = tool_text(&l, "call_big");
    assert!(
        big.contains("1048577 bytes") && big.contains("at most 1048576"),
        "{big}"
    );
    assert!(tool_text(&l, "call_bin").contains("binary file"));
    let env = tool_text(&l, "call_env");
    assert!(env.contains("protected path"), "{env}");
    for id in ["call_out", "call_link", "call_dots"] {
        let text = tool_text(&l, id);
        assert!(
            text.contains("outside the folders this computer allows"),
            "{id}: {text}"
        );
    }
    assert!(tool_text(&l, "call_line").contains("at least 1"));
    // Denied like a read: the tool_denied event, the call failed; never an approval card.
    let denied: Vec<String> = l
        .link
        .received()
        .into_iter()
        .filter(|m| m["method"] == "_lembas/event" && m["params"]["event"]["type"] == "tool_denied")
        .filter_map(|m| m["params"]["event"]["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(denied, ["call_env", "call_out", "call_link", "call_dots"]);
    assert!(
        !l.link
            .received()
            .iter()
            .any(|m| m["method"] == "session/request_permission")
    );
    updates(&l.link); // every update validates

    // Exactly the limit is shown.
    l.model().push(ModelReply::tool_call(
        "call_exact",
        "show",
        json!({ "path": "exact.txt" }),
    ));
    l.model().push(reply_text("Shown."));
    let prompt = l.send_prompt(&session, "show exact", "t2").await;
    let request = l.link.recv_request("_lembas/show", WAIT).await.unwrap();
    assert_eq!(request["params"]["text"].as_str().map(str::len), Some(most));
    l.link.answer_show(&request, Ok(())).await.unwrap();
    l.link.recv_answer(prompt, WAIT).await.unwrap();
    let list = control(&l.home, "shown/list", json!({})).await;
    assert_eq!(list["result"].as_array().map(Vec::len), Some(1), "{list}");
}

#[tokio::test(flavor = "multi_thread")]
async fn not_offered_to_a_client_without_show() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    write(&work.join("a.md"), "# A\n");
    home.config_for(&peer.url(), &remote(&work, ""));
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let init = link
        .request(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": { "_meta": { "lembas": { "protocol": 3 } } } }),
            WAIT,
        )
        .await
        .unwrap();
    assert!(init["result"].is_object(), "{init}");
    let opened = link
        .request(
            "session/new",
            json!({ "cwd": work, "mcpServers": [], "_meta": { "mode": "edit", "lembas_model": MODEL } }),
            WAIT,
        )
        .await
        .unwrap();
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    // The model calls it anyway: it is told there is no such tool here, and nothing is sent.
    peer.model()
        .push(ModelReply::tool_call("call_s", "show", json!({ "path": "a.md" })));
    peer.model().push(reply_text("Fine."));
    let answer = link
        .request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "show a" }] }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let tools = offered(&peer.model(), 0);
    assert!(
        tools.contains(&"read".to_string()) && !tools.contains(&"show".to_string()),
        "{tools:?}"
    );
    assert_eq!(link.shows(), Vec::<Value>::new());
    let said = peer.model().requests()[1]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .unwrap_or_default();
    assert!(
        said["content"]
            .as_str()
            .is_some_and(|t| t.contains("no tool named `show`")),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn not_offered_in_a_scheduled_turn() {
    let mut l = linked("  scheduled: true\n").await;
    let session = l.scheduled_session(None).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    l.model().push(reply_text("Nothing to show."));
    let id = l.run(&session, "report", None, 60).await;
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert!(answer["result"].is_object(), "{answer}");
    let tools = offered(&l.model(), 0);
    assert!(
        tools.contains(&"read".to_string()) && !tools.contains(&"show".to_string()),
        "{tools:?}"
    );
    // The same session prompted by the person afterwards is offered it.
    l.model().push(reply_text("Now I could."));
    l.prompt(&session, "and now?", "t-after").await;
    assert!(offered(&l.model(), 1).contains(&"show".to_string()));
}
