//! The instance's side of the soak, driven in-process through the reference peer's `LinkHandle`:
//! prompts with turn ids, approvals, deletes (on the link, and from a shell while it is down),
//! terminals, and reattaching after every drop by `_lembas/session/status` as the spec says
//! (docs/protocol.md, session/status: running or queued → follow; done → import; unknown → send again
//! with the same turnId). Everything it did is kept in the [`Ledger`] the checks read.

use lembas_protocol::LinkMethod;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use anyhow::{anyhow, bail};
use base64::Engine;
use lembas_peer::LinkHandle;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::device::Device;

/// How long one request on the link may take before the soak counts the link as gone.
pub const REQUEST_WAIT: Duration = Duration::from_secs(15);

/// A delete the client made, and whether the device confirmed it.
#[derive(Debug, Clone)]
pub struct DeleteRecord {
    /// Made with `lembas sessions delete` while no link was up.
    pub offline: bool,
    /// Answered on the link, or announced with `_lembas/session/deleted`.
    pub confirmed: bool,
}

/// Everything the client did, for the checks.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Every turnId prompted, with its session.
    pub turns: BTreeMap<String, String>,
    /// Turns whose end the client learned (an answer, or status saying it was the last one done).
    pub turns_ended: BTreeSet<String>,
    pub deletes: BTreeMap<String, DeleteRecord>,
    /// Every chat completion request the scripted model got, across peer restarts.
    pub model_requests: Vec<Value>,
    pub resends: usize,
    pub approvals_answered: usize,
    pub terminals_opened: usize,
    /// Offline deletes the CLI itself refused (said, not counted as made).
    pub cli_delete_failures: Vec<String>,
}

/// What a request sent on the current link was.
enum Sent {
    Prompt(String),
    Delete(String),
}

/// What one prompt asks of the device.
#[derive(Debug, Clone, Copy)]
pub enum PromptKind {
    /// A text answer, streamed.
    Say,
    /// A command the edit mode asks about: an approval card, then the command runs.
    Approval,
    /// As `Approval`, a command that runs for a second (its process group must go with it).
    Slow,
}

pub struct Client {
    pub ledger: Ledger,
    work: std::path::PathBuf,
    /// Sessions open for prompting, with whether a turn of theirs finished (so it is in the store).
    sessions: Vec<(String, bool)>,
    /// Turns prompted and not known to have ended: turnId → (session, text).
    open: BTreeMap<String, (String, String)>,
    next_turn: u64,
    /// Requests sent on the current link.
    sent: HashMap<u64, Sent>,
}

/// The mark a turn's prompt carries, found again in the model's requests.
pub fn turn_mark(n: u64) -> String {
    format!("T{n:06}")
}

impl Client {
    pub fn new(work: std::path::PathBuf) -> Client {
        Client {
            ledger: Ledger::default(),
            work,
            sessions: Vec::new(),
            open: BTreeMap::new(),
            next_turn: 1,
            sent: HashMap::new(),
        }
    }

    /// Turns still not known to have ended.
    pub fn open_turns(&self) -> usize {
        self.open.len()
    }

    /// Deletes made on the link not yet answered.
    pub fn unconfirmed_deletes(&self) -> usize {
        self.ledger.deletes.values().filter(|d| !d.confirmed).count()
    }

    /// A new link: what the last one left is settled from its record, and its requests forgotten.
    pub fn begin_link(&mut self) {
        self.sent.clear();
    }

    /// Reads everything the device sent on `link`: answers to prompts and deletes, and
    /// `_lembas/session/deleted` notifications.
    pub fn settle(&mut self, link: &LinkHandle) {
        for message in link.received() {
            if message["method"] == LinkMethod::SessionDeleted.name() {
                if let Some(id) = message["params"]["sessionId"].as_str()
                    && let Some(d) = self.ledger.deletes.get_mut(id)
                {
                    d.confirmed = true;
                }
                continue;
            }
            if message.get("method").is_some() {
                continue;
            }
            let Some(id) = message["id"].as_u64() else {
                continue;
            };
            match self.sent.get(&id) {
                Some(Sent::Prompt(turn)) => {
                    self.open.remove(turn);
                    self.ledger.turns_ended.insert(turn.clone());
                }
                Some(Sent::Delete(session)) if message.get("result").is_some() => {
                    if let Some(d) = self.ledger.deletes.get_mut(session) {
                        d.confirmed = true;
                    }
                }
                _ => {}
            }
        }
    }

