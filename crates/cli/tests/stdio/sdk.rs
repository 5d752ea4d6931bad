//! The official ACP SDK (`@agentclientprotocol/sdk`, pinned in tests/acp-client/package.json and
//! installed by scripts/setup) as the editor: it starts `lembas serve --stdio` itself and runs a
//! whole prompt through it, a permission request included (drive.mjs); and, over two runs of the
//! agent, an editor's chats reopened, listed and switched to another model, with its MCP server and
//! project instructions and an automatic compaction (chats.mjs). The SDK checks every message it
//! gets against its own schema.

use super::*;
use common::acp_sdk::{installed_sdk, run_script};

#[tokio::test(flavor = "multi_thread")]
async fn the_official_acp_sdk_runs_a_whole_prompt_with_a_permission_request() {
    let dir = installed_sdk();
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Reasoning("The person wants a file.".into()),
            Part::ToolCall {
                id: "call_sdk".into(),
                name: "write".into(),
                arguments: json!({ "path": "sdk.txt", "content": "from the SDK's editor\n" }).to_string(),
            },
        ],
        finish_reason: "tool_calls".into(),
    });
    peer.model().push(ModelReply::text("I wrote sdk.txt."));
    let (seen, stderr) = run_script(
        &dir,
        &home,
        "drive.mjs",
        &[
            work.as_os_str(),
            "manual".as_ref(),
            "Write sdk.txt, please.".as_ref(),
        ],
    );

    assert_eq!(seen["initialize"]["protocolVersion"], 1, "{seen}");
    assert_eq!(seen["initialize"]["_meta"]["lembas"]["limits"], Value::Null);
    assert_eq!(
        seen["session"]["_meta"]["lembas"]["model"], MODEL,
        "the instance's default model"
    );
    assert_eq!(seen["prompt"]["stopReason"], "end_turn", "{seen}");

    // The permission: ACP's own request, answered by the SDK's handler, and the write done after it.
    let permissions = seen["permissions"].as_array().unwrap();
    assert_eq!(permissions.len(), 1, "{seen}");
    validate_acp("RequestPermissionRequest", &permissions[0]).unwrap();
    assert_eq!(permissions[0]["toolCall"]["kind"], "edit");
    assert_eq!(
        std::fs::read_to_string(work.join("sdk.txt")).unwrap(),
        "from the SDK's editor\n"
    );

    let updates: Vec<&Value> = seen["updates"].as_array().unwrap().iter().collect();
    for update in &updates {
        validate_acp("SessionNotification", update).unwrap();
    }
    let kinds: Vec<&str> = updates
        .iter()
        .filter_map(|u| u["update"]["sessionUpdate"].as_str())
        .collect();
    for kind in [
        "current_mode_update",
        "agent_thought_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ] {
        assert!(kinds.contains(&kind), "no {kind} in {kinds:?}");
    }
    // The write as an editor draws it: the file to follow, then the change as a diff.
    let call = updates
        .iter()
        .find(|u| u["update"]["sessionUpdate"] == "tool_call")
        .unwrap();
    assert_eq!(
        call["update"]["locations"],
        json!([{ "path": work.join("sdk.txt").display().to_string() }]),
        "{call}"
    );
    let ended = updates
        .iter()
        .find(|u| u["update"]["sessionUpdate"] == "tool_call_update" && u["update"]["status"] == "completed")
        .unwrap();
    assert_eq!(
        ended["update"]["content"],
        json!([{ "type": "diff", "path": work.join("sdk.txt").display().to_string(),
                 "oldText": null, "newText": "from the SDK's editor\n" }]),
        "{ended}"
    );
    let text: String = updates
        .iter()
        .filter(|u| u["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "I wrote sdk.txt.");
    assert_eq!(seen["others"], json!([]), "an editor got more than plain ACP");
    assert_eq!(seen["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
    assert_eq!(peer.model().requests().len(), 2);
}

/// tests/acp-client/chats.mjs: two runs of the agent, as an editor restarting it.
#[tokio::test(flavor = "multi_thread")]
async fn the_official_acp_sdk_reopens_lists_switches_models_and_runs_mcp_servers() {
    let dir = installed_sdk();
    let (peer, home) = logged_in().await;
    let (a, b) = (home.path().join("work"), home.path().join("other"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    // A is a trusted project, B is not: only A's AGENTS.md reaches the model.
    home.config_for(&peer.url(), &format!("trusted:\n  - {}\n", a.display()));
    std::fs::write(a.join("AGENTS.md"), "Indent with tabs.\n").unwrap();
    std::fs::write(b.join("AGENTS.md"), "Never read me.\n").unwrap();
    // Chat A: four echoes through the example server (asked, denied, allowed once, allowed always,
    // then not asked), then an answer; chat B: an answer.
    for (call, word) in [
        ("call_1", "one"),
        ("call_2", "two"),
        ("call_3", "three"),
        ("call_4", "four"),
    ] {
        peer.model().push(ModelReply::tool_call(
            call,
            "example__echo",
            json!({ "text": word }),
        ));
    }
    peer.model().push(ModelReply::text("Echoed three of four."));
    // Chat B runs on the default model, whose window is 100 tokens: its first step fills it, so the
    // step after its tool call is compacted first (a summary asked, then the step).
    peer.set_config(|c| c.models["data"][0]["context_length"] = json!(100));
    peer.model()
        .push(ModelReply::tool_call("call_ls", "ls", json!({})));
    peer.model()
        .push(ModelReply::text("We greeted and listed the folder."));
    peer.model().push(ModelReply::text("Hello, B."));
    let server = example_server();
    let args = [
        a.as_os_str(),
        b.as_os_str(),
        server.as_os_str(),
        lembas_peer::VISION_MODEL.as_ref(),
    ];
    let (seen, stderr) = run_script(&dir, &home, "chats.mjs", &args);
    let (first, second) = (&seen["first"], &seen["second"]);

    // Run 1: the server's tools, the model switched, three cards answered in turn.
    assert_eq!(
        first["initialize"]["agentCapabilities"]["mcpCapabilities"],
        json!({ "http": true, "sse": false })
    );
    assert_eq!(
        first["a"]["_meta"]["lembas"]["mcpServers"][0]["started"], true,
        "{first}"
    );
    let model_option = first["switched"]["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .cloned()
        .unwrap();
    assert_eq!(model_option["currentValue"], lembas_peer::VISION_MODEL);
    assert_eq!(first["promptA"]["stopReason"], "end_turn", "{first}");
    assert_eq!(first["promptB"]["stopReason"], "end_turn", "{first}");
    let permissions = first["permissions"].as_array().unwrap();
    assert_eq!(
        permissions.len(),
        3,
        "the fourth echo was allowed always: {permissions:?}"
    );
    for permission in permissions {
        validate_acp("RequestPermissionRequest", permission).unwrap();
        assert_eq!(permission["toolCall"]["title"], "echo (MCP server example)");
    }
    let requests = peer.model().requests();
    assert_eq!(
        requests[0]["model"],
        lembas_peer::VISION_MODEL,
        "the switched model answers"
    );
    let read_back = |call: &str| read_by_model(&peer.model(), call);
    let system = |request: &Value| {
        request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(system(&requests[0]).contains("## Project instructions\n\n### AGENTS.md\n\nIndent with tabs."));
    let last = requests.last().unwrap();
    // Compacted: the summary, then the person's request verbatim.
    let summary = last["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(
        summary.starts_with("A summary of our conversation so far:\n\nWe greeted and listed the folder."),
        "{summary}"
    );
    assert_eq!(last["messages"][2]["content"], "Hello from B.");
    let windows: Vec<&Value> = first["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| {
            u["sessionId"] == first["b"]["sessionId"] && u["update"]["sessionUpdate"] == "usage_update"
        })
        .collect();
    assert!(
        !windows.is_empty() && windows.iter().all(|u| u["update"]["size"] == 100),
        "{windows:?}"
    );
    assert!(!system(last).contains("Never read me"), "{}", system(last));
    assert!(
        read_back("call_1").starts_with("Not done"),
        "{}",
        read_back("call_1")
    );
    for (call, word) in [("call_2", "two"), ("call_3", "three"), ("call_4", "four")] {
        assert_eq!(read_back(call), word);
    }
    for update in first["updates"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["updates"].as_array().unwrap())
    {
        validate_acp("SessionNotification", update).unwrap();
    }
    assert_eq!(first["exit"], json!({ "code": 0, "signal": null }), "{stderr}");

    // Run 2: listed by folder and in all, a cursor from nowhere refused, chat A replayed in order.
    let ids = |list: &Value| -> Vec<String> {
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["sessionId"].as_str().unwrap().to_string())
            .collect()
    };
    let (id_a, id_b) = (
        first["a"]["sessionId"].as_str().unwrap().to_string(),
        first["b"]["sessionId"].as_str().unwrap().to_string(),
    );
    assert_eq!(ids(&second["listA"]), [id_a.as_str()]);
    let all = ids(&second["listAll"]);
    assert!(all.contains(&id_a) && all.contains(&id_b), "{all:?}");
    assert_eq!(second["badCursor"]["error"]["code"], -32602, "{second}");
    assert_eq!(second["unknown"]["error"]["code"], -32602, "{second}");
    let replayed: Vec<Value> = second["replayed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["update"].clone())
        .collect();
    let order: Vec<String> = replayed
        .iter()
        .filter_map(|u| match u["sessionUpdate"].as_str()? {
            "user_message_chunk" => Some(format!("user: {}", u["content"]["text"].as_str()?)),
            "tool_call" => Some(format!("tool: {}", u["toolCallId"].as_str()?)),
            "agent_message_chunk" => Some(format!("agent: {}", u["content"]["text"].as_str()?)),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        [
            "user: Echo four words.",
            "tool: call_1",
            "tool: call_2",
            "tool: call_3",
            "tool: call_4",
            "agent: Echoed three of four.",
        ],
        "{replayed:?}"
    );
    assert_eq!(second["others"], json!([]), "an editor got more than plain ACP");
    assert_eq!(second["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
}

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
    // Not under the temp folders: the command's sandbox has a /tmp of its own.
    let home = Home::outside_temp(env!("CARGO_TARGET_TMPDIR"));
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
