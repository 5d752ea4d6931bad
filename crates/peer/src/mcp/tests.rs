//! The reference peer's `/mcp`, through the official client: the memory read and changed, the
//! scope of each call recorded, a wrong token refused, and each fault failing the client's call.

use std::time::Duration;

use rmcp::model::{ClientConfig, MetaObject};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};

use super::*;
use crate::{Peer, PeerConfig};

/// Long enough for any answer on a loaded CI machine, short enough to keep a hang test fast.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);
const HANG_NOTICED_AFTER: Duration = Duration::from_millis(500);

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(peer: &Peer, token: &str) -> Result<Client, String> {
    let transport = StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        StreamableHttpClientTransportConfig::with_uri(format!("{}{MCP_PATH}", peer.url())).auth_header(token),
    );
    match tokio::time::timeout(ANSWER_WITHIN, ClientConfig::default().serve(transport)).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("no answer".to_string()),
    }
}

fn scoped(scope: &str) -> RequestMetaObject {
    let mut meta = MetaObject::default();
    meta.insert("lembas".to_string(), json!({ "scope": scope }));
    RequestMetaObject(meta)
}

fn memory_call(arguments: Value, scope: Option<&str>) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(MEMORY_TOOL).with_arguments(json_object(arguments));
    params.meta = scope.map(scoped);
    params
}

async fn read_memory(client: &Client, scope: Option<&str>) -> (String, Option<String>) {
    let mut params = ReadResourceRequestParams::new(MEMORY_URI);
    params.meta = scope.map(scoped);
    let result = client.read_resource(params).await.unwrap();
    assert_eq!(result.contents.len(), 1);
    match &result.contents[0] {
        ResourceContents::TextResourceContents {
            text, mime_type, uri, ..
        } => {
            assert_eq!(uri, MEMORY_URI);
            (text.clone(), mime_type.clone())
        }
        other => panic!("not text: {other:?}"),
    }
}

async fn call(client: &Client, arguments: Value, scope: Option<&str>) -> (String, bool) {
    let result = client.call_tool(memory_call(arguments, scope)).await.unwrap();
    let text = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    (text, result.is_error == Some(true))
}

fn call_record(method: &str, target: &str, scope: Option<&str>) -> McpCall {
    McpCall {
        method: method.to_string(),
        target: target.to_string(),
        scope: scope.map(str::to_string),
    }
}

#[tokio::test]
async fn serves_the_memory_resource_and_tool_and_records_scopes() {
    let peer = Peer::start(PeerConfig::with_token("t")).await.unwrap();
    let client = connect(&peer, "t").await.unwrap();

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, MEMORY_TOOL);
    let schema = Value::Object((*tools[0].input_schema).clone());
    assert_eq!(schema["required"], json!(["action"]));
    assert_eq!(
        schema["properties"]["action"]["enum"],
        json!(["add", "replace", "remove"])
    );
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 1);
    assert_eq!(resources[0].uri, MEMORY_URI);

    assert_eq!(
        read_memory(&client, Some("s1")).await,
        (String::new(), Some("text/markdown".to_string()))
    );
    let added = call(
        &client,
        json!({ "action": "add", "content": "likes tea" }),
        Some("s1"),
    )
    .await;
    assert_eq!(added, ("Saved.".to_string(), false));
    call(
        &client,
        json!({ "action": "add", "content": "lives in Lyon" }),
        None,
    )
    .await;
    assert_eq!(read_memory(&client, None).await.0, "- likes tea\n- lives in Lyon");
    assert_eq!(peer.config().memory, ["likes tea", "lives in Lyon"]);

    let replaced = call(
        &client,
        json!({ "action": "replace", "old_text": "tea", "content": "likes coffee" }),
        Some("s2"),
    )
    .await;
    assert_eq!(replaced, ("Replaced.".to_string(), false));
    let removed = call(
        &client,
        json!({ "action": "remove", "old_text": "Lyon" }),
        Some("s2"),
    )
    .await;
    assert_eq!(removed, ("Removed.".to_string(), false));
    let (why, is_error) = call(&client, json!({ "action": "remove", "old_text": "Paris" }), None).await;
    assert!(is_error);
    assert!(why.contains("No memory entry"), "{why}");
    assert_eq!(read_memory(&client, Some("s2")).await.0, "- likes coffee");

    assert_eq!(
        peer.mcp_log(),
        [
            call_record("resources/read", MEMORY_URI, Some("s1")),
            call_record("tools/call", MEMORY_TOOL, Some("s1")),
            call_record("tools/call", MEMORY_TOOL, None),
            call_record("resources/read", MEMORY_URI, None),
            call_record("tools/call", MEMORY_TOOL, Some("s2")),
            call_record("tools/call", MEMORY_TOOL, Some("s2")),
            call_record("tools/call", MEMORY_TOOL, None),
            call_record("resources/read", MEMORY_URI, Some("s2")),
        ]
    );
    let _ = client.cancel().await;
    peer.stop().await;
}

