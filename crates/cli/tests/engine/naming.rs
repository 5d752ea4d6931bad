//! How the device names what the instance serves: the instance by the name it gives itself, and a
//! model by any name it goes by.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn the_instance_s_instructions_are_under_its_own_name() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text("Terse."));
    let id = l
        .link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "hi" }],
                    "_meta": { "lembas": { "turnId": "turn-1", "system_prompt": "Be terse." } } }),
        )
        .await
        .unwrap();
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let request = l.model().requests().last().cloned().unwrap();
    let system = request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The name the instance gives itself in /api/v1/instance, not the login's connection name.
    assert!(
        system.contains("## Instructions from LLeMbas (reference peer)\n\nBe terse."),
        "{system}"
    );
    assert!(system.contains("linked to LLeMbas (reference peer)."), "{system}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_older_model_name_names_the_same_model() {
    let mut l = linked("").await;
    let work = l.work.clone();
    // `<connection>/<served id>`, as older clients wrote a model of the login's connection.
    let older = format!("example/{MODEL}");
    let opened = l
        .new_session_at(&work, json!({ "mode": "edit", "lembas_model": older }))
        .await;
    assert_eq!(opened["result"]["_meta"]["lembas"]["model"], MODEL, "{opened}");
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    let configured = l
        .link
        .request(
            "_lembas/configure",
            json!({ "sessionId": session, "model": older }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(configured["result"]["model"], MODEL, "{configured}");
    l.model().push(reply_text("Same model."));
    l.prompt(&session, "hi", "turn-1").await;
    assert_eq!(l.model().requests().last().unwrap()["model"], MODEL);
    let unknown = l
        .new_session_at(&work, json!({ "lembas_model": "other/example/chat-fast" }))
        .await;
    assert_eq!(error_of(&unknown).0, -32602, "{unknown}");
}
