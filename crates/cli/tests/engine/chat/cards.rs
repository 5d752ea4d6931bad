//! A shared chat's cards (approvals, questions, plans): at both ends at once, patient on the link
//! (never a scheduled turn's), the first answer taking the other down, through a link drop too.

use super::*;
use lembas_device::control::calls::call;
use lembas_device::control::chat::params::{ChatAnswerParams, ConfigureParams, OpenParams};
use lembas_protocol::card::CardAnswer;

#[tokio::test(flavor = "multi_thread")]
async fn a_card_waits_at_both_ends_and_the_first_answer_takes_the_other_down() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    let configured = front
        .ask(
            call::ChatConfigure,
            ConfigureParams {
                session_id: session.clone(),
                model: None,
                mode: Some(lembas_protocol::Mode::Manual),
                effort: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(configured.mode, lembas_protocol::Mode::Manual);

    // First: the phone answers, the front end's card is taken down.
    l.model().push(ModelReply::tool_call(
        "call_a",
        "write",
        json!({ "path": "a.txt", "content": "a" }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_b",
        "write",
        json!({ "path": "b.txt", "content": "b" }),
    ));
    l.model().push(reply_text("Both asked."));
    prompt(&mut front, &session, "write two").await;
    let card = pushed(&mut front, "card", |p| p["session_id"] == session.as_str()).await;
    assert_eq!(card["card"]["toolCall"]["toolCallId"], "call_a", "{card}");
    let asked = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(asked["params"]["_meta"]["lembas"]["patient"], true, "{asked}");
    validate_acp("RequestPermissionRequest", &asked["params"]).unwrap_or_else(|e| panic!("{e}: {asked}"));
    l.choose(&asked, "once").await;
    let settled = pushed(&mut front, "card/settled", |p| p["tool_call_id"] == "call_a").await;
    assert_eq!(
        (settled["session_id"].as_str(), settled["by"].as_str()),
        (Some(session.as_str()), Some("client"))
    );

    // Then: the front end answers, the link is told to take its card down.
    pushed(&mut front, "card", |p| {
        p["card"]["toolCall"]["toolCallId"] == "call_b"
    })
    .await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let allow: CardAnswer =
        serde_json::from_value(json!({ "outcome": { "outcome": "selected", "optionId": "once" } })).unwrap();
    front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_b".into(),
                answer: allow.clone(),
            },
        )
        .await
        .unwrap();
    let taken = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        taken["params"],
        json!({ "sessionId": session, "toolCallId": "call_b" })
    );
    pushed(&mut front, "card/settled", |p| {
        p["tool_call_id"] == "call_b" && p["by"] == "terminal"
    })
    .await;
    turn_running(&mut front, &session, false).await;
    assert_eq!(std::fs::read_to_string(l.work.join("b.txt")).unwrap(), "b");
    // Answered already: no longer open.
    let again = front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_b".into(),
                answer: allow,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&again), "not_open");
    updates(&l.link);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_waits_at_both_ends_and_the_front_ends_answer_reaches_the_model() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    let args = json!({ "questions": [{ "header": "DB", "question": "Which database?", "options": [{ "label": "SQLite" }, { "label": "Postgres" }] }] });
    l.model().push(ModelReply::tool_call("call_q", "ask_user", args));
    l.model().push(reply_text("Noted."));
    prompt(&mut front, &session, "ask me").await;
    let card = pushed(&mut front, "card", |p| p["session_id"] == session.as_str()).await;
    assert_eq!(card["card"]["toolCallId"], "call_q", "{card}");
    let asked = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    assert_eq!(asked["params"]["_meta"]["lembas"]["patient"], true, "{asked}");
    let answer: CardAnswer = serde_json::from_value(
        json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": ["Postgres"] }] }),
    )
    .unwrap();
    front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_q".into(),
                answer,
            },
        )
        .await
        .unwrap();
    let taken = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(taken["params"]["toolCallId"], "call_q");
    turn_running(&mut front, &session, false).await;
    assert!(
        tool_text(&l, "call_q").contains("Postgres"),
        "{}",
        tool_text(&l, "call_q")
    );
    updates(&l.link);
    // The instance's late answer changes nothing: the first answer won.
    l.link
        .answer(
            asked["id"].clone(),
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": ["SQLite"] }] }),
        )
        .await
        .unwrap();
    assert!(!tool_text(&l, "call_q").contains("SQLite"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_the_link_holds_is_taken_over_its_card_outlives_a_link_drop_and_a_scheduled_turns_is_never_patient()
 {
    let mut l = linked("  scheduled: true\n").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let session = l.new_session("manual").await;
    let mut front = front_end(&l.home).await;
    let taken = front
        .ask(
            call::ChatOpen,
            OpenParams {
                session_id: Some(session.clone()),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap();
    assert!(
        taken.sharing.shared,
        "the instance has it already: {:?}",
        taken.sharing
    );
    assert_eq!(taken.mode, lembas_protocol::Mode::Manual);
    l.link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();

    l.model().push(ModelReply::tool_call(
        "call_d",
        "write",
        json!({ "path": "d.txt", "content": "d" }),
    ));
    l.model().push(reply_text("Done."));
    prompt(&mut front, &session, "write d").await;
    pushed(&mut front, "card", |p| {
        p["card"]["toolCall"]["toolCallId"] == "call_d"
    })
    .await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();

    // The link drops while the card waits at both ends: the next link gets it again, still
    // patient, and its answer takes the front end's down.
    let mut l = l.linked_again().await;
    let again = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(again["params"]["toolCall"]["toolCallId"], "call_d");
    assert_eq!(again["params"]["_meta"]["lembas"]["patient"], true, "{again}");
    l.choose(&again, "once").await;
    let settled = pushed(&mut front, "card/settled", |p| p["tool_call_id"] == "call_d").await;
    assert_eq!(settled["by"], "client");
    turn_running(&mut front, &session, false).await;
    assert_eq!(std::fs::read_to_string(l.work.join("d.txt")).unwrap(), "d");

    // A scheduled turn in the shared chat: nobody is at the chat, so its card is never patient.
    l.model().push(ModelReply::tool_call(
        "call_s",
        "write",
        json!({ "path": "s.txt", "content": "s" }),
    ));
    l.model().push(reply_text("Scheduled done."));
    let run = l.run(&session, "scheduled write", Some("manual"), 60).await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert!(
        card["params"]["_meta"]["lembas"].get("patient").is_none(),
        "{card}"
    );
    assert!(
        card["params"]["_meta"]["lembas"]["scheduled"].is_object(),
        "{card}"
    );
    l.choose(&card, "deny").await;
    let answer = l.link.recv_answer(run, WAIT).await.unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    updates(&l.link);
    assert_eq!(l.link.faults(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_approved_at_the_front_end_sets_the_mode_and_takes_the_links_card_down() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    front
        .ask(
            call::ChatConfigure,
            ConfigureParams {
                session_id: session.clone(),
                model: None,
                mode: Some(lembas_protocol::Mode::Plan),
                effort: None,
            },
        )
        .await
        .unwrap();
    l.model().push(ModelReply::tool_call(
        "call_p",
        "plan_submit",
        json!({ "text": "# Plan\n1. do it" }),
    ));
    l.model().push(reply_text("Planned."));
    prompt(&mut front, &session, "plan it").await;
    let card = pushed(&mut front, "card", |p| p["session_id"] == session.as_str()).await;
    assert_eq!(card["card"]["text"], "# Plan\n1. do it", "{card}");
    let asked = l.link.recv_request("_lembas/plan", WAIT).await.unwrap();
    assert_eq!(asked["params"]["_meta"]["lembas"]["patient"], true, "{asked}");
    let approve: CardAnswer =
        serde_json::from_value(json!({ "outcome": "approve", "mode": "edit" })).unwrap();
    front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_p".into(),
                answer: approve,
            },
        )
        .await
        .unwrap();
    let taken = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(taken["params"]["toolCallId"], "call_p");
    let mode = pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "current_mode_update"
            && p["update"]["currentModeId"] == "edit"
    })
    .await;
    assert_eq!(mode["update"]["currentModeId"], "edit");
    updates(&l.link);
}
