//! The demo's chat: what LLeMbas does when a person opens an agent chat on a linked computer, shown
//! as it happens. One session in the device's first folder on the demo model, one prompt that makes
//! the model ask for a command, the approval card allowed once (a person would click it, and with
//! `person_answers` one does, on the device), the command's output streamed back, the turn's end.

use lembas_protocol::LinkMethod;
use std::time::Duration;

use anyhow::{Context, bail};
use lembas_peer::{DEFAULT_MODEL, LinkHandle};
use serde_json::{Value, json};

const STEP_WAIT: Duration = Duration::from_secs(120);
/// How long the card stays up before the demo allows it, so a person watching can read it.
const CARD_SHOWN: Duration = Duration::from_secs(2);

/// What the demo chat sends and who answers its cards.
pub struct Chat {
    pub text: String,
    /// A scheduled run (docs/protocol.md "Starting a scheduled turn"), as a schedule running on the linked
    /// computer would start it.
    pub scheduled: bool,
    /// The cards wait for a person on the device (the tray app, `lembas approvals`); the demo
    /// does not click Allow.
    pub person_answers: bool,
    /// How the viewer answers `_lembas/show`: `None` shows the file, `Some(reason)` refuses it.
    pub not_shown: Option<String>,
    /// How long after initialize the chat starts.
    pub after: Duration,
}

pub async fn run(link: &mut LinkHandle, initialize: &Value, chat: &Chat) -> anyhow::Result<()> {
    tokio::time::sleep(chat.after).await;
    let (text, scheduled) = (chat.text.as_str(), chat.scheduled);
    let run = json!({ "schedule_id": "demo-schedule", "run_id": "demo-run-1", "title": "Demo schedule",
                      "mode": "edit", "approval_wait_s": 1800 });
    let lembas = if scheduled {
        json!({ "scheduled": run })
    } else {
        json!({})
    };
    let folder = initialize
        .pointer("/_meta/lembas/limits/roots/0")
        .and_then(Value::as_str)
        .context("the device allows no folder for remote work, so there is nowhere to chat")?
        .to_string();
    let opened = link
        .request(
            LinkMethod::SessionNew.name(),
            json!({ "cwd": folder, "mcpServers": [], "_meta": { "mode": "edit", "lembas_model": DEFAULT_MODEL, "lembas": lembas } }),
            STEP_WAIT,
        )
        .await?;
    let Some(session) = opened
        .pointer("/result/sessionId")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        bail!("the device did not open a session: {opened}");
    };
    println!("chat: session {session} in {folder} on {DEFAULT_MODEL}");
    if scheduled {
        println!("chat: a scheduled run (Demo schedule, run demo-run-1) › {text}");
    } else {
        println!("chat: you › {text}");
    }
    let mut lembas = lembas;
    lembas["turnId"] = json!("demo-turn-1");
    let id = link
        .send_request(
            LinkMethod::SessionPrompt.name(),
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }],
                    "_meta": { "lembas": lembas } }),
        )
        .await?;
    loop {
        let message = link.recv(STEP_WAIT).await?;
        if message.get("id").and_then(Value::as_u64) == Some(id) && message.get("method").is_none() {
            println!(
                "chat: turn ended: {}",
                message
                    .get("result")
                    .or(message.get("error"))
                    .unwrap_or(&Value::Null)
            );
            return Ok(());
        }
        match message
            .get("method")
            .and_then(Value::as_str)
            .and_then(LinkMethod::from_name)
        {
            Some(LinkMethod::SessionUpdate) => show_update(&message["params"]["update"]),
            // Answered on the device (first answer wins): LLeMbas takes its card down.
            Some(LinkMethod::PermissionSettled) => println!(
                "chat: answered on the computer: card {} taken down",
                message["params"]["toolCallId"].as_str().unwrap_or("?")
            ),
            Some(LinkMethod::Show) => {
                let file = &message["params"];
                println!(
                    "chat: shown {} ({}{}, {} bytes)",
                    file["path"].as_str().unwrap_or("?"),
                    file["kind"].as_str().unwrap_or("?"),
                    file["language"]
                        .as_str()
                        .map(|l| format!(" {l}"))
                        .unwrap_or_default(),
                    file["text"].as_str().map_or(0, str::len),
                );
                let answer = chat.not_shown.as_deref().map_or(Ok(()), Err);
                link.answer_show(&message, answer).await?;
            }
            Some(LinkMethod::RequestPermission) => {
                let card = &message["params"];
                println!(
                    "chat: ┌ approval asked: {} ({})\nchat: │ {}\nchat: └ options: Allow · Always allow in this session · Deny",
                    card["toolCall"]["title"].as_str().unwrap_or("?"),
                    card["toolCall"]["kind"].as_str().unwrap_or("?"),
                    card["_meta"]["lembas"]["reason"].as_str().unwrap_or(""),
                );
                if chat.person_answers {
                    println!(
                        "chat: waiting for you: answer it in the tray app (its notification or window), or run `lembas approvals allow {}`",
                        card["toolCall"]["toolCallId"].as_str().unwrap_or("?")
                    );
                    continue;
                }
                tokio::time::sleep(CARD_SHOWN).await;
                println!("chat: the demo person clicks Allow");
                link.answer(
                    message["id"].clone(),
                    json!({ "outcome": { "outcome": "selected", "optionId": "once" } }),
                )
                .await?;
            }
            _ => {}
        }
    }
}

fn show_update(update: &Value) {
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    match update["sessionUpdate"].as_str() {
        Some("agent_message_chunk") => println!("chat: agent › {}", text(&update["content"]["text"])),
        Some("agent_thought_chunk") => println!("chat: agent thinks › {}", text(&update["content"]["text"])),
        Some("tool_call") => println!(
            "chat: tool {} {} ({})",
            text(&update["toolCallId"]),
            text(&update["title"]),
            text(&update["status"])
        ),
        Some("tool_call_update") => {
            let output = update
                .pointer("/content/0/content/text")
                .map(text)
                .unwrap_or_default();
            println!(
                "chat: tool {} {} {}",
                text(&update["toolCallId"]),
                text(&update["status"]),
                output.trim_end()
            );
        }
        _ => {}
    }
}