    /// Keeps a few sessions open to prompt.
    pub async fn ensure_sessions(&mut self, link: &mut LinkHandle, want: usize) -> anyhow::Result<()> {
        while self.sessions.len() < want {
            let answer = link
                .request(
                    LinkMethod::SessionNew.name(),
                    json!({ "cwd": self.work, "mcpServers": [],
                            "_meta": { "mode": "edit", "lembas_model": lembas_peer::DEFAULT_MODEL } }),
                    REQUEST_WAIT,
                )
                .await?;
            let Some(id) = answer["result"]["sessionId"].as_str() else {
                bail!("session/new failed: {answer}");
            };
            self.sessions.push((id.to_string(), false));
        }
        Ok(())
    }

    /// Sends a prompt with a new turnId on a random session; its request id.
    pub async fn prompt(&mut self, link: &mut LinkHandle, kind: PromptKind) -> anyhow::Result<u64> {
        if self.sessions.is_empty() {
            bail!("no session to prompt");
        }
        // A session may already work: the prompt then waits its turn (queued).
        let session = self.sessions[fastrand::usize(..self.sessions.len())].0.clone();
        let n = self.next_turn;
        self.next_turn += 1;
        let turn = format!("turn-{n}");
        let mark = turn_mark(n);
        let text = match kind {
            PromptKind::Say => format!("say {mark} hello from the soak"),
            PromptKind::Approval => format!("run touch {mark}.txt"),
            PromptKind::Slow => format!("run sleep 1 && touch {mark}.txt"),
        };
        self.ledger.turns.insert(turn.clone(), session.clone());
        self.open.insert(turn.clone(), (session.clone(), text.clone()));
        self.send_prompt(link, &session, &text, &turn).await
    }

