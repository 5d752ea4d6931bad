//! The instance's memory through the link: with the `memory` scope a session reads
//! `lembas://memory` from the peer's `/mcp` as it starts (the prompt's `## Memory`), the model
//! gets the instance's `memory` tool, and every call carries the session's id as its scope;
//! without the scope, neither; a server that hangs or fails costs the memory, never the session.

use super::*;
use lembas_peer::{McpCall, McpFault};
use std::time::Instant;

/// The tools of the model's last request.
fn offered_tools(l: &Linked) -> Vec<String> {
    let model = l.model();
    offered(&model, model.requests().len() - 1)
}

/// How many times the device read `/api/v1/instance`.
fn instance_reads(peer: &Peer) -> usize {
    peer.http_log()
        .iter()
        .filter(|(_, path, _)| path == "/api/v1/instance")
        .count()
}

fn mcp_paths(peer: &Peer) -> usize {
    peer.http_log()
        .iter()
        .filter(|(_, path, _)| path == "/mcp")
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_reaches_the_prompt_and_the_tool_writes_it_with_the_chats_scope() {
    let mut l = linked("").await;
    l.peer
        .set_config(|c| c.memory = vec!["Prefers tea to coffee.".to_string()]);
    let reads_before = instance_reads(&l.peer);
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::tool_call(
        "call_mem",
        "memory",
        json!({ "action": "add", "content": "Works on the lembas project." }),
    ));
    l.model().push(reply_text("Remembered."));
    let answer = l.prompt(&session, "remember what I work on", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let system = system_text(&l);
    assert!(
        system.contains("## Memory\n\n- Prefers tea to coffee."),
        "{system}"
    );
    assert!(offered_tools(&l).contains(&"memory".to_string()));
    assert_eq!(tool_text(&l, "call_mem"), "Saved.");
    assert_eq!(
        l.peer.config().memory,
        ["Prefers tea to coffee.", "Works on the lembas project."]
    );
    // The read and the call, each with the session's id as the scope.
    let log = l.peer.mcp_log();
    let scoped = |method: &str, target: &str| McpCall {
        method: method.to_string(),
        target: target.to_string(),
        scope: Some(session.clone()),
    };
    assert!(
        log.contains(&scoped("resources/read", "lembas://memory")),
        "{log:?}"
    );
    assert!(log.contains(&scoped("tools/call", "memory")), "{log:?}");
    // The scope (at session/new) and the name (at the turn) came from one read of
    // /api/v1/instance, and a second session reads it no more.
    l.new_session("edit").await;
    assert_eq!(
        instance_reads(&l.peer) - reads_before,
        1,
        "{:?}",
        l.peer.http_log()
    );
    assert!(
        log.iter().all(|c| c.scope.as_deref() == Some(session.as_str())),
        "{log:?}"
    );

    // The prompt does not change under a session: the entry written shows in the next session.
    l.model().push(reply_text("Hi."));
    l.prompt(&session, "hello", "turn-2").await;
    assert!(!system_text(&l).contains("Works on the lembas project."));
    let second = l.new_session("edit").await;
    l.model().push(reply_text("Hi."));
    l.prompt(&second, "hello", "turn-3").await;
    assert!(system_text(&l).contains("- Works on the lembas project."));
    // Every tool call of the turn validated against ACP (the kind, the statuses).
    assert!(updates(&l.link).iter().any(|u| u["toolCallId"] == "call_mem"));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_memory_scope_there_is_no_memory_and_no_tool() {
    let mut l = linked("").await;
    l.peer.set_config(|c| {
        if let Some(instance) = c.instance.as_mut() {
            instance["scope"] = json!("models link");
        }
        c.memory = vec!["A secret the token may not read.".to_string()];
    });
    let session = l.new_session("edit").await;
    l.model().push(reply_text("Hi."));
    l.prompt(&session, "hello", "turn-1").await;
    let system = system_text(&l);
    assert!(
        !system.contains("## Memory") && !system.contains("secret"),
        "{system}"
    );
    assert!(!offered_tools(&l).contains(&"memory".to_string()));
    assert_eq!(mcp_paths(&l.peer), 0, "{:?}", l.peer.http_log());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_memory_server_that_fails_costs_the_memory_not_the_session() {
    for fault in [McpFault::ServerError, McpFault::Garbage, McpFault::Hang] {
        let mut l = linked("").await;
        l.peer.set_config(|c| c.mcp_fault = Some(fault));
        let started = Instant::now();
        let session = l.new_session("edit").await;
        // A hang is cut at the read's limit (3 s), with room for a loaded machine.
        assert!(started.elapsed() < Duration::from_secs(15), "{fault:?}");
        l.model().push(ModelReply::tool_call(
            "call_mem",
            "memory",
            json!({ "action": "add", "content": "x" }),
        ));
        l.model().push(reply_text("Could not."));
        let answer = l.prompt(&session, "remember x", "turn-1").await;
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{fault:?}: {answer}");
        let system = system_text(&l);
        assert!(
            system.contains("The instance's memory could not be read"),
            "{fault:?}: {system}"
        );
        // No tool was offered, so the call is the model's mistake, answered as such.
        assert!(!offered_tools(&l).contains(&"memory".to_string()), "{fault:?}");
        assert!(!tool_text(&l, "call_mem").is_empty());
    }
}
