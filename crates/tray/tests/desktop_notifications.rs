//! Approval cards as desktop notifications, run the way the app runs them: the device runtime in
//! process (`host::Host`), `notices::run` with the freedesktop notifier, and a notification server
//! of this test's own on the private session bus, which records each notice and clicks its
//! buttons. The other side is the reference peer with a scripted model whose tool calls ask.
//! Covered: Allow and Deny on a notice answer the turn and send settled; a click on the notice
//! opens its card; the client's answer and a timeout take the notice down; a plan's Allow; a
//! scheduled run's notice names its schedule and wait; a card's notice turns critical in its last
//! minute.
//! Needs a session bus and a Secret Service: run it through scripts/with-keyring (a private
//! `dbus-run-session`, as scripts/test does).

mod common;

use std::sync::Arc;

use common::{Config, Home, TOKEN, WAIT, click, closed, linked, notification_server, shown, shown_urgency};

use lembas_desktop::host::Host;
use lembas_desktop::notices;
use lembas_desktop::notifier::freedesktop::Freedesktop;
use lembas_peer::{ModelReply, Peer, PeerConfig};
use serde_json::{Value, json};
use tokio::sync::mpsc;

fn write(id: &str, path: &str, content: &str) -> ModelReply {
    ModelReply::tool_call(id, "write", json!({ "path": path, "content": content }))
}

/// A scheduled run's prompt in `session` (turn `run`, its cards waiting `wait_s`), the model having
/// been told to write `file` first: the prompt's request id and the card it brings.
async fn scheduled_write(
    link: &mut lembas_peer::LinkHandle,
    model: &lembas_peer::ScriptedModel,
    session: &str,
    (run, wait_s): (&str, u64),
    (call, file): (&str, &str),
) -> (u64, Value) {
    model.push(write(call, file, "tidy"));
    model.push(ModelReply::text("Done or not."));
    let prompt = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": format!("tidy {file}") }],
                    "_meta": { "lembas": { "turnId": run, "scheduled": scheduled(wait_s) } } }),
        )
        .await
        .unwrap();
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    (prompt, card)
}

/// The client's Deny on a card.
async fn deny(link: &mut lembas_peer::LinkHandle, card: &Value) {
    link.answer(
        card["id"].clone(),
        json!({ "outcome": { "outcome": "selected", "optionId": "deny" } }),
    )
    .await
    .unwrap();
}

fn scheduled(wait_s: u64) -> Value {
    json!({ "schedule_id": "sched1", "run_id": "run1", "title": "Nightly tidy", "mode": "manual", "approval_wait_s": wait_s })
}

