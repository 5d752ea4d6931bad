//! Path escapes, end to end: every attempt in [`attempts`] tried on every entry point that takes
//! a path ([`entries`]): `_lembas/directories`, session/new's cwd, `_lembas/terminal/open`,
//! `_lembas/monitor`, every file tool the model is offered, `show` included (called by the peer's scripted model)
//! and `@path` mentions. Each is refused with a sentence naming why; no secret marker reaches the
//! peer; nothing outside the root or protected changes. The root itself is configured through a
//! symlink. `race` swaps a symlink in while calls run.

mod attempts;
#[path = "../common/mod.rs"]
mod common;
mod entries;
// renameat2 and /proc: Linux only.
#[cfg(target_os = "linux")]
mod race;
mod world;

use attempts::{Attempt, MISSING, NOT_A_FOLDER, NOT_ABSOLUTE, Target};
use common::*;
use entries::{FOLDER_ENTRIES, TOOLS, may_land_inside, tool_arguments};
use lembas_peer::{LinkHandle, ModelReply, Part, Peer, PeerConfig};
use serde_json::{Value, json};
use std::time::Duration;
use world::{MARKER, World};

const WAIT: Duration = Duration::from_secs(20);

/// The spelling a folder entry point gets: relative ones joined to the session's folder (those
/// entry points take absolute paths only), `~` ones as written (they expand nothing).
fn as_folder(attempt: &Attempt, world: &World) -> String {
    if attempt.path.starts_with('/') || attempt.path.starts_with('~') {
        attempt.path.clone()
    } else {
        format!("{}/{}", world.work.display(), attempt.path)
    }
}

fn names_why(message: &str, why: &[&str]) -> bool {
    why.iter().any(|w| message.contains(w))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_attempt_is_refused_at_every_entry_point() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let world = World::build(&home.path());
    let root = world.root_link();
    home.config_for(
        &peer.url(),
        &format!(
            "remote:\n  enabled: true\n  max_mode: auto\n  terminal: true\n  scheduled: true\n  roots:\n    - {r}\ntrusted:\n  - {r}\n",
            r = root.display()
        ),
    );
    std::fs::write(home.path().join(".bashrc"), "PS1='$ '\n").unwrap();
    let _service = home.service_with_env(&[("SHELL", "/bin/bash")]);
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    let before = world.guarded();

    let (method, params) = entries::FolderEntry::SessionNew.request(&world.work.to_string_lossy());
    let opened = link.request(method, params, WAIT).await.unwrap();
    let session = opened["result"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("the session's own folder is refused: {opened}"))
        .to_string();

    let attempts = attempts::attempts(&world);
    assert!(attempts.len() >= 40, "{} attempts", attempts.len());
    let mut wrong = Vec::new();
    for (n, attempt) in attempts.iter().enumerate() {
        wrong.extend(folder_entries(&mut link, attempt, &world).await);
        wrong.extend(tools_and_mention(&mut link, &peer, &session, n, attempt).await);
    }
    assert!(
        wrong.is_empty(),
        "{} of {} tries not refused as they should be:\n{}",
        wrong.len(),
        attempts.len() * (FOLDER_ENTRIES.len() + TOOLS.len() + 1),
        wrong.join("\n")
    );

    // None read: no marker in anything the peer received, from the device or in the model's
    // requests.
    let seen = serde_json::to_string(&link.received()).unwrap();
    assert!(!seen.contains(MARKER), "a secret reached the client");
    let asked = serde_json::to_string(&peer.model().requests()).unwrap();
    assert!(!asked.contains(MARKER), "a secret reached the model");
    // None written: every outside and protected file as it was, and nothing new among them.
    assert_eq!(world.guarded(), before, "an outside or protected file changed");
}