    async fn send_prompt(
        &mut self,
        link: &mut LinkHandle,
        session: &str,
        text: &str,
        turn: &str,
    ) -> anyhow::Result<u64> {
        let id = link
            .send_request(
                LinkMethod::SessionPrompt.name(),
                json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }],
                        "_meta": { "lembas": { "turnId": turn } } }),
            )
            .await?;
        self.sent.insert(id, Sent::Prompt(turn.to_string()));
        Ok(id)
    }

    /// Reads the link until `wanted` matches a message (returned), answering approval cards
    /// when `answer_approvals`; `None` when `within` passed first. An error: the link ended.
    pub async fn drive(
        &mut self,
        link: &mut LinkHandle,
        within: Duration,
        answer_approvals: bool,
        wanted: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Option<Value>> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let message = match link.recv(left).await {
                Ok(m) => m,
                Err(e) if e.to_string().contains("within") => return Ok(None),
                Err(e) => return Err(e),
            };
            if answer_approvals && message["method"] == LinkMethod::RequestPermission.name() {
                let option = message["params"]["options"]
                    .as_array()
                    .and_then(|o| o.iter().find(|o| o["kind"] == "allow_once"))
                    .and_then(|o| o["optionId"].as_str())
                    .unwrap_or("once")
                    .to_string();
                link.answer(
                    message["id"].clone(),
                    json!({ "outcome": { "outcome": "selected", "optionId": option } }),
                )
                .await?;
                self.ledger.approvals_answered += 1;
            }
            if wanted(&message) {
                return Ok(Some(message));
            }
        }
    }

    /// A whole prompt: sent, approvals answered, answered (or `within` passed).
    pub async fn prompt_to_end(
        &mut self,
        link: &mut LinkHandle,
        kind: PromptKind,
        within: Duration,
    ) -> anyhow::Result<()> {
        let id = self.prompt(link, kind).await?;
        let answer = self.drive(link, within, true, |m| answer_to(m, id)).await?;
        if answer.is_some() {
            self.settle(link);
            self.mark_stored();
        }
        Ok(())
    }

    /// Sessions with a finished turn are in the store: ones `lembas sessions delete` can find.
    fn mark_stored(&mut self) {
        for (session, stored) in &mut self.sessions {
            if !*stored {
                *stored = self
                    .ledger
                    .turns
                    .iter()
                    .any(|(t, s)| s == session && self.ledger.turns_ended.contains(t));
            }
        }
    }

    /// Reattaching: asks status for every turn not known to have ended, and sends again with the
    /// same turnId the ones the device does not have running, queued or last done.
    pub async fn reattach(&mut self, link: &mut LinkHandle) -> anyhow::Result<()> {
        let open: Vec<(String, (String, String))> =
            self.open.iter().map(|(t, v)| (t.clone(), v.clone())).collect();
        for (turn, (session, text)) in open {
            if self.ledger.deletes.contains_key(&session) {
                // Deleted since: the turn went with its session.
                self.open.remove(&turn);
                continue;
            }
            let status = link
                .request(
                    LinkMethod::SessionStatus.name(),
                    json!({ "sessionId": session }),
                    REQUEST_WAIT,
                )
                .await?;
            let status = status
                .get("result")
                .ok_or_else(|| anyhow!("status failed for {session}: {status}"))?;
            let running = status["turnId"] == turn.as_str();
            let queued = status["queued"]
                .as_array()
                .is_some_and(|q| q.iter().any(|t| t == turn.as_str()));
            if running || queued {
                continue;
            }
            if status["lastTurnId"] == turn.as_str() {
                self.open.remove(&turn);
                self.ledger.turns_ended.insert(turn);
                continue;
            }
            self.ledger.resends += 1;
            self.send_prompt(link, &session, &text, &turn).await?;
        }
        Ok(())
    }

    /// Waits for the answers to every prompt sent on this link (approvals answered).
    pub async fn follow(&mut self, link: &mut LinkHandle, within: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + within;
        loop {
            self.settle(link);
            let waiting: Vec<u64> = self
                .sent
                .iter()
                .filter_map(|(id, s)| match s {
                    Sent::Prompt(t) if self.open.contains_key(t) => Some(*id),
                    _ => None,
                })
                .collect();
            if waiting.is_empty() || Instant::now() >= deadline {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            self.drive(link, left.min(Duration::from_secs(1)), true, |m| {
                m.get("method").is_none() && m["id"].as_u64().is_some_and(|id| waiting.contains(&id))
            })
            .await?;
        }
    }

    /// Sends `_lembas/session/delete` again for every delete not yet confirmed (the client keeps
    /// a delete until it is answered).
    pub async fn resend_deletes(&mut self, link: &mut LinkHandle) -> anyhow::Result<()> {
        let unconfirmed: Vec<String> = self
            .ledger
            .deletes
            .iter()
            .filter(|(_, d)| !d.confirmed && !d.offline)
            .map(|(s, _)| s.clone())
            .collect();
        for session in unconfirmed {
            self.send_delete(link, &session).await?;
        }
        Ok(())
    }

    /// Deletes a random session on the link (its answer is read when the link is settled).
    pub async fn delete_on_link(&mut self, link: &mut LinkHandle) -> anyhow::Result<()> {
        if self.sessions.is_empty() {
            return Ok(());
        }
        let (session, _) = self.sessions.remove(fastrand::usize(..self.sessions.len()));
        self.ledger.deletes.insert(
            session.clone(),
            DeleteRecord {
                offline: false,
                confirmed: false,
            },
        );
        self.send_delete(link, &session).await
    }

    async fn send_delete(&mut self, link: &mut LinkHandle, session: &str) -> anyhow::Result<()> {
        let id = link
            .send_request(LinkMethod::SessionDelete.name(), json!({ "sessionId": session }))
            .await?;
        self.sent.insert(id, Sent::Delete(session.to_string()));
        Ok(())
    }

    /// `lembas sessions delete` from a shell, for a session already in the store, while no link
    /// is up. Blocking: call it with the link down.
    pub fn delete_offline(&mut self, device: &Device) {
        let Some(at) = self.sessions.iter().position(|(_, stored)| *stored) else {
            return;
        };
        let (session, _) = self.sessions.remove(at);
        let out = device
            .command(&["sessions", "delete", &session, "--json"])
            .output();
        match out {
            Ok(out) if out.status.success() => {
                self.ledger.deletes.insert(
                    session,
                    DeleteRecord {
                        offline: true,
                        confirmed: false,
                    },
                );
            }
            Ok(out) => self.ledger.cli_delete_failures.push(format!(
                "{session}: {}",
                String::from_utf8_lossy(&out.stdout).trim()
            )),
            Err(e) => self.ledger.cli_delete_failures.push(format!("{session}: {e}")),
        }
    }

    /// Opens a terminal and makes it print a flood.
    pub async fn terminal_flood(&mut self, link: &mut LinkHandle) -> anyhow::Result<()> {
        let answer = link
            .request(
                LinkMethod::TerminalOpen.name(),
                json!({ "cols": 120, "rows": 40 }),
                REQUEST_WAIT,
            )
            .await?;
        let Some(id) = answer["result"]["terminalId"].as_str() else {
            bail!("terminal/open failed: {answer}");
        };
        self.ledger.terminals_opened += 1;
        let keys = base64::engine::general_purpose::STANDARD.encode("seq 1 300000\r");
        link.notify(
            LinkMethod::TerminalInput.name(),
            json!({ "terminalId": id, "data": keys }),
        )
        .await?;
        // Until the flood is under way.
        self.drive(link, Duration::from_secs(5), true, |m| {
            m["method"] == LinkMethod::TerminalOutput.name()
        })
        .await?;
        Ok(())
    }
}

pub fn answer_to(message: &Value, id: u64) -> bool {
    message.get("method").is_none() && message["id"].as_u64() == Some(id)
}
