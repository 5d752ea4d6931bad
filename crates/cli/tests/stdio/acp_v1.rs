//! The rest of stable ACP v1 with the official ACP SDK as the editor (tests/acp-client): chats
//! deleted and requests cancelled (lifecycle.mjs), the session's changes told whatever made them
//! (updates.mjs), further folders (folders.mjs), a command's output as it comes (terminal.mjs), and
//! question and plan cards as forms (forms.mjs). The login is tests/login/editor.rs's; the editors'
//! entries editors.rs'.

use super::*;
use common::acp_sdk::{installed_sdk, run_script};

/// tests/acp-client/lifecycle.mjs: chats deleted (one another editor holds is not), a stray
/// `$/cancel_request` ignored, and a hanging prompt cancelled by its request id.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_acp_sdk_deletes_chats_and_cancels_a_prompt_by_its_request_id() {
    let dir = installed_sdk();
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    peer.model().push(ModelReply::Stream {
        parts: vec![Part::Text("Thinking it over".into()), Part::Hang],
        finish_reason: "stop".into(),
    });
    peer.model().push(ModelReply::text("Yes, here."));
    let (seen, stderr) = run_script(&dir, &home, "lifecycle.mjs", &[work.as_os_str()]);
    let second = &seen["second"];

    let initialize = &seen["initialize"];
    validate_acp("InitializeResponse", initialize).unwrap();
    let capabilities = &initialize["agentCapabilities"];
    assert_eq!(
        capabilities["sessionCapabilities"]["delete"],
        json!({}),
        "{initialize}"
    );
    assert_eq!(capabilities["auth"]["logout"], json!({}), "{initialize}");
    assert_eq!(initialize["authMethods"][0]["id"], "lembas-login", "{initialize}");

    let (kept, gone) = (
        seen["kept"]["sessionId"].as_str().unwrap(),
        seen["gone"]["sessionId"].as_str().unwrap(),
    );
    let listed = |list: &Value| -> Vec<String> {
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sessionId"].as_str().unwrap().to_string())
            .collect()
    };
    let both = listed(&second["listed"]);
    assert!(
        both.contains(&kept.to_string()) && both.contains(&gone.to_string()),
        "{second}"
    );
    // Editor 2 deletes nothing editor 1 holds, nor what is not there.
    let held = &second["heldElsewhere"]["error"];
    assert_eq!(held["code"], -32602, "{second}");
    assert!(
        held["message"]
            .as_str()
            .unwrap()
            .contains("open in an editor's lembas serve --stdio"),
        "{held}"
    );
    assert_eq!(second["unknown"]["error"]["code"], -32602, "{second}");
    assert_eq!(second["notAnId"]["error"]["code"], -32602, "{second}");
    // The cancel for an id it never sent was ignored: it went on serving.
    assert_eq!(listed(&second["afterStrayCancel"]), listed(&second["listed"]));
    assert_eq!(second["exit"], json!({ "code": 0, "signal": null }), "{stderr}");

    // Editor 1 deletes its own: gone from the list and the disk; the other is whole.
    assert_eq!(seen["deleted"], json!({ "result": {} }), "{seen}");
    assert_eq!(seen["deletedAgain"]["error"]["code"], -32602, "{seen}");
    assert_eq!(listed(&seen["listAfter"]), [kept]);
    let sessions = home.dirs().state.join("sessions");
    assert!(!sessions.join(format!("{gone}.jsonl")).exists());
    assert!(sessions.join(format!("{kept}.jsonl")).exists());

    // The hanging prompt answered as cancelled (its own marker), and the chat goes on.
    assert_eq!(seen["cancelled"]["result"]["stopReason"], "cancelled", "{seen}");
    assert_eq!(seen["again"]["stopReason"], "end_turn", "{seen}");
    for update in seen["updates"].as_array().unwrap() {
        validate_acp("SessionNotification", update).unwrap();
    }
    assert_eq!(seen["others"], json!([]), "an editor got more than plain ACP");
    assert_eq!(seen["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
}

/// tests/acp-client/updates.mjs: the model, effort and mode a command's front matter takes are
/// told as ACP's own updates, as is each title.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_acp_sdk_hears_the_model_mode_and_title_change_for_any_reason() {
    let dir = installed_sdk();
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    // A trusted project: its commands are read.
    home.config_for(&peer.url(), &format!("trusted:\n  - {}\n", work.display()));
    let commands = work.join(".agent/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("deep.md"),
        "---\ndescription: Think hard\nmodel: example/chat-deep\neffort: high\nmode: plan\n---\nThink about $ARGUMENTS.",
    )
    .unwrap();
    peer.model().push(ModelReply::text("Thought."));
    let (seen, stderr) = run_script(&dir, &home, "updates.mjs", &[work.as_os_str()]);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn", "{seen}");
    assert_eq!(peer.model().requests()[0]["model"], "example/chat-deep", "{seen}");

    let updates: Vec<Value> = seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            validate_acp("SessionNotification", u).unwrap();
            u["update"].clone()
        })
        .collect();
    let option = |update: &Value, id: &str| -> Value {
        update["configOptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == id)
            .map(|o| o["currentValue"].clone())
            .unwrap_or_default()
    };
    // The command's model and effort for its prompt, then the session's own given back.
    let models: Vec<(Value, Value)> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "config_option_update")
        .map(|u| (option(u, "model"), option(u, "effort")))
        .collect();
    assert_eq!(
        models,
        [
            (json!("example/chat-deep"), json!("high")),
            (json!(MODEL), json!("default")),
        ],
        "{updates:?}"
    );
    assert!(
        updates
            .iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "plan"),
        "{updates:?}"
    );
    let titles: Vec<&Value> = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .map(|u| &u["title"])
        .collect();
    assert_eq!(titles.last(), Some(&&json!("Cache work")), "{updates:?}");
    assert_eq!(
        titles.len(),
        2,
        "named by its first prompt, then renamed: {updates:?}"
    );
    assert_eq!(seen["others"], json!([]), "an editor got more than plain ACP");
    assert_eq!(seen["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
}

/// tests/acp-client/folders.mjs: `additionalDirectories` judged as the session's folder is, and
/// worked in as it is.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_acp_sdk_gives_a_chat_further_folders_judged_as_its_own() {
    let dir = installed_sdk();
    let (peer, home) = logged_in().await;
    let (work, another) = (home.path().join("work"), home.path().join("another"));
    let protected = home.path().join(".ssh");
    for folder in [&work, &another, &protected] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let note = another.join("note.txt");
    peer.model().push(ModelReply::tool_call(
        "call_note",
        "write",
        json!({ "path": note.display().to_string(), "content": "beside the project\n" }),
    ));
    peer.model().push(ModelReply::text("Written."));
    let args = [work.as_os_str(), another.as_os_str(), protected.as_os_str()];
    let (seen, stderr) = run_script(&dir, &home, "folders.mjs", &args);

    assert_eq!(
        seen["initialize"]["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"],
        json!({}),
        "{seen}"
    );
    for (refused, why) in [
        ("relative", "is not an absolute path"),
        ("missing", "cannot be used"),
        ("protectedOne", "is a protected path (your SSH folder)"),
        ("resumedBadly", "is a protected path (your SSH folder)"),
    ] {
        let error = &seen[refused]["error"];
        assert_eq!(error["code"], -32602, "{refused}: {seen}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("The additional directory") && message.contains(why),
            "{refused}: {error}"
        );
    }
    // Written in the further folder as in the session's own: in edit mode, nobody was asked.
    assert_eq!(seen["prompt"]["stopReason"], "end_turn", "{seen}");
    assert_eq!(seen["permissions"], json!([]), "{seen}");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "beside the project\n");
    let told = read_by_model(&peer.model(), "call_note");
    assert!(told.starts_with("Created"), "{told}");
    for update in seen["updates"].as_array().unwrap() {
        validate_acp("SessionNotification", update).unwrap();
    }
    assert_eq!(seen["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
}

/// tests/acp-client/terminal.mjs: an editor that draws a command's output (Zed's
/// `_meta.terminal_output`) gets it as it comes, and how the command ended.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_acp_sdk_draws_a_command_s_output_as_it_comes() {
    let dir = installed_sdk();
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    // Under /tmp, as an editor's project may be: the command's own /tmp does not hide it.
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    peer.model().push(ModelReply::tool_call(
        "call_count",
        "bash",
        json!({ "command": "printf 'one\\n'; sleep 0.2; printf 'two\\n'" }),
    ));
    peer.model().push(ModelReply::text("Counted."));
    let (seen, stderr) = run_script(&dir, &home, "terminal.mjs", &[work.as_os_str()]);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn", "{seen}");
    let updates: Vec<Value> = seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            validate_acp("SessionNotification", u).unwrap();
            u["update"].clone()
        })
        .filter(|u| u["toolCallId"] == "call_count")
        .collect();
    let info = updates
        .iter()
        .find(|u| !u["_meta"]["terminal_info"].is_null())
        .unwrap_or_else(|| panic!("no terminal_info: {updates:?}"));
    assert_eq!(info["_meta"]["terminal_info"]["cwd"], work.display().to_string());
    assert_eq!(
        info["content"],
        json!([{ "type": "terminal", "terminalId": "call_count" }])
    );
    let told: String = updates
        .iter()
        .filter_map(|u| u["_meta"]["terminal_output"]["data"].as_str())
        .collect();
    assert_eq!(told, "one\ntwo\n", "{updates:?}");
    let pieces = updates
        .iter()
        .filter(|u| !u["_meta"]["terminal_output"].is_null())
        .count();
    assert!(pieces >= 2, "told as it came, not at the end: {updates:?}");
    let exit = updates
        .iter()
        .find_map(|u| u["_meta"].get("terminal_exit"))
        .unwrap_or_else(|| panic!("no terminal_exit: {updates:?}"));
    assert_eq!(exit["exit_code"], 0, "{exit}");
    // The model's result is the command's output as ever, and the call ends as every call does.
    assert_eq!(read_by_model(&peer.model(), "call_count"), "one\ntwo\n");
    assert_eq!(updates.last().unwrap()["status"], "completed", "{updates:?}");
    assert_eq!(seen["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
}

/// tests/acp-client/forms.mjs: an editor that renders forms is asked the agent's question and
/// plan as `elicitation/create` forms, and its answers reach the model and the mode.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_acp_sdk_answers_a_question_and_approves_a_plan_in_forms() {
    let dir = installed_sdk();
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let question = |header: &str, options: &[&str]| {
        let options: Vec<Value> = options.iter().map(|o| json!({ "label": o })).collect();
        json!({ "header": header, "question": format!("{header}?"), "options": options })
    };
    peer.model().push(ModelReply::tool_call(
        "call_ask",
        "ask_user",
        json!({ "why": "to pick", "questions": [
            question("DB", &["SQLite", "Postgres"]),
            question("Name", &["a", "b"]),
        ] }),
    ));
    peer.model().push(ModelReply::tool_call(
        "call_plan",
        "plan_submit",
        json!({ "text": "# Plan\n1. Postgres" }),
    ));
    peer.model().push(ModelReply::text("Planned."));
    let (seen, stderr) = run_script(&dir, &home, "forms.mjs", &[work.as_os_str()]);
    assert_eq!(seen["prompt"]["stopReason"], "end_turn", "{seen}");

    let forms: Vec<&Value> = seen["others"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["method"] == "elicitation/create")
        .map(|o| &o["params"])
        .collect();
    assert_eq!(forms.len(), 2, "{seen}");
    for form in &forms {
        validate_acp("CreateElicitationRequest", form).unwrap();
        assert_eq!(form["mode"], "form");
    }
    assert_eq!(forms[0]["toolCallId"], "call_ask");
    assert_eq!(
        forms[0]["requestedSchema"]["properties"]["q01"]["oneOf"],
        json!([{ "const": "SQLite", "title": "SQLite" }, { "const": "Postgres", "title": "Postgres" }])
    );
    assert_eq!(forms[1]["toolCallId"], "call_plan");
    assert!(
        forms[1]["message"]
            .as_str()
            .unwrap()
            .ends_with("# Plan\n1. Postgres")
    );

    let told = read_by_model(&peer.model(), "call_ask");
    assert!(
        told.contains("\"Postgres\"") && told.contains("\"call it lembas\""),
        "{told}"
    );
    assert!(read_by_model(&peer.model(), "call_plan").contains("now in manual mode"));
    let modes: Vec<&Value> = seen["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == "current_mode_update")
        .map(|u| &u["update"]["currentModeId"])
        .collect();
    assert_eq!(modes.last(), Some(&&json!("manual")), "{modes:?}");
    assert_eq!(seen["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
}
