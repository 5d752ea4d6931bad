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
        // The device's words for the call: the tool is the server's, out of its sight.
        assert_eq!(
            permission["toolCall"]["title"],
            "Use the tool echo of the MCP server example"
        );
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
