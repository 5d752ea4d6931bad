//! A session on the link, the peer's scripted model playing the model: the file tools write, read
//! and edit a file in the root; `lembas approvals` lists and allows a card over the control pipe;
//! the bash tool is not offered where the prefix has no Git Bash, and the device says why once.

use lembas_peer::{LinkHandle, ModelReply, ScriptedModel};
use serde_json::{Value, json};

use crate::{Device, WAIT, Wine, Work, read};

/// What the device says where there is no Git Bash (`commands_shell::NO_GIT_BASH`'s start).
const NO_GIT_BASH: &str = "Git for Windows' bash.exe was not found";

/// In edit mode, in the trusted root: `write` makes `notes.txt`, `read` reads it back, `edit`
/// changes it; the turn ends, the file on disk has the edit, and the model read what was written.
pub async fn file_tools(link: &mut LinkHandle, model: &ScriptedModel, work: &Work) -> Result<(), String> {
    let session = link
        .new_session(std::path::Path::new(&work.windows), "edit", WAIT)
        .await
        .map_err(|e| format!("session/new in {} failed: {e}", work.windows))?;
    for (id, tool, arguments) in [
        (
            "call_write",
            "write",
            json!({ "path": "notes.txt", "content": "one\n" }),
        ),
        ("call_read", "read", json!({ "path": "notes.txt" })),
        (
            "call_edit",
            "edit",
            json!({ "path": "notes.txt", "old_string": "one", "new_string": "two" }),
        ),
    ] {
        model.push(ModelReply::tool_call(id, tool, arguments));
    }
    model.push(ModelReply::text("Done."));
    let prompt = link
        .prompt(&session, "write, read and edit notes.txt")
        .await
        .map_err(|e| format!("session/prompt was not sent: {e}"))?;
    let answer = answer_without_cards(link, prompt).await?;
    if answer["result"]["stopReason"] != "end_turn" {
        return Err(format!("the file tools' turn did not end well: {answer}"));
    }
    let on_disk = read(&work.native.join("notes.txt"))?;
    if on_disk != "two\n" {
        return Err(format!(
            "notes.txt holds {on_disk:?} after write and edit, not \"two\\n\""
        ));
    }
    let read_back = tool_result(model, "call_read")?;
    if !read_back.contains("one") {
        return Err(format!(
            "the model's read of notes.txt did not give what was written: {read_back:?}"
        ));
    }
    let offered = offered_tools(model)?;
    for tool in ["read", "write", "edit"] {
        if !offered.iter().any(|name| name == tool) {
            return Err(format!("the {tool} tool is not offered: {offered:?}"));
        }
    }
    if offered.iter().any(|name| name == "bash") {
        return Err(format!(
            "the bash tool is offered with no Git Bash in the prefix: {offered:?}"
        ));
    }
    println!(
        "file tools: write, read and edit in {}; notes.txt holds {on_disk:?}; offered {offered:?}",
        work.windows
    );
    Ok(())
}

/// In manual mode a write asks; `lembas approvals --json` lists the card and `lembas approvals
/// allow` answers it over the control pipe: the client is told it is settled, the turn ends and
/// the file is written.
pub async fn approvals(
    wine: &Wine,
    link: &mut LinkHandle,
    model: &ScriptedModel,
    work: &Work,
) -> Result<(), String> {
    let session = link
        .new_session(std::path::Path::new(&work.windows), "manual", WAIT)
        .await
        .map_err(|e| format!("session/new in manual mode failed: {e}"))?;
    model.push(ModelReply::tool_call(
        "call_card",
        "write",
        json!({ "path": "approved.txt", "content": "yes\n" }),
    ));
    model.push(ModelReply::text("Written."));
    let prompt = link
        .prompt(&session, "write approved.txt")
        .await
        .map_err(|e| format!("session/prompt was not sent: {e}"))?;
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .map_err(|e| format!("the write in manual mode asked nothing: {e}"))?;
    let listed = wine.run_saying(&["approvals", "--json"], "call_card")?;
    let listed: Value = serde_json::from_slice(&listed.stdout)
        .map_err(|e| format!("lembas approvals --json is not JSON: {e}"))?;
    let waiting = listed
        .as_array()
        .and_then(|cards| cards.iter().find(|c| c["id"] == "call_card"))
        .ok_or_else(|| format!("lembas approvals does not list the card: {listed}"))?;
    if waiting["session_id"] != session.as_str() || waiting["title"] != card["params"]["toolCall"]["title"] {
        return Err(format!(
            "the card listed is not the one asked: {waiting} against {card}"
        ));
    }
    wine.run_saying(&["approvals", "allow", "call_card"], "Allowed call_card")?;
    let settled = link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .map_err(|e| format!("the client was not told the card is settled: {e}"))?;
    if settled["params"] != json!({ "sessionId": session, "toolCallId": "call_card" }) {
        return Err(format!("the settled notification names another card: {settled}"));
    }
    let answer = link
        .recv_answer(prompt, WAIT)
        .await
        .map_err(|e| format!("the turn did not end after the card was allowed: {e}"))?;
    if answer["result"]["stopReason"] != "end_turn" {
        return Err(format!("the approved turn did not end well: {answer}"));
    }
    let written = read(&work.native.join("approved.txt"))?;
    if written != "yes\n" {
        return Err(format!("approved.txt holds {written:?}, not \"yes\\n\""));
    }
    println!("approvals: the card listed and allowed over the control pipe; approved.txt written");
    Ok(())
}

/// The device said once, in its log, why commands cannot run, however many steps built their
/// tools; and it warned of nothing else (a turn it could not store, say).
pub fn bash_said_once(device: &Device) -> Result<(), String> {
    let log = device.said();
    let times = log.matches(NO_GIT_BASH).count();
    if times != 1 {
        return Err(format!(
            "the device said {times} times that Git Bash is missing (once is right): {log}"
        ));
    }
    let warned: Vec<&str> = log
        .lines()
        .filter(|line| (line.contains(" WARN ") || line.contains(" ERROR ")) && !line.contains(NO_GIT_BASH))
        .collect();
    if !warned.is_empty() {
        return Err(format!("the device warned while it worked: {warned:#?}"));
    }
    println!("commands: no Git Bash in the prefix; the device said so once, the bash tool was not offered");
    Ok(())
}

/// The prompt's answer, every message meanwhile let by; a card is a failure (the root is trusted
/// and the mode is edit: the file tools ask nothing there).
async fn answer_without_cards(link: &mut LinkHandle, prompt: u64) -> Result<Value, String> {
    loop {
        let message = link
            .recv(WAIT)
            .await
            .map_err(|e| format!("the turn did not end: {e}"))?;
        if message["id"] == json!(prompt) && message.get("method").is_none() {
            return Ok(message);
        }
        if message["method"] == "session/request_permission" {
            return Err(format!(
                "a file tool asked in edit mode in a trusted root: {message}"
            ));
        }
    }
}

/// The result the model was sent for the call `id`.
fn tool_result(model: &ScriptedModel, id: &str) -> Result<String, String> {
    model
        .requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .rfind(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .ok_or_else(|| format!("the model was never sent a result for {id}"))
}

/// The tools the model's last request offered, by name.
fn offered_tools(model: &ScriptedModel) -> Result<Vec<String>, String> {
    let requests = model.requests();
    let last = requests.last().ok_or("the model got no request")?;
    Ok(last["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}
