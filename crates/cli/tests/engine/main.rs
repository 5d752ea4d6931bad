//! Agent sessions end to end: the real `lembas service run` against the reference peer and its
//! scripted model. Every session/update and session/request_permission the device sends is
//! validated against the official ACP schema.

mod attachments;
mod chat;
mod commands;
#[path = "../common/mod.rs"]
mod common;
mod control;
mod conversation;
mod faults;
mod files;
mod job_limits;
mod jobs;
mod keep_awake;
mod limits;
mod mcp_servers;
mod memory;
mod naming;
mod plan_state;
mod project_instructions;
mod questions;
mod sandboxed;
mod scheduled;
mod sessions;
mod show;
mod turns;
mod undo;
mod window;
mod window_methods;

use common::*;
use lembas_peer::{LinkHandle, ModelReply, Peer, PeerConfig, ScriptedModel};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(20);
pub const MODEL: &str = lembas_peer::DEFAULT_MODEL;

pub struct Linked {
    pub peer: Peer,
    pub home: Home,
    pub service: Service,
    pub link: LinkHandle,
    pub work: PathBuf,
}

/// A device whose link was dropped under it, until it links again.
pub struct Unlinked {
    pub peer: Peer,
    pub home: Home,
    pub service: Service,
    pub work: PathBuf,
}

impl Linked {
    /// The link's TCP dropped under the device, as a network that went away.
    pub fn unlinked(self) -> Unlinked {
        let Linked {
            peer,
            home,
            service,
            link,
            work,
        } = self;
        link.drop_tcp();
        Unlinked {
            peer,
            home,
            service,
            work,
        }
    }

    /// Dropped, and the device's next link taken.
    pub async fn linked_again(self) -> Linked {
        self.unlinked().relinked().await
    }
}

impl Unlinked {
    pub async fn relinked(self) -> Linked {
        let link = relink(&self.peer).await;
        let Unlinked {
            peer,
            home,
            service,
            work,
        } = self;
        Linked {
            peer,
            home,
            service,
            link,
            work,
        }
    }
}

/// A remote block allowing `<home>/work`, trusted, with `extra` lines (e.g. `  max_mode: auto\n`).
pub fn remote(work: &Path, extra: &str) -> String {
    let max_mode = if extra.contains("max_mode") {
        ""
    } else {
        "  max_mode: edit\n"
    };
    format!(
        "remote:\n  enabled: true\n{max_mode}  roots:\n    - {w}\n{extra}trusted:\n  - {w}\n",
        w = work.display()
    )
}

pub async fn linked(extra: &str) -> Linked {
    linked_with_env(extra, &[]).await
}

/// As [`linked`], the service started with `env` (test-only knobs).
pub async fn linked_with_env(extra: &str, env: &[(&str, &str)]) -> Linked {
    linked_at(Home::new(), extra, env).await
}

/// As [`linked_with_env`], in `home`.
pub async fn linked_at(home: Home, extra: &str, env: &[(&str, &str)]) -> Linked {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let work = home.path().join("work");
    home.config_for(&peer.url(), &remote(&work, extra));
    let service = home.service_with_env(env);
    let link = relink(&peer).await;
    Linked {
        peer,
        home,
        service,
        link,
        work,
    }
}

/// The next link of the device, hello and initialize done.
pub async fn relink(peer: &Peer) -> LinkHandle {
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    link
}

impl Linked {
    pub fn model(&self) -> ScriptedModel {
        self.peer.model()
    }

    /// session/new in `<home>/work` (or `cwd`) with `meta`; the whole answer.
    pub async fn new_session_at(&mut self, cwd: &Path, meta: Value) -> Value {
        self.link
            .request(
                "session/new",
                json!({ "cwd": cwd, "mcpServers": [], "_meta": meta }),
                WAIT,
            )
            .await
            .unwrap()
    }

