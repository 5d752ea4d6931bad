//! The control socket's client API, as the tray uses it for a runtime it does not run: a runtime
//! linked to the reference peer, a subscription that sees a card asked, answered from a second
//! connection, settled and logged; then the runtime stops and the socket is gone. Needs a Secret
//! Service (scripts/with-keyring). The runtime lives in the test's own home, handed its folders.

use lembas_device::control::{self, CallError, Client, ConnectError, Pushed, Subscription};
use lembas_device::events::{DeviceEvent, LinkState};
use lembas_protocol::permission::ApprovalOption;

use crate::WAIT;
use lembas_device::runtime::Runtime;
use lembas_peer::{ModelReply, Peer, PeerConfig};
use lembas_testkit::{Home, linked};
use serde_json::json;

const TOKEN: &str = "control-client-token-9b2c";

/// The next pushed thing that `wanted` picks, within the wait.
async fn next_of<T>(stream: &mut Subscription, mut wanted: impl FnMut(Pushed) -> Option<T>) -> T {
    tokio::time::timeout(WAIT, async {
        loop {
            let pushed = stream
                .next()
                .await
                .expect("the stream goes on while the runtime runs");
            if let Some(found) = wanted(pushed) {
                return found;
            }
        }
    })
    .await
    .expect("pushed within the wait")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tray_watches_and_answers_a_runtime_it_does_not_run() {
    let kit = Home::new();
    let home = kit.path();
    let work = kit.work();
    let dirs = kit.dirs();
    assert!(matches!(
        Client::connect(&dirs).await,
        Err(ConnectError::NotRunning)
    ));
    kit.store_token(TOKEN);
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    kit.config_with_work(&peer.url(), "");
    let runtime = Runtime::start(kit.setup(), "control client test").unwrap();
    assert_eq!(control::socket_path(&dirs), home.join("run/lembas/control.sock"));

    let mut stream = Client::connect(&dirs).await.unwrap().subscribe().await.unwrap();
    assert!(
        matches!(next_of(&mut stream, Some).await, Pushed::Status(_)),
        "the status comes first"
    );
    let mut link = linked(&peer, WAIT).await.unwrap();
    next_of(&mut stream, |p| match p {
        Pushed::Status(s) if s.link == LinkState::Linked => Some(()),
        _ => None,
    })
    .await;

    let session = link.new_session(&work, "manual", WAIT).await.unwrap();
    peer.model().push(ModelReply::tool_call(
        "call_tray",
        "write",
        json!({ "path": "tray.txt", "content": "ok" }),
    ));
    peer.model().push(ModelReply::text("Written."));
    let id = link.prompt(&session, "write").await.unwrap();
    link.recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let asked = next_of(&mut stream, |p| match p {
        Pushed::Event(DeviceEvent::ApprovalAsked { tool_call_id, .. }) => Some(tool_call_id),
        _ => None,
    })
    .await;
    assert_eq!(asked, "call_tray");

    // Answered from another connection, as the tray's card button would.
    let mut calls = Client::connect(&dirs).await.unwrap();
    let pending = calls.approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].id.as_str(), pending[0].session_id.as_str()),
        ("call_tray", session.as_str())
    );
    let answered = calls.answer("call_tray", ApprovalOption::Once).await.unwrap();
    assert_eq!(answered.session_id, session);
    match calls.answer("call_tray", ApprovalOption::Deny).await {
        Err(CallError::Rpc(e)) => assert_eq!(e.data, Some(json!({ "reason": "not_open" })), "{e}"),
        other => panic!("a second answer is refused: {other:?}"),
    }
    let settled = next_of(&mut stream, |p| match p {
        Pushed::Event(DeviceEvent::ApprovalSettled { outcome, .. }) => Some(outcome),
        _ => None,
    })
    .await;
    assert_eq!(settled, "allowed once");
    let answered_by = next_of(&mut stream, |p| match p {
        Pushed::Event(DeviceEvent::ToolCall { answered_by, .. }) => Some(answered_by),
        _ => None,
    })
    .await;
    assert_eq!(answered_by.as_deref(), Some("desktop"));
    link.recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    let answer = link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(std::fs::read_to_string(work.join("tray.txt")).unwrap(), "ok");
    // A subscribe whose streams are not yes or no is refused, and the connection goes on.
    match calls.call("subscribe", json!({ "sessions": "yes" })).await {
        Err(CallError::Rpc(e)) => assert_eq!(e.code, -32602, "{e}"),
        other => panic!("malformed streams are refused: {other:?}"),
    }
    assert_eq!(calls.sessions().await.unwrap()[0].id, session);

    runtime.stop().await;
    assert!(
        !control::socket_path(&dirs).exists(),
        "the socket goes with the runtime"
    );
    assert!(matches!(
        Client::connect(&dirs).await,
        Err(ConnectError::NotRunning)
    ));
    // Whatever was still queued comes out, then the stream ends with the runtime.
    let ended = tokio::time::timeout(WAIT, async { while stream.next().await.is_some() {} }).await;
    assert!(ended.is_ok(), "the stream ends with the runtime");
}
