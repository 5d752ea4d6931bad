//! The window's view of the sessions, through the control socket of the real service: the list with
//! what is live, the transcript with each tool call's decision and who gave it, the updates pushed
//! live, and Stop (the window's, and Stop all remote work) ending the client's turn as cancelled.

use super::*;
use lembas_device::control::{Client, Subscription};
use lembas_peer::Part;
use std::time::Instant;

async fn control(home: &Home) -> Client {
    Client::connect_control(home.socket(), &home.cookie())
        .await
        .expect("the service's control socket")
}

async fn call(client: &mut Client, method: &str, params: Value) -> Value {
    client
        .call(method, params)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// The next `session/update` push of `session` whose update matches.
async fn pushed(pushes: &mut Subscription, session: &str, matches: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + WAIT;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let (method, params) = tokio::time::timeout(left, pushes.next_notification())
            .await
            .expect("the update was pushed")
            .expect("the subscription goes on");
        if method == "session/update" && params["session_id"] == session && matches(&params["update"]) {
            return params["update"].clone();
        }
    }
}

/// A turn that waits in the model until released.
fn hanging(l: &Linked) {
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("working… ".into()),
            Part::Hang,
            Part::Text("done".into()),
        ],
        finish_reason: "stop".into(),
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_follows_a_session_live_and_reads_its_transcript_with_decisions() {
    let mut l = linked("").await;
    let mut window = control(&l.home).await;
    let mut pushes = control(&l.home)
        .await
        .subscribe_with(json!({ "sessions": true }))
        .await
        .unwrap();
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "seen.txt", "content": "seen\n" }),
    ));
    l.model().push(reply_text("Written it."));
    let id = l.send_prompt(&session, "write seen.txt", "t1").await;

    let said = pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "user_message_chunk"
    })
    .await;
    assert_eq!(said["content"]["text"], "write seen.txt");
    let asked = pushed(&mut pushes, &session, |u| u["sessionUpdate"] == "tool_call").await;
    assert_eq!(asked["toolCallId"], "call_w");
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    // Listed while it works: first, with its model and mode.
    let listed = call(&mut window, "sessions/list", json!({})).await;
    let first = &listed[0];
    assert_eq!(first["id"], session.as_str());
    assert_eq!(
        (first["running"].clone(), first["open"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(
        (first["model"].as_str(), first["mode"].as_str()),
        (Some(MODEL), Some("manual"))
    );
    assert_eq!(first["scheduled"], false);
    assert!(
        first["cwd"].is_string() && first["updated_ms"].is_u64(),
        "the old fields stay: {first}"
    );

    // Allowed from this computer: the decision says so, pushed and in the transcript.
    call(
        &mut window,
        "approvals/answer",
        json!({ "id": "call_w", "answer": "allow" }),
    )
    .await;
    let decided = pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "_lembas_decision"
    })
    .await;
    assert_eq!(decided["decision"]["answeredBy"], "desktop", "{decided}");
    assert_eq!(decided["decision"]["answer"], "allowed once", "{decided}");
    let chunk = pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "agent_message_chunk"
    })
    .await;
    assert!(chunk["content"]["text"].is_string());
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "_lembas_turn" && u["running"] == false
    })
    .await;

    let transcript = call(
        &mut window,
        "sessions/transcript",
        json!({ "session_id": session }),
    )
    .await;
    assert_eq!(transcript["session_id"], session.as_str());
    assert_eq!(transcript["running"], false);
    let turns = transcript["turns"].as_array().unwrap();
    assert_eq!(turns[0]["text"], "write seen.txt", "{transcript}");
    assert_eq!(turns[1]["tools"][0]["id"], "call_w", "{transcript}");
    assert!(
        turns[1]["text"].as_str().unwrap().contains("Written it."),
        "{transcript}"
    );
    let decision = &transcript["decisions"]["call_w"];
    assert_eq!(
        (
            decision["decision"].as_str(),
            decision["answeredBy"].as_str(),
            decision["outcome"].as_str()
        ),
        (Some("ask"), Some("desktop"), Some("completed")),
        "{transcript}"
    );

    // Bad or unknown sessions are refused with a sentence.
    let unknown = window
        .call("sessions/transcript", json!({ "session_id": "ses_nope" }))
        .await;
    assert!(
        format!("{unknown:?}").contains("There is no session ses_nope"),
        "{unknown:?}"
    );
    let bad = window.call("sessions/transcript", json!({ "id": "x" })).await;
    assert!(format!("{bad:?}").contains("-32602"), "{bad:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_in_the_window_cancels_the_running_turn() {
    let mut l = linked("").await;
    let mut window = control(&l.home).await;
    let session = l.new_session("edit").await;
    let idle = window
        .call("sessions/stop", json!({ "session_id": session }))
        .await;
    assert!(format!("{idle:?}").contains("Nothing is running"), "{idle:?}");

    hanging(&l);
    let id = l.send_prompt(&session, "long job", "t-stop").await;
    l.model().next_request(WAIT).await.unwrap();
    let stopped = call(&mut window, "sessions/stop", json!({ "session_id": session })).await;
    assert_eq!(stopped["stopped"], true);
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    l.model().release();
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_all_remote_work_cancels_the_running_turn() {
    let mut l = linked("").await;
    let mut window = control(&l.home).await;
    let session = l.new_session("edit").await;
    hanging(&l);
    let id = l.send_prompt(&session, "long job", "t-all").await;
    l.model().next_request(WAIT).await.unwrap();
    let stopped = call(&mut window, "remote/stop", json!({})).await;
    assert_eq!(
        (
            stopped["remote_enabled"].clone(),
            stopped["stopped_turns"].clone()
        ),
        (json!(false), json!(1))
    );
    // The turn's answer goes out before the link ends.
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    l.model().release();
}
