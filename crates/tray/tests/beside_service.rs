//! The tray beside a headless service: the real `lembas service run` holds the device lock and
//! links to the reference peer; the app's `Host` (as the app runs it, with `notices::run` and the
//! freedesktop notifier against this test's notification server) mirrors it through the control
//! socket. Covered: the service's status and a card opened by its engine reach the app, the card's
//! notice is shown, Allow on it answers the turn (the peer is told settled), Stop all remote work
//! ends the service's link and turns remote work off, and once the service stops the app takes the
//! lock and runs the device itself.
//! Needs the `lembas` binary built (`cargo build -p lembas-cli`; `LEMBAS_BIN` names another), a
//! session bus and a Secret Service: run it through scripts/with-keyring.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Home, TOKEN, WAIT, click, closed, linked, notification_server, shown, store_token};
use lembas_desktop::host::Host;
use lembas_desktop::notices;
use lembas_desktop::notifier::freedesktop::Freedesktop;
use lembas_device::events::LinkState;
use lembas_peer::{ModelReply, Peer, PeerConfig};
use serde_json::json;

/// The `lembas` binary beside this test's (both in the target folder's profile directory).
fn lembas_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("LEMBAS_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("lembas"))
        .unwrap();
    assert!(
        bin.exists(),
        "{} is missing: build it first (cargo build -p lembas-cli)",
        bin.display()
    );
    bin
}

/// The headless service; killed when dropped.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < end, "in time: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tray_mirrors_and_answers_a_headless_service() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter("info,lembas_desktop=debug")
        .try_init();
    let kit = Home::new();
    let home = kit.path();
    let work = kit.work();
    let (bus, mut seen) = notification_server().await;
    store_token(TOKEN);
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let config = kit.config();
    kit.config_with_work(&peer.url(), "");

    let log = std::fs::File::create(home.join("service.log")).unwrap();
    let mut service = Service(
        Command::new(lembas_bin())
            .args(["service", "run"])
            .envs(kit.env())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    let mut link = linked(&peer, WAIT).await.unwrap();

    // The service holds the lock: the app mirrors it.
    let host = Host::start(kit.setup());
    tokio::spawn(notices::run(
        host.clone(),
        Arc::new(Freedesktop),
        Arc::new(|_: &str| {}),
    ));
    eventually("the app shows the service's linked status", || {
        let state = host.state();
        state.held_by.is_some() && state.status.is_some_and(|s| s.link == LinkState::Linked)
    })
    .await;

    let session = link.new_session(&work, "manual", WAIT).await.unwrap();
    let model = peer.model();
    model.push(ModelReply::tool_call(
        "call_beside",
        "write",
        json!({ "path": "beside.txt", "content": "from the tray" }),
    ));
    model.push(ModelReply::text("Done."));
    let prompt = link.prompt(&session, "write a file").await.unwrap();
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();

    // The service's card is the app's: in its list and as a notice with Allow and Deny.
    let (id, summary, body, actions) = shown(&mut seen).await;
    assert!(summary.starts_with("LLeMbas asks: "), "{summary}");
    assert!(
        body.contains("beside.txt") && body.contains("+from the tray"),
        "{body}"
    );
    assert!(actions.iter().any(|a| a == "allow"), "{actions:?}");
    let cards = host.cards();
    assert_eq!(cards.len(), 1, "{cards:?}");
    assert_eq!(cards[0].id, "call_beside");
    assert_eq!(cards[0].session_id, session);

    // Allow on the notice answers it in the service: the peer is told, the turn goes on.
    click(&bus, id, "allow").await;
    assert_eq!(closed(&mut seen).await, id, "the answered notice is taken down");
    let told = link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        told["params"],
        json!({ "sessionId": session, "toolCallId": "call_beside" })
    );
    link.answer(
        card["id"].clone(),
        json!({ "outcome": { "outcome": "selected", "optionId": "deny" } }),
    )
    .await
    .unwrap();
    let answer = link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(work.join("beside.txt")).unwrap(),
        "from the tray"
    );
    assert!(host.cards().is_empty());
    // The service's events are the app's activity.
    eventually("the turn in the app's activity", || {
        host.activity().entries().iter().any(|e| e.kind == "turn")
    })
    .await;

    // Stop all remote work reaches the service: its link ends, remote work is off in the config
    // (written by the service: the app's own menu path also writes it, this test does not).
    host.end_link();
    let close = link.closed(WAIT).await;
    assert!(close.is_ok(), "the service's link ended: {close:?}");
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.contains("enabled: false"),
        "remote work is off: {written}"
    );

    // The service stops: the app takes the lock and runs the device itself.
    let _ = service.0.kill();
    let _ = service.0.wait();
    eventually("the app runs the device itself", || {
        host.state().held_by.is_none()
    })
    .await;
    host.quit().await;
}
