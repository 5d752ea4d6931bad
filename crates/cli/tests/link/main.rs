//! The device link end to end: the real `lembas service run` against the reference peer.

#[path = "../common/mod.rs"]
mod common;
mod proxy;

use common::*;
use lembas_peer::{Peer, PeerConfig};
use lembas_protocol::{Capability, Direction, LinkMethod, MethodKind};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

async fn peer() -> Peer {
    store_token();
    Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn hello_first_then_initialize_as_the_spec_shows() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    assert_eq!(
        link.headers.get("authorization").and_then(|h| h.to_str().ok()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let hello = link.hello(WAIT).await.unwrap();
    let p = &hello;
    assert_eq!(p["protocol"], 3);
    assert_eq!(p["harness_spec"], "3.5.0");
    assert_eq!(
        p["limits"],
        json!({ "roots": [], "max_mode": "edit", "require_trust": true, "scheduled": false })
    );
    assert!(p["device"]["host"].is_string() && p["device"]["platform"] == std::env::consts::OS);
    let init = link.initialize(WAIT).await.unwrap();
    validate_acp("InitializeResponse", &init).unwrap();
    assert_eq!(init["protocolVersion"], 1);
    let lembas = &init["_meta"]["lembas"];
    assert_eq!(lembas["protocol"], 3);
    assert_eq!(lembas["harness_spec"], "3.5.0");
    assert_eq!(lembas["connection"], "example");
    assert_eq!(
        lembas["limits"],
        json!({ "roots": [], "max_mode": "edit", "scheduled": false })
    );
    // The list is the device's promise: every name one the protocol knows, once, and the shells
    // absent while terminals are off (the default).
    let listed: Vec<Capability> = serde_json::from_value(lembas["capabilities"].clone())
        .unwrap_or_else(|e| panic!("a capability this protocol does not name: {e}"));
    let mut once = listed.clone();
    once.dedup();
    assert_eq!(once.len(), listed.len(), "{listed:?}");
    assert!(listed.contains(&Capability::Sessions) && listed.contains(&Capability::Directories));
    assert!(!listed.contains(&Capability::Terminal) && !listed.contains(&Capability::Shell));
    // And it is kept: a method of a listed capability is served (bad params at worst), one of a
    // capability not listed is -32601.
    for method in LinkMethod::ALL.iter().filter(|m| {
        m.direction() == Direction::ToDevice
            && m.kind() == MethodKind::Request
            && **m != LinkMethod::Initialize
    }) {
        let answer = link.request(method.name(), json!({}), WAIT).await.unwrap();
        // An editor's own (session/load, session/list) are not the link's.
        let offered = method.capability().is_none_or(|c| listed.contains(&c)) && !method.editor_only();
        assert_eq!(
            answer["error"]["code"] != json!(-32601),
            offered,
            "{method} (capability {:?}): {answer}",
            method.capability()
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_answers_and_keeps_the_link() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    for (frame, code) in [
        ("{not json", -32700),
        ("[]", -32600),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#, -32600),
        (r#"{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}"#, -32600),
    ] {
        link.send_raw(frame.to_string()).await.unwrap();
        let answer = link.recv(WAIT).await.unwrap();
        assert_eq!(answer["error"]["code"], code, "{frame}: {answer}");
        assert_eq!(answer["id"], Value::Null);
        assert!(answer["error"]["message"].as_str().unwrap().len() > 10);
    }
    let unknown = link.request("_lembas/nonsense", json!({}), WAIT).await.unwrap();
    assert_eq!(unknown["error"]["code"], -32601);
    let session = link
        .request("session/new", json!({ "cwd": "/" }), WAIT)
        .await
        .unwrap();
    assert_eq!(
        session["error"]["code"], -32602,
        "remote work is off, so no folder is accepted: {session}"
    );
    let bad = link
        .request("_lembas/directories", json!({ "path": 42 }), WAIT)
        .await
        .unwrap();
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("_lembas/directories")
    );
    // Still linked: a good request is answered on the same link.
    let places = link
        .request("_lembas/directories", json!({}), WAIT)
        .await
        .unwrap();
    assert_eq!(places["result"], json!({ "path": "", "places": [] }));
    // Fields it does not read are passed over, as every method does.
    let newer = link
        .request(
            "_lembas/directories",
            json!({ "depth": 2, "_meta": { "lembas": {} } }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(newer["result"], places["result"], "{newer}");
    assert_eq!(peer.links_accepted(), 1);
}

/// A request answered from memory is answered by the link's reader itself, straight onto the
/// socket when the writer is idle; answers from handlers' own tasks are queued meanwhile. However
/// the two mix, no quick answer overtakes one read before it, and none is lost.
#[tokio::test(flavor = "multi_thread")]
async fn quick_answers_keep_their_order_among_queued_ones() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    let (mut quick, mut tasked) = (Vec::new(), Vec::new());
    for i in 0..600 {
        if i % 3 == 0 {
            tasked.push(link.send_request("_lembas/directories", json!({})).await.unwrap());
        }
        quick.push(link.send_request("_lembas/nonsense", json!({})).await.unwrap());
    }
    let mut answers = Vec::new();
    while answers.len() < quick.len() + tasked.len() {
        let message = link.recv(WAIT).await.unwrap();
        if message.get("method").is_none() {
            answers.push(message);
        }
    }
    let ids = |of: &dyn Fn(&Value) -> bool| -> Vec<u64> {
        answers
            .iter()
            .filter(|m| of(m))
            .map(|m| m["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(
        ids(&|m| m["error"]["code"] == -32601),
        quick,
        "quick answers in the order read"
    );
    let mut listed = ids(&|m| m["result"]["places"].is_array());
    listed.sort_unstable();
    assert_eq!(listed, tasked);
}

#[tokio::test(flavor = "multi_thread")]
async fn directories_follow_roots_and_trust() {
    let peer = peer().await;
    let home = Home::new();
    let work = home.path().join("work");
    std::fs::create_dir_all(work.join("proj")).unwrap();
    std::fs::create_dir_all(work.join("loose")).unwrap();
    home.config_for(
        &peer.url(),
        &format!(
            "remote:\n  enabled: true\n  roots:\n    - {}\ntrusted:\n  - {}\n",
            work.display(),
            work.join("proj").display()
        ),
    );
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    let hello = link.hello(WAIT).await.unwrap();
    assert_eq!(hello["limits"]["roots"], json!([work.display().to_string()]));
    let listing = link
        .request("_lembas/directories", json!({ "path": work }), WAIT)
        .await
        .unwrap();
    let entries = listing["result"]["entries"].as_array().unwrap().clone();
    assert_eq!(entries.len(), 2, "{listing}");
    assert_eq!(
        (entries[0]["name"].clone(), entries[0]["accepted"].clone()),
        (json!("loose"), json!(false))
    );
    assert!(
        entries[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not in a trusted project")
    );
    assert_eq!(
        (entries[1]["name"].clone(), entries[1]["accepted"].clone()),
        (json!("proj"), json!(true))
    );
    let outside = link
        .request("_lembas/directories", json!({ "path": home.path() }), WAIT)
        .await
        .unwrap();
    assert_eq!(outside["error"]["code"], -32602);
    assert!(
        outside["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outside the folders")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn close_4400_stops_without_redial() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let mut service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.close(4400, "update LLeMbas CLI to 2.0").await;
    let status = service.wait_exit(WAIT).expect("the service stops on 4400");
    assert!(!status.success());
    assert!(service.log().contains("needs updating"), "{}", service.log());
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(peer.links_accepted(), 1, "no redial after 4400");
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_token_stops_and_says_log_in_again() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token("another-token"))
        .await
        .unwrap();
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let mut service = home.service();
    let status = service.wait_exit(WAIT).expect("the service stops on 401");
    assert!(!status.success());
    let log = service.log();
    assert!(
        log.contains("refused this device's token") && log.contains("lembas login"),
        "{log}"
    );
    assert!(!log.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_older_server_is_named_word_for_word() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN).protocol_2_server())
        .await
        .unwrap();
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let mut service = home.service();
    assert!(!service.wait_exit(WAIT).expect("stops").success());
    let version = PeerConfig::with_token(TOKEN).protocol_2_server().discovery["version"]
        .as_str()
        .unwrap()
        .to_string();
    let sentence = format!(
        "{} runs LLeMbas {version}, which speaks link protocol 1 and 2; this LLeMbas CLI needs a LLeMbas 2.0 server (protocol 3) — update the server, or use LLeMbas CLI 1.x with it",
        peer.url()
    );
    assert!(service.log().contains(&sentence), "{}", service.log());
    assert_eq!(peer.links_accepted(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn drops_are_redialled() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.drop_tcp();
    let mut link = peer
        .next_link(WAIT)
        .await
        .expect("redialled after a dropped connection");
    link.hello(WAIT).await.unwrap();
    link.close(1011, "server restarting").await;
    let mut link = peer
        .next_link(WAIT)
        .await
        .expect("redialled after a close that is not 4400");
    link.hello(WAIT).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_link_is_noticed_by_its_pings() {
    let peer = peer().await;
    let proxy = Proxy::start(peer.address()).await;
    let home = Home::new();
    home.config_for(
        &proxy.url(),
        "  ping_interval_ms: 200\n  dead_after_missed_pings: 2\n",
    );
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    // Quiet but alive for a while: pings keep it up.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(peer.links_accepted(), 1);
    proxy.freeze();
    let again = peer.next_link(WAIT).await;
    let mut again =
        again.unwrap_or_else(|e| panic!("not redialled after going silent ({e}): {}", service.log()));
    again.hello(WAIT).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn new_limits_redial_at_once() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    assert_eq!(link.hello(WAIT).await.unwrap()["limits"]["scheduled"], false);
    let text = std::fs::read_to_string(home.config()).unwrap();
    home.write_config(&format!("{text}remote:\n  scheduled: true\n"));
    let closed = link.closed(WAIT).await.unwrap();
    assert_eq!(closed.map(|c| c.0), Some(1000));
    let mut link = peer.next_link(WAIT).await.unwrap();
    assert_eq!(link.hello(WAIT).await.unwrap()["limits"]["scheduled"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_closes_with_1000_and_exits_0() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let mut service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    service.signal(libc::SIGTERM);
    assert_eq!(link.closed(WAIT).await.unwrap().map(|c| c.0), Some(1000));
    assert!(service.wait_exit(WAIT).expect("exits").success());
}

#[tokio::test(flavor = "multi_thread")]
async fn one_device_per_user_and_status_from_another_process() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let second = home.run(&["service", "run"]);
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains(&format!("pid {}", service.pid())), "{err}");
    let mut last = Value::Null;
    let linked = eventually(WAIT, || {
        let out = home.run(&["status", "--json"]);
        last = serde_json::from_slice(&out.stdout).unwrap_or_default();
        last["running"] == true
            && last["status"]["state"] == "linked"
            && last["status"]["server"] == peer.url()
    });
    assert!(linked, "{last}");
    let out = home.run(&["status", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"]["limits"]["max_mode"], "edit");
    let text = String::from_utf8_lossy(&home.run(&["status"]).stdout).to_string();
    assert!(text.contains("Linked to example"), "{text}");
}

/// `lembas status` (and the tray's poll) holds the lock for an instant to see who holds it; a service
/// starting in that instant waits it out instead of saying another device runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_brief_look_at_the_lock_does_not_stop_a_start() {
    let peer = peer().await;
    let home = Home::new();
    home.config_for(&peer.url(), "");
    std::fs::create_dir_all(home.state()).unwrap();
    let look = std::fs::File::create(home.state().join("device.lock")).unwrap();
    look.lock_shared().unwrap();
    let mut service = home.service();
    std::thread::sleep(Duration::from_millis(150));
    drop(look);
    let linked = peer.next_link(WAIT).await;
    assert!(linked.is_ok(), "{}", service.log());
    // A status probe meanwhile sees the service, and a second start is still refused.
    let status: Value = serde_json::from_slice(&home.run(&["status", "--json"]).stdout).unwrap();
    assert_eq!(status["running"], true, "{status}");
    assert!(!home.run(&["service", "run"]).status.success());
    service.signal(libc::SIGTERM);
    assert!(
        service.wait_exit(WAIT).is_some_and(|s| s.success()),
        "{}",
        service.log()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn not_logged_in_says_how_to_log_in() {
    let home = Home::new();
    let out = home.run(&["service", "run"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Not logged in") && err.contains("lembas login --token-stdin"),
        "{err}"
    );
}

/// `lembas service run` in a new home configured for `peer`, linked past hello and initialize.
async fn service_linked(peer: &Peer) -> (Home, Service, lembas_peer::LinkHandle) {
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    (home, service, link)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_is_nowhere_but_the_keychain() {
    let peer = peer().await;
    let (home, service, _link) = service_linked(&peer).await;
    let needle = TOKEN.as_bytes();
    let contains = |hay: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    assert!(!contains(&proc_file(service.pid(), "cmdline")));
    assert!(!contains(&proc_file(service.pid(), "environ")));
    for file in files_under(&home.path()) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(!contains(&bytes), "the token is in {}", file.display());
    }
}

/// Today's log file of `lembas service run` in a home.
fn log_file(home: &Home) -> std::path::PathBuf {
    home.state()
        .join("logs")
        .join(format!("service.{}.log", lembas_device::utc::today()))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_service_keeps_a_log_file_and_runs_on_without_one() {
    let peer = peer().await;
    let (home, service, _link) = service_linked(&peer).await;
    // What it says on standard error is in the file too, without colour codes.
    let first = service.log().lines().next().unwrap_or_default().to_string();
    assert!(!first.is_empty(), "the service said nothing");
    let file = std::fs::read_to_string(log_file(&home)).expect("today's log file");
    assert!(
        file.lines().next() == Some(first.as_str()),
        "{first}\n---\n{file}"
    );
    assert!(!file.contains('\u{1b}') && !file.contains(TOKEN));
    drop(service);

    // A file where the log folder should be: one sentence, and the device links all the same.
    let home = Home::new();
    home.config_for(&peer.url(), "");
    std::fs::create_dir_all(home.state()).unwrap();
    std::fs::write(home.state().join("logs"), "").unwrap();
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let log = service.log();
    assert!(
        log.contains("the log cannot be written in") && log.contains("logging to standard error only"),
        "{log}"
    );

    // A file where the whole state folder should be: the device cannot hold its lock there, and
    // says what to do instead of an error number alone.
    let home = Home::new();
    home.config_for(&peer.url(), "");
    std::fs::create_dir_all(home.state().parent().unwrap()).unwrap();
    std::fs::write(home.state(), "").unwrap();
    let mut service = home.service();
    let status = service.wait_exit(WAIT).expect("the service stops");
    assert!(!status.success());
    let log = service.log();
    assert!(
        log.contains("Its folder must be a folder you can write") && log.contains("then start again"),
        "{log}"
    );
}
