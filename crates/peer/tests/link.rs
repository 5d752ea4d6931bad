//! The peer's link, driven by a fake device over a real socket.

mod fake_device;

use fake_device::{Read, WAIT, dial, hello, read, read_json, refused_status, send_json};
use futures_util::SinkExt;
use lembas_peer::{Peer, PeerConfig, UPDATE_CLI_REASON};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;

async fn peer() -> Peer {
    Peer::start(PeerConfig::with_token("right-token")).await.unwrap()
}

fn upgrade_statuses(peer: &Peer) -> Vec<u16> {
    peer.http_log()
        .into_iter()
        .filter(|(_, path, _)| path == "/api/devices/link")
        .map(|(_, _, s)| s)
        .collect()
}

#[tokio::test]
async fn upgrade_without_token_is_refused_with_401() {
    let peer = peer().await;
    let error = dial(&peer.link_url(), None)
        .await
        .expect_err("the dial must be refused");
    assert_eq!(refused_status(error), 401);
    assert_eq!(peer.links_accepted(), 0);
    assert_eq!(upgrade_statuses(&peer), [401]);
    assert!(
        peer.next_link(std::time::Duration::from_millis(200))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn upgrade_with_wrong_token_is_refused_with_401() {
    let peer = peer().await;
    let error = dial(&peer.link_url(), Some("wrong-token"))
        .await
        .expect_err("the dial must be refused");
    assert_eq!(refused_status(error), 401);
    assert_eq!(peer.links_accepted(), 0);
}

#[tokio::test]
async fn upgrade_with_right_token_is_accepted_and_headers_kept() {
    let peer = peer().await;
    let _device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let link = peer.next_link(WAIT).await.unwrap();
    assert_eq!(link.headers.get("authorization").unwrap(), "Bearer right-token");
    assert_eq!(link.headers.get("user-agent").unwrap(), "fake-device/1");
    assert_eq!(peer.links_accepted(), 1);
    assert_eq!(upgrade_statuses(&peer), [101]);
}

#[tokio::test]
async fn hello_then_initialize_round_trip() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(&mut device, hello(3)).await;
    let params = link.hello(WAIT).await.unwrap();
    assert_eq!(params["protocol"], 3);
    assert_eq!(params["device"]["host"], "fake");

    let device_side = tokio::spawn(async move {
        let request = read_json(&mut device).await;
        let answer = json!({
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": { "protocolVersion": 1, "_meta": { "lembas": { "protocol": 3 } } },
        });
        send_json(&mut device, answer).await;
        (request, device)
    });
    let result = link.initialize(WAIT).await.unwrap();
    assert_eq!(result["_meta"]["lembas"]["protocol"], 3);
    let (request, _device) = device_side.await.unwrap();
    assert_eq!(request["jsonrpc"], "2.0");
    assert_eq!(request["method"], "initialize");
    assert_eq!(request["params"]["protocolVersion"], 1);
    assert_eq!(
        request["params"]["clientCapabilities"]["_meta"]["lembas"],
        json!({ "protocol": 3, "show": true })
    );
    assert!(link.faults().is_empty(), "{:?}", link.faults());
    assert_eq!(link.received().len(), 2);
    assert_eq!(link.sent(), [request]);
}

#[tokio::test]
async fn initialize_error_answer_is_an_error() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(&mut device, hello(3)).await;
    link.hello(WAIT).await.unwrap();
    let device_side = tokio::spawn(async move {
        let request = read_json(&mut device).await;
        let answer =
            json!({ "jsonrpc": "2.0", "id": request["id"], "error": { "code": -32603, "message": "boom" } });
        send_json(&mut device, answer).await;
        device
    });
    let error = link.initialize(WAIT).await.unwrap_err();
    assert!(error.to_string().contains("boom"), "{error}");
    let _device = device_side.await.unwrap();
}

#[tokio::test]
async fn hello_saying_protocol_2_is_closed_with_4400_and_the_reason() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(&mut device, hello(2)).await;
    match read(&mut device).await {
        Read::Close(Some((code, reason))) => {
            assert_eq!(code, 4400);
            assert_eq!(reason, UPDATE_CLI_REASON);
        }
        other => panic!("expected close 4400, got {other:?}"),
    }
    // Reading on sends the device's reply to the close; then the peer ends the connection.
    assert!(matches!(read(&mut device).await, Read::Ended(_)));
    let error = link.hello(WAIT).await.unwrap_err().to_string();
    assert!(error.contains("protocol 2") && error.contains("4400"), "{error}");
    assert_eq!(
        link.peer_close(),
        Some((4400, "update LLeMbas CLI to 2.0".to_string()))
    );
    assert_eq!(link.faults().len(), 1);
    // The device's half of the closing handshake echoes the code.
    assert_eq!(link.closed(WAIT).await.unwrap().map(|(code, _)| code), Some(4400));
}