#[tokio::test(flavor = "multi_thread")]
async fn notices_answer_cards_and_go_when_the_client_answers() {
    // Shown when it fails: each card, notice and answer as the app saw them.
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter("info,lembas_desktop=debug")
        .try_init();
    // A scheduled card may wait one second, so a timeout is seen quickly.
    let kit = Home::new().with_least_approval_wait(1);
    let work = kit.work();
    let (bus, mut seen) = notification_server().await;
    kit.store_token(TOKEN);
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    kit.write(&Config::linked_to(&peer.url()).work_in(&work).scheduled());

    let host = Host::start(kit.setup());
    let (opened_tx, mut opened) = mpsc::unbounded_channel::<String>();
    tokio::spawn(notices::run(
        host.clone(),
        Arc::new(Freedesktop),
        Arc::new(move |id: &str| {
            let _ = opened_tx.send(id.to_string());
        }),
    ));
    let mut link = linked(&peer, WAIT).await.unwrap();
    let session = link.new_session(&work, "manual", WAIT).await.unwrap();
    let model = peer.model();
    // What the change shows is markup to a server that reads it: it must arrive as text.
    model.push(write("call_allow", "allowed.txt", "yes <b>&& 2>&1"));
    model.push(write("call_deny", "denied.txt", "no"));
    model.push(write("call_client", "client.txt", "from the client"));
    model.push(ModelReply::text("Done."));
    let prompt = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "write three files" }] }),
        )
        .await
        .unwrap();
    let settled = json!({ "sessionId": session, "toolCallId": "call_allow" });

    // Allow on the notice answers the turn, and the client is told to take its card down.
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let (id, summary, body, actions) = shown(&mut seen).await;
    assert!(summary.starts_with("LLeMbas asks: "), "{summary}");
    assert!(body.contains("allowed.txt"), "{body}");
    assert!(
        body.contains("+yes &lt;b&gt;&amp;&amp; 2&gt;&amp;1"),
        "escaped for body-markup: {body}"
    );
    for key in ["allow", "Allow", "deny", "Deny", "default"] {
        assert!(actions.iter().any(|a| a == key), "{key} in {actions:?}");
    }
    assert_eq!(host.cards().len(), 1);
    assert_eq!(host.cards()[0].id, "call_allow");
    click(&bus, id, "allow").await;
    assert_eq!(closed(&mut seen).await, id, "the answered notice is taken down");
    let told = link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(told["params"], settled);
    // The client's late answer changes nothing: the first answer won.
    deny(&mut link, &card).await;

    // Deny on the notice.
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let (id, body, urgency) = shown_urgency(&mut seen).await;
    assert!(body.contains("denied.txt"), "{body}");
    assert_eq!(urgency, Some(1), "a card is of normal urgency, not critical");
    click(&bus, id, "deny").await;
    assert_eq!(closed(&mut seen).await, id);
    let told = link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(told["params"]["toolCallId"], "call_deny");
    link.answer(
        card["id"].clone(),
        json!({ "outcome": { "outcome": "selected", "optionId": "once" } }),
    )
    .await
    .unwrap();

    // A click on the notice opens its card in the window and leaves it up; the client's answer
    // then takes it down.
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let (id, _, _, _) = shown(&mut seen).await;
    click(&bus, id, "default").await;
    let which = tokio::time::timeout(WAIT, opened.recv()).await.unwrap();
    assert_eq!(which.as_deref(), Some("call_client"));
    link.answer(
        card["id"].clone(),
        json!({ "outcome": { "outcome": "selected", "optionId": "once" } }),
    )
    .await
    .unwrap();
    assert_eq!(
        closed(&mut seen).await,
        id,
        "the client's answer withdraws the notice"
    );

    let answer = link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(work.join("allowed.txt")).unwrap(),
        "yes <b>&& 2>&1"
    );
    assert!(
        !work.join("denied.txt").exists(),
        "the denied write did not happen"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("client.txt")).unwrap(),
        "from the client"
    );

    // A plan: Allow on its notice approves it (in manual mode), and the client is told.
    model.push(ModelReply::tool_call(
        "call_plan",
        "plan_submit",
        json!({ "text": "1. Tidy the notes\n2. Run the tests" }),
    ));
    model.push(ModelReply::text("Planned."));
    let prompt = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "plan it" }] }),
        )
        .await
        .unwrap();
    let card = link.recv_request("_lembas/plan", WAIT).await.unwrap();
    let (id, summary, body, _) = shown(&mut seen).await;
    assert_eq!(summary, "LLeMbas asks you to approve a plan");
    assert!(body.contains("1. Tidy the notes"), "{body}");
    click(&bus, id, "allow").await;
    assert_eq!(closed(&mut seen).await, id);
    let told = link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(told["params"]["toolCallId"], "call_plan");
    link.answer(card["id"].clone(), json!({ "outcome": "dismissed" }))
        .await
        .unwrap();
    let answer = link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let last = model.requests().last().cloned().unwrap_or_default();
    assert!(
        last.to_string().contains("The person approved the plan"),
        "the model heard the approval: {last}"
    );

    // A scheduled run's notice names the schedule and its wait; the client's denial takes it down,
    // even when it comes while the service is still showing the notice (as here: the server
    // reports the notice before its Notify call returns, and the client answers at once).
    let opened_session = link
        .request(
            "session/new",
            json!({ "cwd": work, "mcpServers": [], "_meta": { "lembas_model": lembas_peer::DEFAULT_MODEL, "lembas": { "scheduled": scheduled(60) } } }),
            WAIT,
        )
        .await
        .unwrap();
    let session = opened_session["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("a scheduled session: {opened_session}"))
        .to_string();
    let (prompt, card) = scheduled_write(
        &mut link,
        &model,
        &session,
        ("run1", 60),
        ("call_sched", "tidy.txt"),
    )
    .await;
    let (id, summary, body, _) = shown(&mut seen).await;
    assert!(
        summary.starts_with("Scheduled “Nightly tidy” asks: "),
        "{summary}"
    );
    assert!(
        body.ends_with("Waits 1 minute for an answer, then it is denied."),
        "{body}"
    );
    let cards = host.cards();
    assert_eq!(cards.len(), 1);
    assert_eq!(cards[0].scheduled.as_ref().map(|s| s.wait_s), Some(60));
    deny(&mut link, &card).await;
    assert_eq!(closed(&mut seen).await, id);
    let answer = link.recv_answer(prompt, WAIT).await.unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(!work.join("tidy.txt").exists());
    assert!(host.cards().is_empty());

    // Nobody answers: when the wait runs out the notice is taken down and the client told.
    let (prompt, _) = scheduled_write(
        &mut link,
        &model,
        &session,
        ("run2", 1),
        ("call_late", "late.txt"),
    )
    .await;
    let (id, _, body, _) = shown(&mut seen).await;
    assert!(
        body.ends_with("Waits 1 second for an answer, then it is denied."),
        "{body}"
    );
    assert_eq!(closed(&mut seen).await, id, "the timeout withdraws the notice");
    let told = link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(told["params"]["toolCallId"], "call_late");
    link.recv_answer(prompt, WAIT).await.unwrap();
    assert!(!work.join("late.txt").exists());
    assert!(host.cards().is_empty());

    // A card waits normal until its last minute, then its notice is shown again as critical.
    let (prompt, card) = scheduled_write(
        &mut link,
        &model,
        &session,
        ("run3", 62),
        ("call_last", "last.txt"),
    )
    .await;
    let (id, body, urgency) = shown_urgency(&mut seen).await;
    assert!(body.contains("last.txt"), "{body}");
    assert_eq!(urgency, Some(1), "normal while more than a minute is left");
    assert_eq!(closed(&mut seen).await, id, "taken down for the critical one");
    let (id, again, urgency) = shown_urgency(&mut seen).await;
    assert_eq!((again, urgency), (body, Some(2)), "critical in the last minute");
    deny(&mut link, &card).await;
    assert_eq!(closed(&mut seen).await, id);
    link.recv_answer(prompt, WAIT).await.unwrap();
    assert!(host.cards().is_empty());
    host.quit().await;
}