    /// A session in `<home>/work` on the default model; its id.
    pub async fn new_session(&mut self, mode: &str) -> String {
        let work = self.work.clone();
        let answer = self
            .new_session_at(&work, json!({ "mode": mode, "lembas_model": MODEL }))
            .await;
        answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("session/new failed: {answer}"))
            .to_string()
    }

    /// Sends session/prompt without waiting; its request id.
    pub async fn send_prompt(&mut self, session: &str, text: &str, turn_id: &str) -> u64 {
        self.link
            .send_request(
                "session/prompt",
                json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }],
                        "_meta": { "lembas": { "turnId": turn_id } } }),
            )
            .await
            .unwrap()
    }

    /// A whole prompt, every approval card it brings answered with `option` (`once`, `deny`):
    /// the prompt's answer and how many cards came.
    pub async fn prompt_answering(
        &mut self,
        session: &str,
        text: &str,
        turn_id: &str,
        option: &str,
    ) -> (Value, usize) {
        let prompt = self.send_prompt(session, text, turn_id).await;
        let mut cards = 0;
        loop {
            let message = self.link.recv(WAIT).await.unwrap();
            if message["id"] == json!(prompt) && message.get("method").is_none() {
                return (message, cards);
            }
            if message["method"] == "session/request_permission" {
                cards += 1;
                self.choose(&message, option).await;
            }
        }
    }

    /// Answers an approval card with one of its options (`once`, `session`, `deny`).
    pub async fn choose(&mut self, card: &Value, option: &str) {
        let answer = json!({ "outcome": { "outcome": "selected", "optionId": option } });
        self.link.answer(card["id"].clone(), answer).await.unwrap();
    }

    /// A whole prompt: sent and answered (nobody asked anything meanwhile).
    pub async fn prompt(&mut self, session: &str, text: &str, turn_id: &str) -> Value {
        let id = self.send_prompt(session, text, turn_id).await;
        self.link.recv_answer(id, WAIT).await.unwrap()
    }
}

/// `_lembas/session/status`'s result for `session`, asked over the test's link.
pub async fn session_status(l: &mut Linked, session: &str) -> Value {
    let answer = l
        .link
        .request("_lembas/session/status", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    answer["result"].clone()
}

/// Every session/update the device sent on this link, each checked against the ACP schema.
pub fn updates(link: &LinkHandle) -> Vec<Value> {
    link.received()
        .into_iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| {
            let params = m["params"].clone();
            validate_acp("SessionNotification", &params)
                .unwrap_or_else(|e| panic!("session/update does not validate: {e}\n{params}"));
            params["update"].clone()
        })
        .collect()
}

/// The `_lembas/event` types sent on this link, in order.
pub fn event_types(link: &LinkHandle) -> Vec<String> {
    link.received()
        .into_iter()
        .filter(|m| m["method"] == "_lembas/event")
        .map(|m| m["params"]["event"]["type"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The agent's text as the client saw it streamed.
pub fn streamed_text(link: &LinkHandle) -> String {
    updates(link)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or("").to_string())
        .collect()
}

pub fn error_of(answer: &Value) -> (i64, String) {
    (
        answer["error"]["code"].as_i64().unwrap_or(0),
        answer["error"]["message"].as_str().unwrap_or("").to_string(),
    )
}

/// The text the model read back for `call_id`.
/// The tool names the model was offered in its `n`th request.
pub fn offered(model: &ScriptedModel, n: usize) -> Vec<String> {
    model.requests()[n]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// The system text of the model's last request.
pub fn system_text(l: &Linked) -> String {
    last_system_text(&l.model())
}

pub fn tool_text(l: &Linked, call_id: &str) -> String {
    read_by_model(&l.model(), call_id)
}

/// The model writes `a.txt`, then `b.txt` (calls `call_1`, `call_2`), then says it is done: for
/// what "always in this session" covers.
pub fn two_writes(l: &Linked) {
    for (call, name, text) in [("call_1", "a.txt", "a"), ("call_2", "b.txt", "b")] {
        l.model().push(ModelReply::tool_call(
            call,
            "write",
            json!({ "path": name, "content": text }),
        ));
    }
    l.model().push(reply_text("Both written."));
}

/// How many approval cards the device sent on this link.
pub fn cards_asked(link: &LinkHandle) -> usize {
    link.received()
        .iter()
        .filter(|m| m["method"] == "session/request_permission")
        .count()
}

pub fn reply_text(text: &str) -> ModelReply {
    ModelReply::text(text)
}
