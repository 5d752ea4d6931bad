//! Sessions outlive links and processes: a dropped link, a killed device, deletes.

use super::turns::eventually_status;
use super::*;
use lembas_peer::{ModelReply, Part};

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_goes_on_when_the_link_drops_and_the_next_link_follows_it() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("working… ".into()),
            Part::Hang,
            Part::Text("done".into()),
        ],
        finish_reason: "stop".into(),
    });
    l.send_prompt(&session, "long job", "turn-long").await;
    l.model().next_request(WAIT).await.unwrap();
    // The link drops under the turn; the device dials again.
    let mut l = l.linked_again().await;
    let status = eventually_status(&mut l, &session, |s| s["busy"] == true).await;
    assert_eq!(status["turnId"], "turn-long");
    l.model().release();
    // The prompt sent again with its turn id gets the turn's answer, not a second run.
    let answer = l.prompt(&session, "long job", "turn-long").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(l.model().requests().len(), 1);
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(history["result"]["turns"][1]["text"], "working… done");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_open_when_the_link_drops_is_shown_again_on_the_next_link() {
    let mut l = linked("").await;
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_x",
        "write",
        json!({ "path": "kept.txt", "content": "kept" }),
    ));
    l.model().push(reply_text("Written."));
    l.send_prompt(&session, "write it", "turn-x").await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let mut l = l.linked_again().await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(card["params"]["toolCall"]["toolCallId"], "call_x");
    l.choose(&card, "once").await;
    let answer = l.prompt(&session, "write it", "turn-x").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(std::fs::read_to_string(l.work.join("kept.txt")).unwrap(), "kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_device_reopens_the_session_from_the_store() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text("First answer."));
    l.prompt(&session, "first", "turn-1").await;
    l.model().push(ModelReply::Stream {
        parts: vec![Part::Text("never finished".into()), Part::Hang],
        finish_reason: "stop".into(),
    });
    l.send_prompt(&session, "second", "turn-2").await;
    // The second turn's request is in, its stream hanging mid-step.
    assert!(eventually(WAIT, || l.model().requests().len() == 2));
    l.service.signal(9);
    l.service.wait_exit(WAIT);
    l.model().release();
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    l.link = relink(&l.peer).await;
    let status = session_status(&mut l, &session).await;
    assert_eq!(status["exists"], true);
    assert_eq!(status["held"], "none");
    assert_eq!(status["busy"], false);
    assert_eq!(status["lastTurnId"], "turn-1", "{status}");
    // The first turn's answer is kept; the interrupted one runs again when sent again.
    let again = l.prompt(&session, "first", "turn-1").await;
    assert_eq!(again["result"]["stopReason"], "end_turn");
    l.model().push(reply_text("Second answer."));
    let second = l.prompt(&session, "second", "turn-2").await;
    assert_eq!(second["result"]["stopReason"], "end_turn", "{second}");
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    let turns = history["result"]["turns"].as_array().unwrap().clone();
    assert_eq!(turns[0]["text"], "first");
    assert_eq!(turns[1]["text"], "First answer.");
    assert_eq!(turns.last().unwrap()["text"], "Second answer.");
}

#[tokio::test(flavor = "multi_thread")]
async fn title_and_delete_and_deletes_from_a_shell_reach_the_client() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let titled = l
        .link
        .request(
            "_lembas/session/title",
            json!({ "sessionId": session, "title": "Waybread" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(titled["result"], json!({ "title": "Waybread" }));
    let long = l
        .link
        .request(
            "_lembas/session/title",
            json!({ "sessionId": session, "title": "x".repeat(201) }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(error_of(&long).0, -32602);
    let listed = l.home.run(&["sessions", "list", "--json"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["title"], "Waybread");

    let deleted = l
        .link
        .request("_lembas/session/delete", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(deleted["result"], json!({ "deleted": true }));
    assert!(!l.home.state().join(format!("sessions/{session}.jsonl")).exists());
    let again = l
        .link
        .request("_lembas/session/delete", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(again["result"], json!({ "deleted": false }));

    // Deleted from a shell while linked: the client hears it.
    let other = l.new_session("edit").await;
    let out = l.home.run(&["sessions", "delete", &other]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let told = l
        .link
        .recv_notification("_lembas/session/deleted", WAIT)
        .await
        .unwrap();
    assert_eq!(told["params"], json!({ "sessionId": other }));
    assert_eq!(session_status(&mut l, &other).await["exists"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delete_made_with_no_link_is_sent_after_the_next_initialize() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.service.signal(15);
    l.service.wait_exit(WAIT);
    let out = l.home.run(&["sessions", "delete", &session]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    let mut link = relink(&l.peer).await;
    let told = link
        .recv_notification("_lembas/session/deleted", WAIT)
        .await
        .unwrap();
    assert_eq!(told["params"], json!({ "sessionId": session }));
    // Sent once, then forgotten (the file is written after the notification went out).
    let kept = l.home.state().join("deleted.json");
    let forgotten = || std::fs::read_to_string(&kept).map_or(true, |text| text.contains("[]"));
    let deadline = std::time::Instant::now() + WAIT;
    while !forgotten() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(forgotten(), "{:?}", std::fs::read_to_string(&kept));
}
