//! The desktop window logs in and out through the running device, over its control socket.

use super::*;

/// One request to the home's running device over its control socket (the desktop window's road).
async fn control_call(home: &Home, method: &str, params: Value) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let stream = tokio::net::UnixStream::connect(home.socket()).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    // The control cookie first, as the window's client presents it.
    let cookie = std::fs::read_to_string(home.cookie()).unwrap();
    let hello =
        json!({ "jsonrpc": "2.0", "id": 0, "method": "hello", "params": { "cookie": cookie.trim() } });
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    write
        .write_all(format!("{hello}\n{request}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    for _ in 0..2 {
        line.clear();
        tokio::time::timeout(WAIT, read.read_line(&mut line))
            .await
            .expect("an answer within the wait")
            .unwrap();
    }
    serde_json::from_str(&line).unwrap()
}

/// The error's JSON-RPC code, `data.reason` and sentence.
fn error_of(answer: &Value) -> (i64, &str, &str) {
    let error = &answer["error"];
    (
        error["code"].as_i64().unwrap_or_default(),
        error["data"]["reason"].as_str().unwrap_or_default(),
        error["message"].as_str().unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_logs_in_and_out_through_the_running_device() {
    let _turn = KEYCHAIN.lock().await;
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let mut service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let server = peer.url();

    // Each refusal with the code the window branches on; the token is never echoed.
    let wrong = control_call(
        &home,
        "login",
        json!({ "server": server, "token": "not-the-token" }),
    )
    .await;
    let (code, reason, message) = error_of(&wrong);
    assert_eq!((code, reason), (-32602, "token_refused"), "{wrong}");
    assert!(
        message.contains(
            "does not accept this token (401): it is mistyped, expired or revoked. Get a new device token"
        ),
        "{message}"
    );
    assert!(!wrong.to_string().contains("not-the-token"), "{wrong}");
    let cases = [
        (json!({ "server": "not a server", "token": TOKEN }), "bad_server"),
        (
            json!({ "server": "http://127.0.0.1:9", "token": TOKEN }),
            "unreachable",
        ),
        (json!({ "server": server, "token": "  " }), "malformed_token"),
        (
            json!({ "server": server, "token": "two words" }),
            "malformed_token",
        ),
    ];
    for (params, code) in cases {
        let answer = control_call(&home, "login", params).await;
        assert_eq!(error_of(&answer).1, code, "{answer}");
        assert!(!answer.to_string().contains("two words"), "{answer}");
    }
    let shapeless = control_call(&home, "login", json!({ "server": server })).await;
    assert_eq!(error_of(&shapeless).0, -32602, "{shapeless}");
    assert!(
        matches!(Keychain::of(&home.dirs()).load(), Ok(t) if t.expose() == TOKEN),
        "a refused login stores nothing"
    );

    // The right token: stored, and the device dials again at once with it.
    let done = control_call(&home, "login", json!({ "server": server, "token": TOKEN })).await;
    let said = done["result"]["message"].as_str().unwrap_or_default();
    assert!(said.starts_with("Logged in again to "), "{done}");
    assert!(said.ends_with("The token is in the OS keychain."), "{said}");
    let mut again = peer.next_link(WAIT).await.unwrap();
    assert_eq!(
        again.headers.get("authorization").and_then(|h| h.to_str().ok()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    again.hello(WAIT).await.unwrap();

    // Logged out through the socket: the login and the token are gone; a headless service then
    // ends, saying how to log in (the desktop's runtime waits for a login instead).
    let out = control_call(&home, "logout", json!({})).await;
    let said = out["result"]["message"].as_str().unwrap_or_default();
    assert!(said.starts_with(&format!("Logged out of {server}")), "{out}");
    assert!(matches!(
        Keychain::of(&home.dirs()).load(),
        Err(KeychainError::Missing)
    ));
    assert_eq!(lembas_device::settings::load(&home.dirs()).unwrap().server, None);
    let ended = tokio::task::block_in_place(|| service.wait_exit(WAIT));
    assert!(ended.is_some_and(|s| !s.success()), "{}", service.log());
    assert!(service.log().contains("Not logged in"), "{}", service.log());
    assert!(
        !contains_token(service.log().as_bytes()),
        "the token is in no log"
    );
    store_token();
}