#[tokio::test]
async fn preset_entries_are_read_and_a_wrong_token_is_refused() {
    let peer = Peer::start(PeerConfig::with_token("t")).await.unwrap();
    peer.set_config(|config| config.memory = vec!["a".to_string(), "b".to_string()]);
    let client = connect(&peer, "t").await.unwrap();
    assert_eq!(read_memory(&client, None).await.0, "- a\n- b");
    let _ = client.cancel().await;

    assert!(connect(&peer, "wrong").await.is_err());
    let refused = reqwest::Client::new()
        .post(format!("{}{MCP_PATH}", peer.url()))
        .bearer_auth("wrong")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let unauthenticated = reqwest::Client::new()
        .get(format!("{}{MCP_PATH}", peer.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);
    peer.stop().await;
}

fn add_x() -> CallToolRequestParams {
    memory_call(json!({ "action": "add", "content": "x" }), None)
}

#[tokio::test]
async fn a_server_error_or_garbage_fails_the_call_and_the_session_outlives_it() {
    for fault in [McpFault::ServerError, McpFault::Garbage] {
        let peer = Peer::start(PeerConfig::with_token("t")).await.unwrap();
        let client = connect(&peer, "t").await.unwrap();
        peer.set_config(|config| config.mcp_fault = Some(fault));
        let failed = tokio::time::timeout(ANSWER_WITHIN, client.call_tool(add_x())).await;
        assert!(matches!(failed, Ok(Err(_))), "{fault:?}: {failed:?}");
        assert!(peer.config().memory.is_empty(), "{fault:?}");
        // A client connecting while the fault holds fails to.
        assert!(connect(&peer, "t").await.is_err(), "{fault:?}");

        peer.set_config(|config| config.mcp_fault = None);
        let again = tokio::time::timeout(ANSWER_WITHIN, client.call_tool(add_x())).await;
        assert!(matches!(again, Ok(Ok(_))), "{fault:?}: {again:?}");
        assert_eq!(peer.config().memory, ["x"], "{fault:?}");
        drop(client);
        peer.stop().await;
    }
}

#[tokio::test]
async fn a_hang_is_never_answered_until_the_peer_stops() {
    let peer = Peer::start(PeerConfig::with_token("t")).await.unwrap();
    let client = connect(&peer, "t").await.unwrap();
    peer.set_config(|config| config.mcp_fault = Some(McpFault::Hang));
    let hung = tokio::time::timeout(HANG_NOTICED_AFTER, client.call_tool(add_x())).await;
    assert!(hung.is_err(), "{hung:?}");

    // The session outlives the hang once it is lifted.
    peer.set_config(|config| config.mcp_fault = None);
    let again = tokio::time::timeout(ANSWER_WITHIN, client.call_tool(add_x())).await;
    assert!(matches!(again, Ok(Ok(_))), "{again:?}");

    // A call still hanging when the peer stops fails then, and does not hold up the stop.
    peer.set_config(|config| config.mcp_fault = Some(McpFault::Hang));
    let hanging = tokio::spawn({
        let client = client.peer().clone();
        async move { client.call_tool(add_x()).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stopping = std::time::Instant::now();
    peer.stop().await;
    assert!(
        stopping.elapsed() < Duration::from_secs(1),
        "the hang held up the stop"
    );
    let ended = tokio::time::timeout(ANSWER_WITHIN, hanging).await;
    assert!(matches!(ended, Ok(Ok(Err(_)))), "{ended:?}");
}

#[test]
fn memory_calls_change_the_entries_or_say_why_not() {
    let mut entries = vec!["likes tea".to_string(), "tea at five".to_string()];
    let apply = |entries: &mut Vec<String>, arguments: Value| apply_memory(entries, &json_object(arguments));

    // Each refusal says why (an empty expectation: refused, whatever the words).
    let refused = [
        (
            json!({ "action": "remove", "old_text": "tea" }),
            "2 memory entries contain \"tea\"",
        ),
        (json!({ "action": "remove" }), "old_text"),
        (json!({ "action": "remove", "old_text": " " }), ""),
        (json!({ "action": "add" }), "content"),
        (json!({ "action": "replace", "old_text": "five" }), "content"),
        (json!({ "action": "forget" }), "Unknown action"),
        (json!({ "content": "x" }), "needs an action"),
    ];
    for (arguments, says) in refused {
        let why = apply(&mut entries, arguments.clone()).unwrap_err();
        assert!(why.contains(says), "{arguments}: {why}");
    }
    assert_eq!(entries, ["likes tea", "tea at five"]);

    assert_eq!(
        apply(
            &mut entries,
            json!({ "action": "replace", "old_text": "five", "content": "tea at six" })
        ),
        Ok("Replaced.")
    );
    assert_eq!(
        apply(&mut entries, json!({ "action": "remove", "old_text": "likes" })),
        Ok("Removed.")
    );
    assert_eq!(
        apply(&mut entries, json!({ "action": "add", "content": " walks " })),
        Ok("Saved.")
    );
    assert_eq!(entries, ["tea at six", "walks"]);
}

#[test]
fn memory_text_is_the_prompt_block() {
    assert_eq!(memory_text(&[]), "");
    assert_eq!(memory_text(&["a".to_string()]), "- a");
    assert_eq!(memory_text(&["a".to_string(), "b c".to_string()]), "- a\n- b c");
}