#[tokio::test]
async fn protocol_2_server_closes_a_hello_saying_3() {
    let peer = Peer::start(PeerConfig::with_token("right-token").protocol_2_server())
        .await
        .unwrap();
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(&mut device, hello(3)).await;
    assert!(matches!(read(&mut device).await, Read::Close(Some((4400, _)))));
    assert!(link.hello(WAIT).await.is_err());

    // ... and accepts one saying 2.
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(&mut device, hello(2)).await;
    assert_eq!(link.hello(WAIT).await.unwrap()["protocol"], 2);
}

#[tokio::test]
async fn a_first_message_that_is_not_the_hello_is_a_fault_but_the_link_stays() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(
        &mut device,
        json!({ "jsonrpc": "2.0", "method": "_lembas/event", "params": {} }),
    )
    .await;
    send_json(&mut device, hello(3)).await;
    let error = link.hello(WAIT).await.unwrap_err().to_string();
    assert!(
        error.contains("first message must be the _lembas/hello"),
        "{error}"
    );
    assert_eq!(link.faults().len(), 1);
    assert_eq!(link.recv(WAIT).await.unwrap()["method"], "_lembas/hello");
    assert_eq!(link.peer_close(), None);
}

#[tokio::test]
async fn request_notify_and_recv_keep_order_around_interleaved_notifications() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(&mut device, hello(3)).await;
    link.hello(WAIT).await.unwrap();

    let device_side = tokio::spawn(async move {
        let request = read_json(&mut device).await;
        // Before answering: two notifications and a request of the device's own.
        send_json(
            &mut device,
            json!({ "jsonrpc": "2.0", "method": "n/one", "params": { "k": 1 } }),
        )
        .await;
        send_json(
            &mut device,
            json!({ "jsonrpc": "2.0", "method": "n/two", "params": { "k": 2 } }),
        )
        .await;
        send_json(
            &mut device,
            json!({ "jsonrpc": "2.0", "id": "dev-1", "method": "_lembas/show", "params": {} }),
        )
        .await;
        send_json(
            &mut device,
            json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "ok": true } }),
        )
        .await;
        let notification = read_json(&mut device).await;
        let answer = read_json(&mut device).await;
        (request, notification, answer, device)
    });

    let answer = link.request("x/echo", json!({ "a": 1 }), WAIT).await.unwrap();
    assert_eq!(answer["result"], json!({ "ok": true }));
    assert_eq!(answer["id"], 1);
    // The later one first: the earlier is kept for recv.
    assert_eq!(
        link.recv_notification("n/two", WAIT).await.unwrap()["params"]["k"],
        2
    );
    assert_eq!(link.recv(WAIT).await.unwrap()["method"], "n/one");
    let device_request = link.recv_request("_lembas/show", WAIT).await.unwrap();
    link.notify("session/cancel", json!({ "sessionId": "s" }))
        .await
        .unwrap();
    link.answer(device_request["id"].clone(), json!({ "shown": true }))
        .await
        .unwrap();

    let (request, notification, answer, _device) = device_side.await.unwrap();
    assert_eq!(
        request,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "x/echo", "params": { "a": 1 } })
    );
    assert_eq!(
        notification,
        json!({ "jsonrpc": "2.0", "method": "session/cancel", "params": { "sessionId": "s" } })
    );
    assert_eq!(
        answer,
        json!({ "jsonrpc": "2.0", "id": "dev-1", "result": { "shown": true } })
    );
    let methods: Vec<_> = link.received().iter().map(|m| m["method"].clone()).collect();
    assert_eq!(
        methods,
        [
            json!("_lembas/hello"),
            json!("n/one"),
            json!("n/two"),
            json!("_lembas/show"),
            json!(null)
        ]
    );
    // The next request gets the next id.
    assert!(
        link.request("x/none", json!(null), std::time::Duration::from_millis(100))
            .await
            .is_err()
    );
    assert_eq!(link.sent().last().unwrap()["id"], 2);
}

