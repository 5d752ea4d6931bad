//! The peer's HTTP API over a real socket, with a plain HTTP/1.1 GET.

mod fake_device;

use fake_device::http_get;
use lembas_peer::{Peer, PeerConfig, default_instance, default_models};
use serde_json::json;

async fn peer() -> Peer {
    Peer::start(PeerConfig::with_token("right-token")).await.unwrap()
}

#[tokio::test]
async fn discovery_needs_no_token_and_says_protocol_3() {
    let peer = peer().await;
    let (status, body) = http_get(&peer.url(), "/.well-known/lembas.json", None).await;
    assert_eq!(status, 200);
    assert_eq!(body["protocol"], 3);
    assert_eq!(body["protocols"], json!([3]));
    assert_eq!(body["version"], "2.0.0");
}

#[tokio::test]
async fn a_protocol_2_server_discovery_says_1_and_1_2() {
    let peer = Peer::start(PeerConfig::with_token("right-token").protocol_2_server())
        .await
        .unwrap();
    let (status, body) = http_get(&peer.url(), "/.well-known/lembas.json", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (body["protocol"].clone(), body["protocols"].clone()),
        (json!(1), json!([1, 2]))
    );
    assert_eq!(body["version"], "1.9.0");
}

#[tokio::test]
async fn instance_needs_the_token() {
    let peer = peer().await;
    for token in [None, Some("wrong-token")] {
        let (status, body) = http_get(&peer.url(), "/api/v1/instance", token).await;
        assert_eq!(status, 401, "{token:?}");
        assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
    }
    let (status, body) = http_get(&peer.url(), "/api/v1/instance", Some("right-token")).await;
    assert_eq!(status, 200);
    assert_eq!(body, default_instance());
    assert_eq!(body["scope"], "models memory link");
    assert_eq!(body["connection"], "example");
}

#[tokio::test]
async fn instance_is_404_when_none_whatever_the_token() {
    let peer = Peer::start(PeerConfig::with_token("right-token").without_instance())
        .await
        .unwrap();
    for token in [None, Some("right-token")] {
        let (status, body) = http_get(&peer.url(), "/api/v1/instance", token).await;
        assert_eq!(status, 404);
        assert_eq!(body["detail"], "Not Found");
    }
}

#[tokio::test]
async fn models_need_the_token_and_list_two_chat_models_and_one_embedding_model() {
    let peer = peer().await;
    let (status, body) = http_get(&peer.url(), "/v1/models", Some("wrong-token")).await;
    assert_eq!(status, 401);
    assert!(body["detail"].is_string());
    let (status, body) = http_get(&peer.url(), "/v1/models", Some("right-token")).await;
    assert_eq!(status, 200);
    assert_eq!(body, default_models());
    assert_eq!(body["object"], "list");
    let kinds: Vec<_> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].clone())
        .collect();
    assert_eq!(kinds, [json!("chat"), json!("chat"), json!("embedding")]);
}

#[tokio::test]
async fn set_config_changes_what_is_served_and_every_request_is_logged() {
    let peer = peer().await;
    http_get(&peer.url(), "/v1/models", Some("right-token")).await;
    peer.set_config(|config| {
        config.models = json!({ "object": "list", "data": [{ "id": "only" }] });
        config.token = "new-token".to_string();
    });
    assert_eq!(
        http_get(&peer.url(), "/v1/models", Some("right-token")).await.0,
        401
    );
    let (status, body) = http_get(&peer.url(), "/v1/models", Some("new-token")).await;
    assert_eq!((status, body["data"][0]["id"].clone()), (200, json!("only")));
    assert_eq!(http_get(&peer.url(), "/no/such/path?x=1", None).await.0, 404);
    let log: Vec<(String, String, u16)> = peer.http_log();
    let expected = [
        ("GET", "/v1/models", 200),
        ("GET", "/v1/models", 401),
        ("GET", "/v1/models", 200),
        ("GET", "/no/such/path", 404),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(m, p, s)| (m.to_string(), p.to_string(), *s))
        .collect();
    assert_eq!(log, expected);
}
