//! The desktop's runtime in the link's final states: not logged in, it keeps its control socket
//! and serves the window (`window/state` says not logged in), a login through the socket links it,
//! a logout brings it back to waiting, still serving. Needs a Secret Service
//! (scripts/with-keyring).

use crate::{WAIT, reaches};
use lembas_device::control::{self, CallError, Client};
use lembas_device::events::LinkState;
use lembas_device::link::AtFinal;
use lembas_device::paths::Dirs;
use lembas_device::runtime::Runtime;
use lembas_peer::{Peer, PeerConfig};
use lembas_testkit::{Home, linked};
use serde_json::{Value, json};

const TOKEN: &str = "desktop-waits-token-41d7";

async fn call(dirs: &Dirs, method: &str, params: Value) -> Result<Value, CallError> {
    let mut client = Client::connect(dirs).await.expect("the socket is served");
    client.call(method, params).await
}

#[tokio::test(flavor = "multi_thread")]
async fn not_logged_in_the_desktop_runtime_serves_its_window_and_logs_in_through_it() {
    let kit = Home::new();
    let dirs = kit.dirs();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let runtime = Runtime::start_with(kit.setup(), control::DESKTOP_HOLDER, AtFinal::Wait).unwrap();
    reaches(&runtime, LinkState::NotLoggedIn).await;

    // Still serving: the window reads its state and sees the login form's case.
    let state = call(&dirs, "window/state", json!({})).await.unwrap();
    assert_eq!(state["link"]["state"], "not_logged_in", "{state}");
    assert_eq!(state["server"], Value::Null);
    assert_eq!(state["held_by"], Value::Null, "its own runtime is not named");
    let refused = call(&dirs, "login", json!({ "server": peer.url(), "token": "wrong" })).await;
    match refused {
        Err(CallError::Rpc(e)) => {
            assert_eq!(e.data, Some(json!({ "reason": "token_refused" })), "{e}")
        }
        other => panic!("a wrong token is refused: {other:?}"),
    }

    // The window's login: the token stored, the server written, the runtime dials and links.
    let done = call(&dirs, "login", json!({ "server": peer.url(), "token": TOKEN }))
        .await
        .unwrap();
    assert!(
        done["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Logged in to"),
        "{done}"
    );
    let _link = linked(&peer, WAIT).await.unwrap();
    reaches(&runtime, LinkState::Linked).await;
    let state = call(&dirs, "window/state", json!({})).await.unwrap();
    assert_eq!(state["link"]["state"], "linked", "{state}");

    // Logged out: not logged in again, and the socket still answers.
    let out = call(&dirs, "logout", json!({})).await.unwrap();
    assert!(
        out["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Logged out of"),
        "{out}"
    );
    reaches(&runtime, LinkState::NotLoggedIn).await;
    let state = call(&dirs, "window/state", json!({})).await.unwrap();
    assert_eq!(state["link"]["state"], "not_logged_in", "{state}");

    runtime.stop().await;
    assert!(
        Client::connect(&dirs).await.is_err(),
        "the socket goes with the runtime"
    );
    peer.stop().await;
}
