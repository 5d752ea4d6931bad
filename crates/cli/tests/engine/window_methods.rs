//! The window's control methods on the real `lembas service run`: `window/state` (the snapshot
//! the window shows, with an open card), `settings/change` (written to the config; a missing folder
//! refused with the CLI's sentence), `approvals/answer` the window's way and `activity` described
//! for a view. (`login` and `logout` through the socket are in tests/login/window.rs, which takes turns
//! on the shared keychain entry.)

use super::control::{Raw, socket_ready};
use super::*;
use lembas_peer::ModelReply;

impl Raw {
    /// One request; its answer (`result` or `error`), skipping pushed notifications.
    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send(&request.to_string()).await;
        let answer = self.answer().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

fn error_reason(answer: &Value) -> (i64, String, String) {
    let error = &answer["error"];
    (
        error["code"].as_i64().unwrap_or_default(),
        error["data"]["reason"].as_str().unwrap_or_default().to_string(),
        error["message"].as_str().unwrap_or_default().to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_reads_its_state_and_changes_settings_through_the_socket() {
    let mut l = linked("").await;
    socket_ready(&l.home).await;
    let mut raw = Raw::connect(&l.home).await;

    let state = raw.call(1, "window/state", json!({})).await["result"].clone();
    assert_eq!(state["link"]["state"], "linked", "{state}");
    assert_eq!(
        state["link"]["line"],
        "Linked to example (run by lembas service run)"
    );
    assert_eq!(state["server"], l.peer.url().trim_end_matches('/'));
    assert_eq!(
        state["held_by"], "lembas service run",
        "a headless runtime names itself"
    );
    assert_eq!(state["remote"]["enabled"], true);
    assert_eq!(state["remote"]["scheduled"], false);
    assert_eq!(
        state["remote"]["roots"],
        json!([{ "path": l.work.display().to_string(), "trusted": true }])
    );
    assert_eq!(state["modes"], json!(["plan", "manual", "edit", "auto"]));
    assert!(state["limits"]["roots"].is_array(), "the limits sent: {state}");
    assert_eq!(state["cards"], json!([]));

    // A change is written to the config and the answer is the new snapshot.
    let changed = raw
        .call(
            2,
            "settings/change",
            json!({ "setting": "scheduled", "value": true }),
        )
        .await;
    assert_eq!(changed["result"]["remote"]["scheduled"], true, "{changed}");
    let config = std::fs::read_to_string(l.home.config()).unwrap();
    assert!(config.contains("scheduled: true"), "{config}");
    assert!(
        config.contains("connection: example"),
        "the rest is kept: {config}"
    );
    let again = raw.call(3, "window/state", json!({})).await;
    assert_eq!(again["result"]["remote"]["scheduled"], true);

    // A missing folder is refused with the sentence the CLI says, and nothing is written.
    let missing = l.home.path().join("work/missing");
    let missing = missing.to_str().unwrap();
    let refused = raw
        .call(
            4,
            "settings/change",
            json!({ "setting": "add_root", "value": missing }),
        )
        .await;
    let (code, reason, message) = error_reason(&refused);
    assert_eq!((code, reason.as_str()), (-32602, "refused"), "{refused}");
    let cli = tokio::task::block_in_place(|| l.home.run(&["remote", "roots", "add", missing]));
    assert!(!cli.status.success());
    assert!(
        String::from_utf8_lossy(&cli.stderr).contains(&message),
        "the CLI says {:?}; the socket said {message:?}",
        String::from_utf8_lossy(&cli.stderr)
    );
    assert_eq!(
        message,
        format!("{missing} does not exist; give an existing folder to add as a remote root.")
    );
    assert_eq!(std::fs::read_to_string(l.home.config()).unwrap(), config);
    // Settings the window does not offer, and wrong types, are bad params.
    for (id, params) in [
        (5, json!({ "setting": "server", "value": "http://x" })),
        (6, json!({ "setting": "max_mode", "value": "root" })),
        (7, json!({ "setting": "terminal" })),
    ] {
        let answer = raw.call(id, "settings/change", params).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }

    // An open approval card is in the snapshot as the window shows it.
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_win",
        "write",
        json!({ "path": "from-window.txt", "content": "yes\n" }),
    ));
    l.model().push(reply_text("Written."));
    let _id = l.send_prompt(&session, "write it", "t1").await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let state = raw.call(8, "window/state", json!({})).await["result"].clone();
    let cards = state["cards"].as_array().unwrap();
    assert_eq!(cards.len(), 1, "{state}");
    assert_eq!(cards[0]["id"], "call_win");
    assert_eq!(cards[0]["session_id"], session.as_str());
    assert_eq!(
        cards[0]["detail"],
        // The device's unified diff against the disk (the file is new).
        json!({ "type": "change", "path": "from-window.txt",
                "diff": "--- a/from-window.txt\n+++ b/from-window.txt\n@@ -0,0 +1 @@\n+yes" })
    );
    // The activity the runtime folded is in it too.
    let texts: Vec<&str> = state["activity"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(
        texts.iter().any(|t| t.starts_with("Agent session opened in")),
        "{texts:?}"
    );
    // Answered the window's way (once → allow); a second answer finds it gone.
    let answered = raw
        .call(
            9,
            "approvals/answer",
            json!({ "id": "call_win", "answer": "allow" }),
        )
        .await;
    assert_eq!(answered["result"]["answer"], "allow", "{answered}");
    let late = raw
        .call(
            10,
            "approvals/answer",
            json!({ "id": "call_win", "answer": "deny" }),
        )
        .await;
    assert_eq!(error_reason(&late).1, "not_open");

    // The Activity view's page: described lines and the file.
    let page = raw
        .call(11, "activity", json!({ "n": 1000, "described": true }))
        .await["result"]
        .clone();
    assert_eq!(
        page["path"],
        l.home.state().join("activity.jsonl").display().to_string()
    );
    let lines = page["lines"].as_array().unwrap();
    assert!(
        lines.iter().all(|line| line["text"].is_string()
            && line["kind"].is_string()
            && line["at_ms"].is_u64()
            && line.as_object().unwrap().len() == 3),
        "{page}"
    );
    assert!(
        lines.iter().any(|line| line["kind"] == "session_opened"),
        "{page}"
    );
}
