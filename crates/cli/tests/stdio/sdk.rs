//! The official ACP SDK (`@agentclientprotocol/sdk`, pinned in tests/acp-client/package.json and
//! installed by scripts/setup) as the editor: it starts `lembas serve --stdio` itself and runs a
//! whole prompt through it, a permission request included. The SDK checks every message it gets
//! against its own schema.

use super::*;
use std::path::PathBuf;
use std::process::Command;

fn client_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/acp-client"))
}

/// The SDK as scripts/setup installs it; a clear failure, never a skip, when it is not there.
fn installed_sdk() -> PathBuf {
    let dir = client_dir();
    let wanted: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    let wanted = wanted["dependencies"]["@agentclientprotocol/sdk"]
        .as_str()
        .unwrap()
        .to_string();
    let installed = dir.join("node_modules/@agentclientprotocol/sdk/package.json");
    let found = std::fs::read_to_string(&installed)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|p| p["version"].as_str().map(str::to_string));
    match found {
        Some(version) if version == wanted => {}
        Some(version) => panic!(
            "the ACP SDK in {} is {version}, the tests pin {wanted}: run scripts/setup (or npm --prefix tests/acp-client ci)",
            dir.display()
        ),
        None => panic!(
            "the official ACP SDK is not installed in {}: run scripts/setup (or npm --prefix tests/acp-client ci)",
            dir.display()
        ),
    }
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "node is needed to run the ACP SDK: run scripts/setup-desktop (it installs Node)"
    );
    dir
}

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
    let output = Command::new("node")
        .arg(dir.join("drive.mjs"))
        .arg(env!("CARGO_BIN_EXE_lembas"))
        .arg(&work)
        .arg("manual")
        .arg("Write sdk.txt, please.")
        .current_dir(&dir)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("XDG_STATE_HOME", home.path().join(".local/state"))
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the SDK client failed:\n{stderr}");
    let seen: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("the SDK client printed no JSON ({e}):\n{stderr}"));

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
