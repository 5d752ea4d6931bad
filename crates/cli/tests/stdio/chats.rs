//! An editor's chats beyond one prompt: the plan it is shown, the chats it lists and reopens after
//! the agent restarts, and the model and effort it picks.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_editor_gets_the_plan_as_acp_plan_entries() {
    let (peer, _home, mut editor, session) = plain_editor_session("plan").await;
    peer.model().push(ModelReply::tool_call(
        "call_w",
        "plan_write",
        json!({ "plan": { "title": "Tidy", "phases": [{ "title": "All", "tasks": [
            { "content": "Sort the imports" }, { "content": "Run the tests", "status": "in_progress" },
        ] }] } }),
    ));
    peer.model().push(ModelReply::text("Planned."));
    let id = editor.send_request("session/prompt", prompt_params(&session, "plan it"));
    let answer = editor.answer(id);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let plans: Vec<Value> = editor
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .collect();
    assert_eq!(plans.len(), 1, "{plans:?}");
    assert_eq!(
        plans[0]["entries"],
        json!([
            { "content": "Sort the imports", "priority": "medium", "status": "pending" },
            { "content": "Run the tests", "priority": "medium", "status": "in_progress" },
        ])
    );
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_lists_and_reopens_its_chats_after_the_agent_restarts() {
    let (peer, home, mut editor, session) = plain_editor_session("edit").await;
    let work = home.path().join("work");
    let other = home.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    peer.model()
        .push(ModelReply::tool_call("call_ls", "ls", json!({})));
    peer.model().push(ModelReply::text("Listed."));
    let answer = editor.request("session/prompt", prompt_params(&session, "list the folder"));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    // The title the first prompt gave, as ACP's own update.
    let titles: Vec<Value> = editor
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .map(|u| u["title"].clone())
        .collect();
    assert_eq!(titles, [json!("list the folder")]);
    let second = new_session(&mut editor, &other, json!({ "mode": "edit" }));
    let second = second["result"]["sessionId"].as_str().unwrap().to_string();
    assert_eq!(editor.end_input(WAIT).code(), Some(0));

    // The editor starts the agent again.
    let mut editor = Editor::start(&home);
    let init = editor.initialize(false);
    validate_acp("InitializeResponse", &init["result"]).unwrap();
    let capabilities = &init["result"]["agentCapabilities"];
    assert_eq!(capabilities["loadSession"], true, "{init}");
    assert_eq!(
        capabilities["sessionCapabilities"],
        json!({ "list": {}, "resume": {}, "close": {}, "delete": {}, "additionalDirectories": {} }),
        "{init}"
    );

    let here = editor.request("session/list", json!({ "cwd": work }));
    validate_acp("ListSessionsResponse", &here["result"]).unwrap();
    let ids: Vec<&Value> = here["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["sessionId"])
        .collect();
    assert_eq!(ids, [&json!(session)], "{here}");
    assert_eq!(here["result"]["sessions"][0]["title"], "list the folder");
    let all = editor.request("session/list", json!({}));
    assert_eq!(all["result"]["sessions"].as_array().unwrap().len(), 2, "{all}");
    assert_eq!(
        all["result"]["sessions"][0]["sessionId"],
        json!(second),
        "the latest first: {all}"
    );
    let nowhere = editor.request("session/list", json!({ "cursor": "page-9" }));
    assert_eq!(error_of(&nowhere).0, -32602, "{nowhere}");

    let before = editor.seen.len();
    let loaded = editor.request(
        "session/load",
        json!({ "sessionId": session, "cwd": work, "mcpServers": [] }),
    );
    validate_acp("LoadSessionResponse", &loaded["result"]).unwrap_or_else(|e| panic!("{e}\n{loaded}"));
    assert_eq!(loaded["result"]["modes"]["currentModeId"], "edit");
    // Every message and tool call, in order, before the answer.
    let replayed: Vec<String> = editor.seen[before..]
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| {
            validate_acp("SessionNotification", &m["params"]).unwrap();
            let u = &m["params"]["update"];
            format!(
                "{} {}",
                u["sessionUpdate"].as_str().unwrap(),
                u["content"]["text"]
                    .as_str()
                    .or(u["toolCallId"].as_str())
                    .unwrap_or("")
            )
        })
        .filter(|u| !u.starts_with("available_commands_update"))
        .collect();
    assert_eq!(
        replayed,
        [
            "user_message_chunk list the folder",
            "tool_call call_ls",
            "agent_message_chunk Listed."
        ]
    );
    let unknown = editor.request(
        "session/load",
        json!({ "sessionId": "ses_nope", "cwd": work, "mcpServers": [] }),
    );
    assert_eq!(error_of(&unknown).0, -32602, "{unknown}");
    let elsewhere = editor.request(
        "session/load",
        json!({ "sessionId": second, "cwd": work, "mcpServers": [] }),
    );
    assert_eq!(error_of(&elsewhere).0, -32602, "{elsewhere}");

    // Resumed: opened, no history sent again; closed: let go of, and closing it again says so.
    let before = editor.seen.len();
    let resumed = editor.request("session/resume", json!({ "sessionId": second, "cwd": other }));
    validate_acp("ResumeSessionResponse", &resumed["result"]).unwrap_or_else(|e| panic!("{e}\n{resumed}"));
    assert!(
        !editor.seen[before..]
            .iter()
            .any(|m| m["params"]["update"]["sessionUpdate"] == "user_message_chunk")
    );
    let closed = editor.request("session/close", json!({ "sessionId": second }));
    validate_acp("CloseSessionResponse", &closed["result"]).unwrap_or_else(|e| panic!("{e}\n{closed}"));
    let again = editor.request("session/close", json!({ "sessionId": second }));
    assert_eq!(error_of(&again).0, -32602, "{again}");

    // The chat goes on where it was: the model is sent what came before.
    peer.model().push(ModelReply::text("Again."));
    let answer = editor.request("session/prompt", prompt_params(&session, "and again"));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let request = peer.model().requests().last().cloned().unwrap();
    assert!(request.to_string().contains("list the folder"), "{request}");
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_picks_the_model_and_effort_from_config_options() {
    let (peer, home) = logged_in().await;
    let work = home.path().join("work");
    let mut editor = Editor::start(&home);
    editor.initialize(false);
    let opened = new_session(&mut editor, &work, json!({ "mode": "edit" }));
    validate_acp("NewSessionResponse", &opened["result"]).unwrap_or_else(|e| panic!("{e}\n{opened}"));
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    let options = &opened["result"]["configOptions"];
    assert_eq!(options[0]["id"], "model", "{opened}");
    assert_eq!(options[0]["currentValue"], MODEL);
    let served: Vec<&Value> = options[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["value"])
        .collect();
    assert!(served.contains(&&json!(lembas_peer::VISION_MODEL)), "{served:?}");
    assert_eq!(options[1]["id"], "effort");

    let set = |value: &str, id: &str| json!({ "sessionId": session, "configId": id, "value": value });
    let picked = editor.request(
        "session/set_config_option",
        set(lembas_peer::VISION_MODEL, "model"),
    );
    validate_acp("SetSessionConfigOptionResponse", &picked["result"])
        .unwrap_or_else(|e| panic!("{e}\n{picked}"));
    assert_eq!(
        picked["result"]["configOptions"][0]["currentValue"],
        lembas_peer::VISION_MODEL
    );
    let picked = editor.request("session/set_config_option", set("high", "effort"));
    assert_eq!(
        picked["result"]["configOptions"][1]["currentValue"], "high",
        "{picked}"
    );
    for (value, id) in [
        ("turbo", "effort"),
        ("other/model", "model"),
        ("x", "temperature"),
    ] {
        let refused = editor.request("session/set_config_option", set(value, id));
        assert_eq!(error_of(&refused).0, -32602, "{id}={value}: {refused}");
    }
    // ACP's boolean value is no pick of these options; a number is no value at all.
    for value in [json!(true), json!(5)] {
        let params = json!({ "sessionId": session, "configId": "effort", "type": "boolean", "value": value });
        let refused = editor.request("session/set_config_option", params);
        assert_eq!(error_of(&refused).0, -32602, "{value}: {refused}");
    }
    peer.model().push(ModelReply::text("Deep."));
    let answer = editor.request("session/prompt", prompt_params(&session, "think"));
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let request = peer.model().requests().last().cloned().unwrap();
    assert_eq!(request["model"], lembas_peer::VISION_MODEL);
    assert_eq!(request["reasoning_effort"], "high");
    assert_eq!(editor.end_input(WAIT).code(), Some(0));
}
