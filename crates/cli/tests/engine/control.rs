//! The local control socket of `lembas service run`: `lembas approvals` lists and answers a card by
//! the desktop's path, two subscribers get the same events, a bad line is answered and the socket
//! goes on, another user is refused, and with no runtime the commands say so.

use super::*;
use lembas_peer::ModelReply;
use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// Runs `lembas args` in the home without stalling the runtime's other workers.
fn lembas(home: &Home, args: &[&str]) -> Output {
    tokio::task::block_in_place(|| home.run(args))
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A raw connection to the socket: JSON lines out, JSON lines in.
pub struct Raw {
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    writer: tokio::net::unix::OwnedWriteHalf,
}

impl Raw {
    /// Connected, with the service's control cookie presented (as every client of the person's
    /// does first).
    pub async fn connect(home: &Home) -> Raw {
        let mut raw = Raw::bare(home).await;
        let cookie = std::fs::read_to_string(home.cookie()).unwrap();
        raw.send(&json!({ "jsonrpc": "2.0", "id": "hello", "method": "hello", "params": { "cookie": cookie.trim() } }).to_string())
            .await;
        assert_eq!(
            raw.next().await,
            json!({ "jsonrpc": "2.0", "id": "hello", "result": {} })
        );
        raw
    }
    /// Connected, and nothing said yet: no cookie presented.
    pub async fn bare(home: &Home) -> Raw {
        let stream = UnixStream::connect(home.socket()).await.unwrap();
        let (read, writer) = stream.into_split();
        Raw {
            reader: BufReader::new(read),
            writer,
        }
    }
    pub async fn send(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    pub async fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(WAIT, self.reader.read_line(&mut line))
            .await
            .expect("a line within the wait")
            .unwrap();
        assert!(read > 0, "the socket closed");
        serde_json::from_str(&line).unwrap()
    }
    /// The next message that is not an `event` or `status` notification.
    pub async fn answer(&mut self) -> Value {
        loop {
            let message = self.next().await;
            if message.get("method").is_none() {
                return message;
            }
        }
    }
    /// The next `event` notification of `kind`.
    pub async fn event(&mut self, kind: &str) -> Value {
        loop {
            let message = self.next().await;
            if message["method"] == "event" && message["params"]["kind"] == kind {
                return message["params"].clone();
            }
        }
    }
}

pub async fn socket_ready(home: &Home) {
    let socket = home.socket();
    assert!(
        tokio::task::block_in_place(|| eventually(WAIT, || socket.exists())),
        "the service serves {}",
        socket.display()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_card_is_listed_and_allowed_from_the_shell_and_the_client_is_told() {
    let mut l = linked("").await;
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_shell",
        "write",
        json!({ "path": "from-shell.txt", "content": "yes\n" }),
    ));
    l.model().push(reply_text("Written."));
    let id = l.send_prompt(&session, "write it", "t1").await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();

    // LLeMbas gets the device's card: its headline as the title, the change as ACP's diff.
    let asked = &card["params"]["toolCall"];
    assert_eq!(asked["title"], "Write from-shell.txt", "{card}");
    let written = std::fs::canonicalize(&l.work).unwrap().join("from-shell.txt");
    assert_eq!(
        asked["content"],
        json!([{ "type": "diff", "path": written, "oldText": null, "newText": "yes\n" }]),
        "{card}"
    );
    assert!(
        card["params"]["_meta"]["lembas"].get("purpose").is_none(),
        "the model said none: {card}"
    );
    validate_acp("RequestPermissionRequest", &card["params"]).unwrap();

    let listed = lembas(&l.home, &["approvals", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let listed = stdout_json(&listed);
    let pending = listed.as_array().unwrap();
    assert_eq!(pending.len(), 1, "{listed}");
    let waiting = &pending[0];
    assert_eq!(waiting["id"], "call_shell");
    assert_eq!(waiting["session_id"], session.as_str());
    assert_eq!(waiting["title"], card["params"]["toolCall"]["title"]);
    assert_eq!(waiting["reason"], card["params"]["_meta"]["lembas"]["reason"]);
    assert_eq!(
        waiting["diff"],
        json!({ "path": "from-shell.txt", "old_text": null, "new_text": "yes\n" })
    );
    // The device's own diff against the disk (the file is new: all of it added).
    assert_eq!(
        waiting["unified_diff"],
        "--- a/from-shell.txt\n+++ b/from-shell.txt\n@@ -0,0 +1 @@\n+yes"
    );
    assert!(waiting["waiting_s"].as_u64().unwrap() < 20, "{waiting}");
    assert!(waiting["scheduled"].is_null());
    // What the device says of it, beside the request: the chat, its folder, when it is denied.
    assert_eq!(waiting["headline"], "Write from-shell.txt", "{waiting}");
    assert_eq!(waiting["session_title"], "write it");
    assert_eq!(waiting["risks"], json!(["writes"]));
    // The folder whole (a face shortens it), the headline in a person's words.
    let work = std::fs::canonicalize(&l.work).unwrap();
    assert_eq!(waiting["cwd"], work.display().to_string(), "{waiting}");
    let deadline = waiting["deadline_ms"].as_u64().unwrap();
    let asked = waiting["asked_ms"].as_u64().unwrap();
    assert!(deadline > asked, "{waiting}");
    let text = lembas(&l.home, &["approvals"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("call_shell") && text.contains("  +yes\n"), "{text}");
    assert!(
        text.contains(" in ~/work\n"),
        "the text shortens the folder: {text}"
    );

    let allowed = lembas(&l.home, &["approvals", "allow", "call_shell"]);
    assert!(allowed.status.success(), "{allowed:?}");
    let settled = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        settled["params"],
        json!({ "sessionId": session, "toolCallId": "call_shell" })
    );
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(l.work.join("from-shell.txt")).unwrap(),
        "yes\n"
    );

    // Already answered: a clear error and a failing exit, in both forms.
    let again = lembas(&l.home, &["approvals", "deny", "call_shell"]);
    assert!(!again.status.success());
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("No approval call_shell waits"), "{said}");
    let again = lembas(&l.home, &["approvals", "allow", "call_shell", "--json"]);
    assert!(!again.status.success());
    assert_eq!(stdout_json(&again)["event"], "error");
    assert_eq!(stdout_json(&lembas(&l.home, &["approvals", "--json"])), json!([]));
    // The activity (through the socket) says who answered.
    let answered_here = tokio::task::block_in_place(|| {
        eventually(WAIT, || {
            let activity = stdout_json(&l.home.run(&["activity", "--json"]));
            activity.as_array().is_some_and(|lines| {
                lines
                    .iter()
                    .any(|line| line["kind"] == "tool_call" && line["answered_by"] == "desktop")
            })
        })
    });
    assert!(
        answered_here,
        "{}",
        stdout_json(&lembas(&l.home, &["activity", "--json"]))
    );
}

/// `lembas approvals allow --for-chat` allows what the card's "always" covers for the rest of the
/// chat: the next write of the same chat does not ask.
#[tokio::test(flavor = "multi_thread")]
async fn allowed_for_the_chat_from_the_shell_the_next_write_does_not_ask() {
    let mut l = linked("").await;
    let session = l.new_session("manual").await;
    two_writes(&l);
    let id = l.send_prompt(&session, "write two", "t1").await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let allowed = lembas(&l.home, &["approvals", "allow", "call_1", "--for-chat", "--json"]);
    assert!(allowed.status.success(), "{allowed:?}");
    assert_eq!(stdout_json(&allowed)["answer"], "allow_for_chat");
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(std::fs::read_to_string(l.work.join("b.txt")).unwrap(), "b");
    assert_eq!(cards_asked(&l.link), 1, "the second write did not ask");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_subscribers_get_the_stream_and_a_bad_line_is_answered() {
    let mut l = linked("").await;
    socket_ready(&l.home).await;
    let socket = l.home.socket();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(socket.parent().unwrap()), 0o700);

    let mut first = Raw::connect(&l.home).await;
    let mut second = Raw::connect(&l.home).await;
    for (n, raw) in [&mut first, &mut second].into_iter().enumerate() {
        raw.send(&format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"subscribe"}}"#))
            .await;
        assert_eq!(
            raw.next().await,
            json!({ "jsonrpc": "2.0", "id": n, "result": {} })
        );
        let status = raw.next().await;
        assert_eq!(status["method"], "status");
        assert_eq!(status["params"]["state"], "linked", "{status}");
    }
    let session = l.new_session("manual").await;
    for raw in [&mut first, &mut second] {
        let opened = raw.event("session_opened").await;
        assert_eq!(opened["session_id"], session.as_str());
    }

    // Bad lines get an error and the connection goes on serving.
    first.send("this is not json").await;
    let parse = first.answer().await;
    assert_eq!(
        (parse["id"].clone(), parse["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );
    first.send(r#"[1,2]"#).await;
    assert_eq!(first.answer().await["error"]["code"], -32600);
    first
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"status","pad":"{}"}}"#,
            "x".repeat(70_000)
        ))
        .await;
    assert_eq!(first.answer().await["error"]["code"], -32600, "a line too long");
    first
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"approvals/nope"}"#)
        .await;
    let unknown = first.answer().await;
    assert_eq!(
        (unknown["id"].clone(), unknown["error"]["code"].clone()),
        (json!(4), json!(-32601))
    );
    first
        .send(r#"{"jsonrpc":"2.0","id":5,"method":"approvals/answer","params":{"id":3}}"#)
        .await;
    assert_eq!(first.answer().await["error"]["code"], -32602);
    first.send(r#"{"jsonrpc":"2.0","id":6,"method":"status"}"#).await;
    let status = first.answer().await;
    assert_eq!(status["id"], 6);
    assert_eq!(status["result"]["running"], true);
    assert_eq!(status["result"]["status"]["state"], "linked", "{status}");
    let cli = stdout_json(&lembas(&l.home, &["status", "--json"]));
    assert_eq!(
        (cli["running"].clone(), cli["status"]["state"].clone()),
        (json!(true), json!("linked"))
    );

    // Stop all remote work: off in the config, and the link ends at once (both subscribers see it).
    second
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"remote/stop"}"#)
        .await;
    assert_eq!(
        second.answer().await["result"],
        json!({ "remote_enabled": false, "stopped_turns": 0 })
    );
    let remote = stdout_json(&lembas(&l.home, &["remote", "list", "--json"]));
    assert_eq!(remote["remote"]["enabled"], false, "{remote}");
    for raw in [&mut first, &mut second] {
        let link = raw.event("link").await;
        assert_ne!(link["link"]["state"], "linked", "{link}");
    }
    // The device dials again at once, with remote work off.
    let _relinked = relink(&l.peer).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_without_the_control_cookie_is_refused() {
    let l = linked("").await;
    socket_ready(&l.home).await;
    let cookie = l.home.cookie();
    assert_eq!(
        std::fs::metadata(&cookie).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let config = std::fs::read_to_string(l.home.config()).unwrap();

    // What a command a model runs could try: the socket is reachable, the state folder is not.
    let mut bare = Raw::bare(&l.home).await;
    let tries = [
        json!({ "method": "status" }),
        json!({ "method": "settings/change", "params": { "setting": "add_root", "value": "/" } }),
        json!({ "method": "approvals/answer", "params": { "id": "call_1", "answer": "allow" } }),
        json!({ "method": "remote/stop" }),
    ];
    for (n, mut request) in tries.into_iter().enumerate() {
        request["jsonrpc"] = json!("2.0");
        request["id"] = json!(n);
        bare.send(&request.to_string()).await;
        let refused = bare.answer().await;
        assert_eq!(refused["id"], n, "{refused}");
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        assert_eq!(refused["error"]["data"]["reason"], "cookie", "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(&cookie.display().to_string()), "{message}");
    }
    // A wrong cookie is refused as well, and admits nothing after it.
    bare.send(r#"{"jsonrpc":"2.0","id":10,"method":"hello","params":{"cookie":"00"}}"#)
        .await;
    let wrong = bare.answer().await;
    assert_eq!(
        (
            wrong["error"]["code"].clone(),
            wrong["error"]["data"]["reason"].clone()
        ),
        (json!(-32602), json!("cookie")),
        "{wrong}"
    );
    bare.send(r#"{"jsonrpc":"2.0","id":11,"method":"status"}"#).await;
    assert_eq!(bare.answer().await["error"]["data"]["reason"], "cookie");
    assert_eq!(
        std::fs::read_to_string(l.home.config()).unwrap(),
        config,
        "nothing changed"
    );
    let remote = stdout_json(&lembas(&l.home, &["remote", "list", "--json"]));
    assert_eq!(remote["remote"]["enabled"], true, "{remote}");

    // The right cookie on the same connection admits it.
    let right = std::fs::read_to_string(&cookie).unwrap();
    bare.send(
        &json!({ "jsonrpc": "2.0", "id": 12, "method": "hello", "params": { "cookie": right.trim() } })
            .to_string(),
    )
    .await;
    assert_eq!(bare.answer().await["result"], json!({}));
    bare.send(r#"{"jsonrpc":"2.0","id":13,"method":"status"}"#).await;
    assert_eq!(bare.answer().await["result"]["running"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn another_users_process_is_refused() {
    let l = linked("").await;
    socket_ready(&l.home).await;
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: creating a second user needs root (the check is unit-tested in credentials.rs)");
        return;
    }
    let user = "lembasctl";
    let exists = std::process::Command::new("id").args(["-u", user]).output();
    if !exists.as_ref().is_ok_and(|o| o.status.success()) {
        let made = std::process::Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                user,
            ])
            .status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: useradd is not available");
            return;
        }
    }
    let id_of = |flag: &str| -> u32 {
        let out = std::process::Command::new("id")
            .args([flag, user])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    let (uid, gid) = (id_of("-u"), id_of("-g"));
    let as_other = || {
        use std::os::unix::process::CommandExt;
        let mut c = l.home.command(&["approvals", "--json"]);
        c.uid(uid).gid(gid).env("HOME", "/");
        tokio::task::block_in_place(|| c.output().unwrap())
    };
    // As made, the folder (0700) keeps the other user out before the socket is even reached.
    let blocked = as_other();
    assert!(!blocked.status.success(), "{blocked:?}");

    // Even with every mode opened wide, the peer's credentials are checked and refused.
    let widen =
        |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    widen(&l.home.path(), 0o755);
    widen(&l.home.runtime_dir(), 0o755);
    widen(l.home.socket().parent().unwrap(), 0o755);
    widen(&l.home.socket(), 0o777);
    let refused = as_other();
    assert!(!refused.status.success(), "{refused:?}");
    let said = stdout_json(&refused);
    assert_eq!(said["event"], "error");
    assert!(
        said["message"]
            .as_str()
            .unwrap()
            .contains("belongs to another user"),
        "{said}"
    );
    // The runtime goes on serving its own user.
    let own = lembas(&l.home, &["approvals", "--json"]);
    assert!(own.status.success(), "{own:?}");
    assert_eq!(stdout_json(&own), json!([]));
}

#[test]
fn with_no_runtime_the_commands_say_so() {
    let home = Home::new();
    let listed = home.run(&["approvals", "--json"]);
    assert!(listed.status.success());
    assert_eq!(stdout_json(&listed), json!([]));
    let text = String::from_utf8_lossy(&home.run(&["approvals"]).stdout).to_string();
    assert!(text.contains("No LLeMbas device is running"), "{text}");
    let answered = home.run(&["approvals", "allow", "call_x"]);
    assert!(!answered.status.success());
    let said = String::from_utf8_lossy(&answered.stderr);
    assert!(said.contains("No LLeMbas device is running"), "{said}");
    // A socket a dead runtime left behind reads as no runtime, not as an error.
    let dir = home.socket().parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&dir).unwrap();
    drop(std::os::unix::net::UnixListener::bind(home.socket()).unwrap());
    assert!(home.socket().exists());
    let status = home.run(&["status", "--json"]);
    assert!(status.status.success(), "{status:?}");
    assert_eq!(stdout_json(&status)["running"], false);
}

/// `lembas doctor` beside a linked service: every check passes or warns (no tray host on the test
/// bus); with the instance gone, the server check fails with what to do, and the exit is 1.
#[tokio::test(flavor = "multi_thread")]
async fn the_doctor_checks_the_login_the_server_and_the_device() {
    let l = linked("").await;
    socket_ready(&l.home).await;
    let out = lembas(&l.home, &["doctor", "--json"]);
    let checks = stdout_json(&out);
    assert!(out.status.success(), "{checks:#}");
    let level = |name: &str| {
        checks
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {checks:#}"))
            .clone()
    };
    for name in [
        "config", "token", "server", "device", "control", "logs", "sandbox", "d-bus",
    ] {
        assert_eq!(level(name)["level"], "ok", "{name}: {checks:#}");
    }
    assert!(
        level("server")["said"].as_str().unwrap().contains(&l.peer.url()),
        "{checks:#}"
    );
    assert_eq!(level("tray")["level"], "warn", "the test bus has no tray host");
    assert!(
        level("logs")["said"]
            .as_str()
            .unwrap()
            .contains(&l.home.state().join("logs").display().to_string()),
        "{checks:#}"
    );

    let home = l.home;
    l.peer.stop().await;
    let out = tokio::task::block_in_place(|| home.run(&["doctor"]));
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let failed: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed.len(), 1, "{text}");
    assert!(failed[0].contains("server"), "{text}");
    assert!(text.contains("→ Check the address and the network"), "{text}");
}

/// An agent at work is in `lembas status`: how many, and in which folders.
#[tokio::test(flavor = "multi_thread")]
async fn status_says_which_agents_work_and_where() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Stream {
        parts: vec![lembas_peer::Part::Hang],
        finish_reason: "stop".into(),
    });
    let id = l.send_prompt(&session, "think long", "t1").await;
    let working = tokio::task::block_in_place(|| {
        eventually(WAIT, || {
            stdout_json(&l.home.run(&["status", "--json"]))["status"]["agents_working"] == 1
        })
    });
    let status = stdout_json(&lembas(&l.home, &["status", "--json"]));
    assert!(working, "{status}");
    let work = std::fs::canonicalize(&l.work).unwrap();
    assert_eq!(
        status["status"]["working_in"],
        json!([work.display().to_string()])
    );
    let text = String::from_utf8_lossy(&lembas(&l.home, &["status"]).stdout).to_string();
    assert!(
        text.contains(&format!("1 agent is working now, in {}.", work.display())),
        "{text}"
    );
    l.model().release();
    l.link.recv_answer(id, WAIT).await.unwrap();
    let idle = tokio::task::block_in_place(|| {
        eventually(WAIT, || {
            stdout_json(&l.home.run(&["status", "--json"]))["status"]["agents_working"] == 0
        })
    });
    assert!(idle);
}

/// The card LLeMbas shows on the phone is the device's: the headline every face here shows, with
/// the model's own words beside it as their purpose.
#[tokio::test(flavor = "multi_thread")]
async fn a_command_card_is_titled_by_the_device_with_the_models_words_as_its_purpose() {
    let mut l = linked("").await;
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_mk",
        "bash",
        json!({ "command": "mkdir -p made", "description": "Run what you asked" }),
    ));
    l.model().push(reply_text("Not made."));
    let prompt = l.send_prompt(&session, "make it", "t1").await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let params = &card["params"];
    validate_acp("RequestPermissionRequest", params).unwrap();
    assert_eq!(params["toolCall"]["title"], "Run a command in ~/work", "{card}");
    assert_eq!(
        params["_meta"]["lembas"]["purpose"], "Run what you asked",
        "{card}"
    );
    assert_eq!(
        params["toolCall"]["rawInput"]["command"], "mkdir -p made",
        "{card}"
    );
    assert!(
        params["toolCall"].get("content").is_none(),
        "a command has no diff: {card}"
    );
    l.choose(&card, "deny").await;
    let answer = l.link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(!l.work.join("made").exists());
}