/// The folder entry points: -32602 with the reason (monitor's with `data.reason: "folder"`).
async fn folder_entries(link: &mut LinkHandle, attempt: &Attempt, world: &World) -> Vec<String> {
    let folder = as_folder(attempt, world);
    // A folder that is not there is refused for that, whatever it would have been.
    let mut why = attempt.why.to_vec();
    why.push(MISSING);
    if attempt.target == Target::File {
        why.push(NOT_A_FOLDER);
    }
    if folder.starts_with('~') {
        why.push(NOT_ABSOLUTE);
    }
    let mut wrong = Vec::new();
    for entry in FOLDER_ENTRIES {
        let (method, params) = entry.request(&folder);
        let answer = link.request(method, params, WAIT).await.unwrap();
        let error = &answer["error"];
        let message = error["message"].as_str().unwrap_or_default();
        let monitor_reason = entry != entries::FolderEntry::Monitor || error["data"]["reason"] == "folder";
        if error["code"] != -32602 || !names_why(message, &why) || !monitor_reason {
            wrong.push(format!("{:?} on {entry:?}: {answer}", attempt.name));
        }
    }
    wrong
}

/// One turn: the prompt mentions the path, and the model calls every tool on it at once.
async fn tools_and_mention(
    link: &mut LinkHandle,
    peer: &Peer,
    session: &str,
    n: usize,
    attempt: &Attempt,
) -> Vec<String> {
    let id = |tool: &str| format!("call_{n}_{tool}");
    let parts = TOOLS
        .iter()
        .map(|tool| Part::ToolCall {
            id: id(tool),
            name: tool.to_string(),
            arguments: tool_arguments(tool, &attempt.path).to_string(),
        })
        .collect();
    peer.model().push(ModelReply::Stream {
        parts,
        finish_reason: "tool_calls".into(),
    });
    peer.model().push(ModelReply::text("done"));
    let typed = format!("look at @{} please", attempt.path);
    let asked_before = peer.model().requests().len();
    let prompt = link
        .send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": typed }],
                    "_meta": { "lembas": { "turnId": format!("t{n}") } } }),
        )
        .await
        .unwrap();
    // Shows are answered as LLeMbas's viewer does: what a show sends is checked for the marker with
    // everything else the client received.
    let answer = loop {
        let message = match link.recv(WAIT).await {
            Ok(message) => message,
            Err(e) => return vec![format!("{:?}: the turn did not end: {e}", attempt.name)],
        };
        if message["id"] == json!(prompt) && message.get("method").is_none() {
            break message;
        }
        if message["method"] == "_lembas/show" {
            link.answer_show(&message, Ok(())).await.unwrap();
        }
    };
    let mut wrong = Vec::new();
    if answer["result"]["stopReason"] != "end_turn" {
        return vec![format!("{:?}: the turn did not end: {answer}", attempt.name)];
    }
    let requests = peer.model().requests();
    let (first, second) = (&requests[asked_before], &requests[asked_before + 1]);
    // The mention: the prompt goes to the model as typed, nothing attached.
    let user = first["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].clone())
        .unwrap_or_default();
    if user != json!(typed) {
        wrong.push(format!("{:?} on @mention: {user}", attempt.name));
    }
    // Each tool: refused with a sentence naming why, reported failed to the client.
    let updates: Vec<Value> = link
        .received()
        .into_iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| m["params"]["update"].clone())
        .collect();
    for tool in TOOLS {
        let result = second["messages"]
            .as_array()
            .and_then(|m| {
                m.iter()
                    .find(|m| m["role"] == "tool" && m["tool_call_id"] == id(tool))
            })
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        let status = updates
            .iter()
            .rev()
            .find(|u| u["toolCallId"] == id(tool) && u["status"].is_string())
            .map(|u| u["status"].clone())
            .unwrap_or_default();
        let refused = status == "failed" && names_why(&result, attempt.why);
        let landed_inside = attempt.inside_name && may_land_inside(tool) && status == "completed";
        if !(refused || landed_inside) {
            wrong.push(format!("{:?} on {tool}: {status} {result:?}", attempt.name));
        }
    }
    wrong
}
