//! Commands (capability `commands`): the set told after session/new, after a session is opened
//! from the store and when a turn changed it; `_lembas/commands`; `/name` expanded (built-ins,
//! custom commands, skills) or sent as it is; the answers' `command`, `summary`, `mode` and
//! `message` (`/undo` and its `undone` are in `undo.rs`).

use super::*;
use std::process::Command as Process;

const BUILTINS: [&str; 7] = [
    "compact",
    "plan",
    "undo",
    "review",
    "changelog",
    "init",
    "continue",
];

pub fn texts() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../device/decisions.json");
    let decisions: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    decisions["commands"]["texts"].clone()
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The `available_commands_update`s sent for `session`, each as its names (schema-checked by
/// `updates`).
pub fn command_updates(link: &LinkHandle, session: &str) -> Vec<Vec<String>> {
    let _ = updates(link);
    link.received()
        .into_iter()
        .filter(|m| {
            m["method"] == "session/update"
                && m["params"]["sessionId"] == session
                && m["params"]["update"]["sessionUpdate"] == "available_commands_update"
        })
        .map(|m| names(&m["params"]["update"]["availableCommands"]))
        .collect()
}

pub fn names(commands: &Value) -> Vec<String> {
    commands
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

pub fn with_builtins(extra: &[&str]) -> Vec<String> {
    BUILTINS.iter().chain(extra).map(|s| s.to_string()).collect()
}

/// The last user message the model received.
pub fn last_user_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

pub fn lembas(answer: &Value) -> Value {
    answer["result"]["_meta"]["lembas"].clone()
}

pub fn git(dir: &Path, args: &[&str]) {
    let out = Process::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_set_is_told_expanded_and_told_again_when_it_changes() {
    let mut l = linked("").await;
    let config = l.home.path().join(".config/lembas");
    write(
        &l.work.join(".agent/commands/hello.md"),
        "Say hello to $ARGUMENTS from the project.",
    );
    write(&config.join("commands/hello.md"), "Say hello from the user.");
    write(
        &config.join("commands/mine.md"),
        "---\ndescription: Mine\n---\nThe user's own.",
    );
    write(
        &l.work.join(".agent/commands/review.md"),
        "Not the built-in review.",
    );
    write(
        &l.work.join(".agent/skills/lint/SKILL.md"),
        "---\ndescription: Lint the code\n---\nRun the linter and fix what it finds.",
    );
    let work = l.work.clone();
    let answer = l
        .new_session_at(&work, json!({ "mode": "edit", "lembas_model": MODEL }))
        .await;
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    let expected = with_builtins(&["hello", "mine", "lint"]);
    assert!(eventually(WAIT, || !command_updates(&l.link, &session).is_empty()));
    assert_eq!(
        command_updates(&l.link, &session),
        std::slice::from_ref(&expected)
    );
    // It follows session/new's answer.
    let received = l.link.received();
    let answered = received
        .iter()
        .position(|m| m["result"]["sessionId"] == session.as_str());
    let told = received
        .iter()
        .position(|m| m["params"]["update"]["sessionUpdate"] == "available_commands_update");
    assert!(answered < told, "the update comes after the answer");
    let update = received[told.unwrap()]["params"]["update"].clone();
    let commands = update["availableCommands"].as_array().unwrap();
    assert_eq!(commands[3]["input"]["hint"], "head | <branch>");
    assert_eq!(commands[3]["_meta"]["lembas"]["kind"], "builtin");
    assert_eq!(commands[7]["_meta"]["lembas"]["kind"], "custom");
    assert_eq!(commands[8]["description"], "Mine");
    assert_eq!(commands[9]["_meta"]["lembas"]["kind"], "skill");
    assert_eq!(commands[9]["description"], "Lint the code");

    // A composer with a folder and no session asks for the same list.
    let listed = l
        .link
        .request("_lembas/commands", json!({ "cwd": work }), WAIT)
        .await
        .unwrap();
    assert_eq!(names(&listed["result"]["commands"]), expected);
    let by_session = l
        .link
        .request("_lembas/commands", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(by_session["result"]["commands"], listed["result"]["commands"]);
    let neither = l.link.request("_lembas/commands", json!({}), WAIT).await.unwrap();
    assert_eq!(error_of(&neither).0, -32602, "{neither}");
    let outside = l
        .link
        .request("_lembas/commands", json!({ "cwd": "/" }), WAIT)
        .await
        .unwrap();
    assert_eq!(error_of(&outside).0, -32602, "{outside}");

    // The project's command wins, with $ARGUMENTS put in; the transcript shows what was typed.
    l.model().push(reply_text("Hello, world."));
    let answer = l.prompt(&session, "/hello world", "t1").await;
    assert_eq!(lembas(&answer)["command"], "hello", "{answer}");
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(last_user_text(&request), "Say hello to world from the project.");
    let prompt_event = l
        .link
        .received()
        .into_iter()
        .find(|m| m["params"]["event"]["type"] == "prompt")
        .unwrap();
    assert_eq!(prompt_event["params"]["event"]["text"], "/hello world");

    // A skill: its body, then the arguments.
    l.model().push(reply_text("Linted."));
    let answer = l.prompt(&session, "/lint src only", "t2").await;
    assert_eq!(lembas(&answer)["command"], "lint");
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(
        last_user_text(&request),
        "Run the linter and fix what it finds.\n\nsrc only"
    );

    // Not a command: sent as it is, slash and all.
    l.model().push(reply_text("That is a path."));
    let answer = l.prompt(&session, "/usr/bin/env and /nosuch", "t3").await;
    assert!(lembas(&answer).get("command").is_none(), "{answer}");
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(last_user_text(&request), "/usr/bin/env and /nosuch");
    l.model().push(reply_text("Unknown."));
    l.prompt(&session, "/nosuch thing", "t4").await;
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(last_user_text(&request), "/nosuch thing");
    assert_eq!(command_updates(&l.link, &session).len(), 1, "nothing changed yet");

    // A turn that writes a command file (a write under .agent asks in every mode; the person
    // allows it): the set is told again, with it.
    l.model().push(ModelReply::tool_call(
        "call_cmd",
        "write",
        json!({ "path": ".agent/commands/fresh.md", "content": "Be fresh." }),
    ));
    l.model().push(reply_text("Made it."));
    let (_, cards) = l.prompt_answering(&session, "make a command", "t5", "once").await;
    assert_eq!(cards, 1);
    assert!(eventually(WAIT, || command_updates(&l.link, &session).len() == 2));
    assert_eq!(
        command_updates(&l.link, &session)[1],
        with_builtins(&["fresh", "hello", "mine", "lint"])
    );

    // The history shows the command as typed.
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(history["result"]["turns"][0]["text"], "/hello world");

    // Opened from the store by the next process: told again.
    l.service.signal(15);
    l.service.wait_exit(WAIT);
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    l.link = relink(&l.peer).await;
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(history["result"]["turns"][0]["text"], "/hello world");
    assert!(eventually(WAIT, || command_updates(&l.link, &session).len() == 1));
    assert_eq!(
        command_updates(&l.link, &session)[0],
        with_builtins(&["fresh", "hello", "mine", "lint"])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_projects_commands_are_not_offered() {
    store_token();
    let peer = lembas_peer::Peer::start(lembas_peer::PeerConfig::with_token(TOKEN))
        .await
        .unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    home.config_for(
        &peer.url(),
        &format!(
            "remote:\n  enabled: true\n  max_mode: edit\n  require_trust: false\n  roots:\n    - {}\n",
            work.display()
        ),
    );
    write(
        &work.join(".agent/commands/hello.md"),
        "From an untrusted project.",
    );
    write(&work.join(".agent/skills/lint/SKILL.md"), "Untrusted skill.");
    write(
        &home.path().join(".config/lembas/commands/mine.md"),
        "The user's own.",
    );
    let _service = home.service();
    let mut link = relink(&peer).await;
    let listed = link
        .request("_lembas/commands", json!({ "cwd": work }), WAIT)
        .await
        .unwrap();
    assert_eq!(names(&listed["result"]["commands"]), with_builtins(&["mine"]));
    let answer = link
        .request(
            "session/new",
            json!({ "cwd": work, "mcpServers": [], "_meta": { "lembas_model": MODEL } }),
            WAIT,
        )
        .await
        .unwrap();
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    peer.model().push(reply_text("Sent as text."));
    let id = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "/hello there" }] }),
        )
        .await
        .unwrap();
    let answer = link.recv_answer(id, WAIT).await.unwrap();
    assert!(
        answer["result"]["_meta"]["lembas"].get("command").is_none(),
        "{answer}"
    );
    let request = peer.model().requests().last().cloned().unwrap();
    assert_eq!(last_user_text(&request), "/hello there");
    assert_eq!(command_updates(&link, &session), [with_builtins(&["mine"])]);
}

#[tokio::test(flavor = "multi_thread")]
async fn review_plan_compact_and_the_prompt_builtins() {
    let mut l = linked("").await;
    let work = l.work.clone();
    git(&work, &["init", "-q"]);
    write(&work.join("lib.rs"), "fn one() {}\n");
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "first"]);
    git(&work, &["tag", "v1"]);
    let session = l.new_session("edit").await;

    // No changes: said instead, nothing sent.
    let answer = l.prompt(&session, "/review", "t1").await;
    let expected = texts()["review_nothing"]
        .as_str()
        .unwrap()
        .replace("{{target}}", "HEAD");
    assert_eq!(lembas(&answer)["message"], expected.as_str(), "{answer}");
    assert_eq!(lembas(&answer)["command"], "review");
    assert!(l.model().requests().is_empty());
    // An option is never given to git.
    let answer = l.prompt(&session, "/review --output=x.diff", "t1b").await;
    assert!(
        lembas(&answer)["message"]
            .as_str()
            .unwrap()
            .contains("not a revision")
    );
    assert!(!work.join("x.diff").exists());

    // A change: the diff goes to the model.
    write(&work.join("lib.rs"), "fn one() {}\nfn two() {}\n");
    l.model().push(reply_text("Looks fine."));
    let answer = l.prompt(&session, "/review head", "t2").await;
    assert_eq!(lembas(&answer)["command"], "review");
    let request = l.model().requests().last().cloned().unwrap();
    let text = last_user_text(&request);
    assert!(text.contains("+fn two() {}"), "{text}");
    assert!(text.contains("git diff HEAD"), "{text}");

    // changelog: the commits since the last tag.
    git(&work, &["commit", "-q", "-am", "Add two"]);
    l.model().push(reply_text("- Added two."));
    let answer = l.prompt(&session, "/changelog", "t3").await;
    assert_eq!(lembas(&answer)["command"], "changelog");
    let text = last_user_text(&l.model().requests().last().cloned().unwrap());
    assert!(
        text.contains("Add two") && text.contains("v1") && !text.contains("first"),
        "{text}"
    );

    // init and continue send their texts.
    l.model().push(reply_text("Wrote it."));
    l.prompt(&session, "/init", "t4").await;
    let text = last_user_text(&l.model().requests().last().cloned().unwrap());
    assert_eq!(text, texts()["init"].as_str().unwrap());
    l.model().push(reply_text("Going on."));
    l.prompt(&session, "/continue", "t5").await;
    let text = last_user_text(&l.model().requests().last().cloned().unwrap());
    assert_eq!(text, texts()["continue"].as_str().unwrap());

    // /plan without a task: the mode becomes plan, nothing sent.
    let requests = l.model().requests().len();
    let answer = l.prompt(&session, "/plan", "t6").await;
    assert_eq!(lembas(&answer)["mode"], "plan", "{answer}");
    assert_eq!(l.model().requests().len(), requests);
    assert!(
        updates(&l.link)
            .iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "plan")
    );
    // With a task: it runs in plan mode.
    l.link
        .request(
            "session/set_mode",
            json!({ "sessionId": session, "modeId": "edit" }),
            WAIT,
        )
        .await
        .unwrap();
    l.model().push(reply_text("Here is a plan."));
    let answer = l.prompt(&session, "/plan fix the build", "t7").await;
    assert_eq!(lembas(&answer)["command"], "plan");
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(last_user_text(&request), "fix the build");
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("The mode is plan"), "{system}");

    // /compact: the model's summary replaces the conversation.
    l.model().push(reply_text("We reviewed and planned."));
    let answer = l.prompt(&session, "/compact", "t8").await;
    assert_eq!(lembas(&answer)["summary"], "We reviewed and planned.", "{answer}");
    assert_eq!(lembas(&answer)["command"], "compact");
    let summary_request = l.model().requests().last().cloned().unwrap();
    assert!(summary_request.get("tools").is_none());
    l.model().push(reply_text("Yes."));
    l.prompt(&session, "and now?", "t9").await;
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(
        request["messages"].as_array().unwrap().len(),
        3,
        "system, summary, prompt"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_in_a_scheduled_prompt_never_widens_its_mode() {
    let mut l = linked("  max_mode: auto\n  scheduled: true\n").await;
    let schedule =
        json!({ "schedule_id": "s1", "run_id": "r1", "title": "T", "mode": "edit", "approval_wait_s": 1800 });
    let work = l.work.clone();
    let answer = l
        .new_session_at(
            &work,
            json!({ "lembas_model": MODEL, "lembas": { "scheduled": schedule } }),
        )
        .await;
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    for (text, turn) in [("/plan", "r1"), ("/plan look around", "r2"), ("/undo", "r3")] {
        let answer = l
            .link
            .request(
                "session/prompt",
                json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }],
                        "_meta": { "lembas": { "turnId": turn, "scheduled": schedule } } }),
                WAIT,
            )
            .await
            .unwrap();
        assert_eq!(
            lembas(&answer)["scheduled"]["status"],
            "failed",
            "{text}: {answer}"
        );
    }
    assert!(l.model().requests().is_empty());
    assert!(
        !updates(&l.link)
            .iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commands_model_holds_for_its_prompt_and_its_mode_is_lowered() {
    let mut l = linked("").await;
    write(
        &l.work.join(".agent/commands/deep.md"),
        "---\ndescription: Think hard\nmodel: example/chat-deep\neffort: high\nmode: auto\n---\nThink about $ARGUMENTS.",
    );
    write(
        &l.work.join(".agent/commands/gone.md"),
        "---\nmodel: example/not-served\n---\nNever sent.",
    );
    let session = l.new_session("manual").await;
    l.model().push(reply_text("Thought."));
    let answer = l.prompt(&session, "/deep the cache", "t1").await;
    assert_eq!(lembas(&answer)["command"], "deep", "{answer}");
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(request["model"], "example/chat-deep");
    assert_eq!(request["reasoning_effort"], "high");
    assert_eq!(last_user_text(&request), "Think about the cache.");
    // auto, lowered to this device's max_mode (edit), and the session's mode from now on.
    assert!(
        updates(&l.link)
            .iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "edit")
    );
    // The client heard the command's model take over for its prompt, and the session's come back.
    let models: Vec<(Value, Value)> = l
        .link
        .received()
        .into_iter()
        .filter(|m| m["method"] == "_lembas/event" && m["params"]["event"]["type"] == "model")
        .map(|m| {
            (
                m["params"]["event"]["ref"].clone(),
                m["params"]["event"]["effort"].clone(),
            )
        })
        .collect();
    assert_eq!(
        models,
        [
            (json!("example/chat-deep"), json!("high")),
            (json!(MODEL), json!("default"))
        ],
        "{models:?}"
    );
    l.model().push(reply_text("Plain."));
    l.prompt(&session, "plain", "t2").await;
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(request["model"], MODEL, "the session's model came back");
    assert!(request.get("reasoning_effort").is_none(), "{request}");
    assert!(
        request["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("The mode is edit")
    );
    // A model the instance does not serve: refused, nothing sent.
    let requests = l.model().requests().len();
    let answer = l.prompt(&session, "/gone", "t3").await;
    assert_eq!(error_of(&answer).0, -32602, "{answer}");
    assert!(error_of(&answer).1.contains("example/not-served"));
    assert_eq!(l.model().requests().len(), requests);
}