#[tokio::test]
async fn send_raw_goes_out_as_is_and_a_device_frame_that_is_not_json_is_a_fault() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.send_raw("{not json".to_string()).await.unwrap();
    assert!(matches!(read(&mut device).await, Read::Text(text) if text == "{not json"));
    assert_eq!(link.sent(), [json!("{not json")]);

    device.send(Message::text("also {not json")).await.unwrap();
    let error = link.recv(WAIT).await.unwrap_err().to_string();
    assert!(error.contains("not JSON"), "{error}");
    assert_eq!(link.faults().len(), 1);
    assert!(link.received().is_empty());
}

#[tokio::test]
async fn pings_are_answered() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let _link = peer.next_link(WAIT).await.unwrap();
    device
        .send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    use futures_util::StreamExt;
    let pong = tokio::time::timeout(WAIT, device.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(pong, Message::Pong(b"are you there".to_vec().into()));
}

fn close_of(read: Read) -> Option<(u16, String)> {
    match read {
        Read::Close(close) => close,
        other => panic!("expected a close frame, got {other:?}"),
    }
}

#[tokio::test]
async fn close_with_a_custom_code_is_seen_by_the_device() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let link = peer.next_link(WAIT).await.unwrap();
    let closing = tokio::spawn(link.close(4000, "the examiner is done"));
    assert_eq!(
        close_of(read(&mut device).await),
        Some((4000, "the examiner is done".to_string()))
    );
    // The client's reply completes the handshake; then the stream ends.
    assert!(matches!(read(&mut device).await, Read::Ended(_)));
    closing.await.unwrap();
}

#[tokio::test]
async fn drop_tcp_ends_the_link_without_a_close_frame() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let link = peer.next_link(WAIT).await.unwrap();
    link.drop_tcp();
    match read(&mut device).await {
        Read::Ended(_) => {}
        other => panic!("expected an abrupt end, got {other:?}"),
    }
}

#[tokio::test]
async fn closed_gives_the_device_close_frame_or_none_for_an_abrupt_end() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    send_json(&mut device, hello(3)).await;
    device
        .close(Some(CloseFrame {
            code: 1000.into(),
            reason: "going".into(),
        }))
        .await
        .unwrap();
    assert_eq!(
        link.closed(WAIT).await.unwrap(),
        Some((1000, "going".to_string()))
    );
    // The hello that came first is still there for recv.
    assert_eq!(link.hello(WAIT).await.unwrap()["protocol"], 3);
    let error = link.recv(WAIT).await.unwrap_err().to_string();
    assert!(error.contains("closed the link (1000"), "{error}");
    assert!(link.notify("x", json!({})).await.is_err());

    let device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    drop(device);
    assert_eq!(link.closed(WAIT).await.unwrap(), None);
}

#[tokio::test]
async fn closed_times_out_while_the_link_is_open() {
    let peer = peer().await;
    let _device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    assert!(link.closed(std::time::Duration::from_millis(100)).await.is_err());
}

#[tokio::test]
async fn set_config_switches_to_refusing_the_upgrade_while_running() {
    let peer = peer().await;
    let _first = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    peer.set_config(|config| config.refuse_upgrade = Some(401));
    let error = dial(&peer.link_url(), Some("right-token"))
        .await
        .expect_err("refused now");
    assert_eq!(refused_status(error), 401);
    peer.set_config(|config| config.refuse_upgrade = Some(503));
    let error = dial(&peer.link_url(), Some("right-token"))
        .await
        .expect_err("refused now");
    assert_eq!(refused_status(error), 503);
    assert_eq!(peer.links_accepted(), 1);
    assert_eq!(upgrade_statuses(&peer), [101, 401, 503]);
}

#[tokio::test]
async fn stop_cuts_the_links_and_the_listener() {
    let peer = peer().await;
    let mut device = dial(&peer.link_url(), Some("right-token")).await.unwrap();
    let mut link = peer.next_link(WAIT).await.unwrap();
    let link_url = peer.link_url();
    peer.stop().await;
    assert!(matches!(read(&mut device).await, Read::Ended(_)));
    assert_eq!(link.closed(WAIT).await.unwrap(), None);
    assert!(dial(&link_url, Some("right-token")).await.is_err());
}
