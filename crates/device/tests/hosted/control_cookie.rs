//! The control cookie: a runtime writes a fresh one (0600) to its state folder at each start, the
//! person's clients present it and are served, and a connection that does not (what a command a
//! model runs as this user could try) is refused everything: the status, a settings change that
//! would widen the roots, an approval's answer. Needs no keychain: the runtime is not logged in and
//! waits.

use lembas_device::control::{self, Client, ConnectError};
use lembas_device::events::LinkState;
use lembas_device::link::AtFinal;
use lembas_device::paths::Dirs;
use lembas_device::runtime::Runtime;
use lembas_testkit::Home;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::{WAIT, reaches};

/// A connection that speaks to the socket by hand.
struct Raw {
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    writer: tokio::net::unix::OwnedWriteHalf,
    next_id: u64,
}

impl Raw {
    async fn connect(dirs: &Dirs) -> Raw {
        let (read, writer) = UnixStream::connect(control::socket_path(dirs))
            .await
            .unwrap()
            .into_split();
        Raw {
            reader: BufReader::new(read),
            writer,
            next_id: 1,
        }
    }

    /// One request and its answer (the whole message).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.writer
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
        let mut line = String::new();
        tokio::time::timeout(WAIT, self.reader.read_line(&mut line))
            .await
            .expect("an answer within the wait")
            .unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

/// The refusal's code, when `answer` is a refusal for want of the cookie.
fn refused_for_cookie(answer: &Value, cookie: &Path) -> i64 {
    let error = &answer["error"];
    assert_eq!(error["data"]["reason"], "cookie", "{answer}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&cookie.display().to_string())
            && message.contains("only this user's own LLeMbas processes"),
        "{message}"
    );
    error["code"].as_i64().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn only_a_connection_that_presents_the_cookie_is_served() {
    let kit = Home::new();
    let home = kit.path();
    let config = home.join(".config/lembas/config.yaml");
    std::fs::write(&config, "remote:\n  enabled: true\n").unwrap();
    let dirs = kit.dirs();
    let cookie = control::cookie::path(&dirs);
    assert_eq!(cookie, home.join(".local/state/lembas/control.cookie"));

    let runtime = Runtime::start_with(kit.setup(), control::DESKTOP_HOLDER, AtFinal::Wait).unwrap();
    reaches(&runtime, LinkState::NotLoggedIn).await;
    let mode = std::fs::metadata(&cookie).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let first = read(&cookie);
    assert_eq!(first.len(), 64, "32 bytes, in hex");

    // The person's client presents it without being asked to.
    let mut client = Client::connect(&dirs).await.unwrap();
    assert_eq!(client.status().await.unwrap().link, LinkState::NotLoggedIn);

    // A connection that presents nothing is refused everything but hello, and goes on being.
    let mut bare = Raw::connect(&dirs).await;
    let tries = [
        ("status", json!({})),
        ("settings/change", json!({ "setting": "add_root", "value": "/" })),
        ("approvals/answer", json!({ "id": "call_1", "answer": "allow" })),
        ("subscribe", json!({})),
        ("remote/stop", json!({})),
    ];
    for (method, params) in &tries {
        let answer = bare.call(method, params.clone()).await;
        assert_eq!(refused_for_cookie(&answer, &cookie), -32600, "{method}");
    }
    // A wrong cookie, one of another length and none at all are refused too, and admit nothing.
    let mut wrong = first.clone();
    wrong.replace_range(..1, if first.starts_with('0') { "1" } else { "0" });
    for params in [
        json!({ "cookie": wrong }),
        json!({ "cookie": &first[..63] }),
        json!({ "cookie": format!("{first}0") }),
        json!({}),
        json!({ "cookie": first, "also": 1 }),
    ] {
        let answer = bare.call("hello", params.clone()).await;
        assert_eq!(refused_for_cookie(&answer, &cookie), -32602, "{params}");
    }
    for (method, params) in &tries {
        let answer = bare.call(method, params.clone()).await;
        assert_eq!(refused_for_cookie(&answer, &cookie), -32600, "{method}");
    }
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "remote:\n  enabled: true\n",
        "the refused changes changed nothing"
    );

    // The right one admits the same connection.
    let answer = bare.call("hello", json!({ "cookie": first })).await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    let answer = bare.call("status", json!({})).await;
    assert_eq!(answer["result"]["running"], true, "{answer}");

    // A client given a cookie that is not the runtime's is refused, and says so; one that cannot
    // read the file names it.
    let elsewhere = home.join("elsewhere.cookie");
    std::fs::write(&elsewhere, format!("{wrong}\n")).unwrap();
    match Client::connect_control(control::socket_path(&dirs), &elsewhere).await {
        Err(ConnectError::Refused(e)) => {
            assert_eq!(e.data, Some(json!({ "reason": "cookie" })), "{e:?}")
        }
        other => panic!("a wrong cookie is refused: {:?}", other.err()),
    }
    let missing = home.join("missing.cookie");
    match Client::connect_control(control::socket_path(&dirs), &missing).await {
        Err(e @ ConnectError::Cookie { .. }) => {
            let said = e.to_string();
            assert!(
                said.contains(&missing.display().to_string()) && said.contains("No such file"),
                "{said}"
            );
        }
        other => panic!("an unreadable cookie is said: {:?}", other.err()),
    }

    // The next start writes a new cookie: the old one admits nothing.
    drop(client);
    runtime.stop().await;
    let runtime = Runtime::start_with(kit.setup(), control::DESKTOP_HOLDER, AtFinal::Wait).unwrap();
    reaches(&runtime, LinkState::NotLoggedIn).await;
    let second = read(&cookie);
    assert_ne!(second, first, "fresh at each start");
    assert_eq!(
        std::fs::metadata(&cookie).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let mut stale = Raw::connect(&dirs).await;
    let answer = stale.call("hello", json!({ "cookie": first })).await;
    assert_eq!(refused_for_cookie(&answer, &cookie), -32602);
    let mut client = Client::connect(&dirs).await.unwrap();
    assert_eq!(client.status().await.unwrap().link, LinkState::NotLoggedIn);
    runtime.stop().await;
}
