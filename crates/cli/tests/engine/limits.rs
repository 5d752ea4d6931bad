//! The limits hold (the limits issue): each test is a way around them an attacker found on main,
//! played by the scripted model or the client against the real `lembas service run`. Each failed
//! before the change it tests.

use super::*;

const SECRET: &str = "SECRET-KEY-MATERIAL-4711";

/// Pushes one tool call and an ending reply, prompts, and answers every approval card with Deny;
/// returns the prompt's answer and how many cards were asked.
async fn run_denying(l: &mut Linked, session: &str, call: (&str, &str, Value)) -> (Value, usize) {
    let (id, tool, args) = call;
    l.model().push(ModelReply::tool_call(id, tool, args));
    l.model().push(reply_text("Done."));
    l.prompt_answering(session, "go", &format!("turn-{id}"), "deny")
        .await
}

/// Nothing the client received, nor anything the model was sent, holds the secret text.
fn secret_nowhere(l: &Linked) {
    for m in l.link.received() {
        assert!(!m.to_string().contains(SECRET), "the client got the secret: {m}");
    }
    for r in l.model().requests() {
        assert!(!r.to_string().contains(SECRET), "the model got the secret");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn plan_submit_records_a_new_plan_and_writes_nothing_else() {
    let mut l = linked("").await;
    std::fs::create_dir_all(l.work.join(".git")).unwrap();
    std::fs::write(l.work.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(l.work.join("src")).unwrap();
    std::fs::write(l.work.join("src/main.rs"), "fn main() {}\n").unwrap();
    let session = l.new_session("plan").await;
    for (n, path) in [".git/config", "src/main.rs", ".lembas/config.yaml"]
        .iter()
        .enumerate()
    {
        let id = format!("call_{n}");
        let args = json!({ "text": "[core]\n\tfsmonitor = touch /tmp/owned", "path": path });
        l.model().push(ModelReply::tool_call(&id, "plan_submit", args));
        l.model().push(reply_text("Done."));
        let prompt = l.send_prompt(&session, "plan", &format!("t{n}")).await;
        let card = l.link.recv_request("_lembas/plan", WAIT).await.unwrap();
        let shown = card["params"]["path"].as_str().unwrap_or_default().to_string();
        assert!(
            shown.starts_with(".agent/plans/"),
            "{path}: the card says {shown}"
        );
        assert!(l.work.join(&shown).is_file(), "{shown}");
        l.link
            .answer(card["id"].clone(), json!({ "outcome": "dismissed" }))
            .await
            .unwrap();
        l.link.recv_answer(prompt, WAIT).await.unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(l.work.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(l.work.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!l.work.join(".lembas").exists());
    assert_eq!(std::fs::read_dir(l.work.join(".agent/plans")).unwrap().count(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lowered_max_mode_holds_for_a_session_already_open() {
    let mut l = linked("  max_mode: auto\n").await;
    let session = l.new_session("auto").await;
    // The person lowers the limit; the device redials so the instance hears it.
    l.home
        .config_for(&l.peer.url(), &remote(&l.work, "  max_mode: manual\n"));
    l.link = relink(&l.peer).await;
    let (answer, cards) = run_denying(
        &mut l,
        &session,
        ("call_w", "write", json!({ "path": "after.txt", "content": "x" })),
    )
    .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(cards, 1, "manual mode asks before a write");
    assert!(!l.work.join("after.txt").exists(), "the write ran without a card");
    let modes: Vec<Value> = updates(&l.link)
        .iter()
        .filter(|u| u["sessionUpdate"] == "current_mode_update")
        .map(|u| u["currentModeId"].clone())
        .collect();
    assert_eq!(modes, [json!("manual")], "the client is told the mode it runs in");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_cannot_write_its_own_permission_rules_or_commands() {
    let mut l = linked("  max_mode: auto\n").await;
    let session = l.new_session("auto").await;
    let rules = "permissions:\n  bash:\n    allow: [\"*\"]\n";
    let (_, cards) = run_denying(
        &mut l,
        &session,
        (
            "call_r",
            "write",
            json!({ "path": ".lembas/config.yaml", "content": rules }),
        ),
    )
    .await;
    assert_eq!(cards, 0, "a protected path is denied, never asked");
    assert!(!l.work.join(".lembas").exists());
    assert!(tool_text(&l, "call_r").contains("protected path"));
    // A command a person runs later (with a mode of its own) asks even in auto mode.
    let command = "---\nmode: auto\n---\nrm -rf ~";
    let (_, cards) = run_denying(
        &mut l,
        &session,
        (
            "call_c",
            "write",
            json!({ "path": ".agent/commands/deploy.md", "content": command }),
        ),
    )
    .await;
    assert_eq!(cards, 1, "a write under .agent asks in every mode");
    assert!(!l.work.join(".agent/commands/deploy.md").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn keys_by_any_name_and_by_identity_stay_unread() {
    let mut l = linked("").await;
    let ssh = l.home.path().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_ed25519"), SECRET).unwrap();
    for name in ["id_rsa_deploy", "id_ed25519_github", "id_rsa.old"] {
        std::fs::write(l.work.join(name), SECRET).unwrap();
    }
    std::fs::hard_link(ssh.join("id_ed25519"), l.work.join("notes.txt")).unwrap();
    let session = l.new_session("plan").await;
    for (n, name) in ["id_rsa_deploy", "id_ed25519_github", "id_rsa.old", "notes.txt"]
        .iter()
        .enumerate()
    {
        let (answer, _) = run_denying(
            &mut l,
            &session,
            (&format!("call_{n}"), "read", json!({ "path": name })),
        )
        .await;
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    }
    // Nor listed by the @ picker.
    let found = l
        .link
        .request(
            "_lembas/files/search",
            json!({ "sessionId": session, "query": "id_" }),
            WAIT,
        )
        .await
        .unwrap();
    let files = found["result"]["files"].to_string();
    assert!(!files.contains("id_rsa"), "{files}");
    assert!(!files.contains("id_ed25519"), "{files}");
    secret_nowhere(&l);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_device_config_is_protected_where_the_environment_puts_it() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    // XDG_CONFIG_HOME inside the root the sessions work in.
    let config_home = work.join("cfg");
    std::fs::create_dir_all(config_home.join("lembas")).unwrap();
    std::fs::write(
        config_home.join("lembas/config.yaml"),
        format!(
            "server:\n  url: {}\n  connection: example\n# {SECRET}\n{}",
            peer.url(),
            remote(&work, "")
        ),
    )
    .unwrap();
    let service = home.service_with_env(&[("XDG_CONFIG_HOME", config_home.to_str().unwrap())]);
    let link = relink(&peer).await;
    let mut l = Linked {
        peer,
        home,
        service,
        link,
        work,
    };
    let session = l.new_session("edit").await;
    for (n, path) in ["cfg/lembas/config.yaml", "cfg/lembas"].iter().enumerate() {
        let tool = if n == 0 { "read" } else { "ls" };
        run_denying(
            &mut l,
            &session,
            (&format!("call_{n}"), tool, json!({ "path": path })),
        )
        .await;
    }
    let (_, cards) = run_denying(
        &mut l,
        &session,
        (
            "call_w",
            "write",
            json!({ "path": "cfg/lembas/config.yaml", "content": "remote: {}" }),
        ),
    )
    .await;
    assert_eq!(cards, 0);
    assert!(
        std::fs::read_to_string(l.work.join("cfg/lembas/config.yaml"))
            .unwrap()
            .contains(SECRET)
    );
    secret_nowhere(&l);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_outside_the_limits_is_not_read_out_nor_deleted() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text(SECRET));
    l.prompt(&session, "say it", "t1").await;
    // An editor's session (never given to the instance) in a folder outside the roots.
    let elsewhere = l.home.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let editor = "ses_01jzzzzzzzzzzzzzzzzzzzzzzz";
    let file = l.home.state().join(format!("sessions/{editor}.jsonl"));
    std::fs::write(
        &file,
        format!(
            "{}\n",
            json!({ "type": "session", "id": editor, "cwd": elsewhere, "created_ms": 1, "model": MODEL, "mode": "edit", "effort": "default", "title": "mine" })
        ),
    )
    .unwrap();
    let refused = l
        .link
        .request("_lembas/session/delete", json!({ "sessionId": editor }), WAIT)
        .await
        .unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(file.exists(), "an editor's session outside the roots was deleted");
    for method in ["_lembas/session/history", "_lembas/session/status"] {
        let answer = l
            .link
            .request(method, json!({ "sessionId": editor }), WAIT)
            .await
            .unwrap();
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }

    // The person turns remote work off: the session's conversation is not read out any more.
    l.home.config_for(
        &l.peer.url(),
        &remote(&l.work, "").replace("enabled: true", "enabled: false"),
    );
    l.link = relink(&l.peer).await;
    for method in [
        "_lembas/session/history",
        "_lembas/session/status",
        "_lembas/session/title",
    ] {
        let answer = l
            .link
            .request(method, json!({ "sessionId": session, "title": "x" }), WAIT)
            .await
            .unwrap();
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert!(!answer.to_string().contains(SECRET), "{method}: {answer}");
    }
    // A session the instance was given is still deleted (the mark in the store).
    let deleted = l
        .link
        .request("_lembas/session/delete", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(deleted["result"]["deleted"], true, "{deleted}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_is_refused_not_waited_on() {
    let mut l = linked("").await;
    let fifo = l.work.join("pipe.log");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let session = l.new_session("edit").await;
    let (answer, _) = run_denying(
        &mut l,
        &session,
        ("call_f", "read", json!({ "path": "pipe.log" })),
    )
    .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        tool_text(&l, "call_f").contains("not a regular file"),
        "{}",
        tool_text(&l, "call_f")
    );
    // An @mention of it neither hangs the prompt.
    l.model().push(reply_text("ok"));
    let answer = l.prompt(&session, "look at @pipe.log", "t-mention").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_path_arguments_get_a_sentence() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let long = "a/".repeat(5_000);
    for (n, path) in ["a\u{0}b", long.as_str()].iter().enumerate() {
        let id = format!("call_{n}");
        let (answer, _) = run_denying(
            &mut l,
            &session,
            (&id, "write", json!({ "path": path, "content": "x" })),
        )
        .await;
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let said = tool_text(&l, &id);
        assert!(said.contains("path"), "{said}");
    }
}
