//! An engine in a home of its own, in the test's process, whose model answers from a script: a
//! session's turns run with no program, no link and no socket, so a tool's judgement and result
//! are tested as a unit test would. All but the model is the device's own: the settings read from
//! the home's config, the store in its state folder, the judge, the tools and the sandbox.

use crate::{Config, Home};
use lembas_device::engine::model::{SCRIPTED_MODEL, ScriptedModel};
use lembas_device::engine::{Card, Engine, Shown, ShownUpdate, WindowOnly};
use lembas_device::events::DeviceEvent;
use lembas_device::policy::Mode;
use lembas_device::rpc::RpcError;
use lembas_device::settings::Settings;
use lembas_device::store::Record;
use lembas_device::store::record::DecisionRecord;
use lembas_protocol::SessionId;
use lembas_protocol::content::ContentBlock;
use lembas_protocol::prompt::{PromptAnswer, PromptParams};
use lembas_protocol::session::{NewSessionMeta, NewSessionParams};
use lembas_protocol::update::{SessionUpdate, ToolCallContent, ToolCallStatus};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

pub struct ScriptedEngine {
    pub home: Home,
    pub engine: Engine,
    /// The engine's model: push its answers, read the requests it got.
    pub model: ScriptedModel,
    /// Subscribed before anything ran, so no update is missed.
    updates: broadcast::Receiver<ShownUpdate>,
    seen: Vec<ShownUpdate>,
    /// Held so the engine's settings stay as they were read.
    _settings: watch::Sender<Arc<Settings>>,
}

/// What one tool call showed: its status at each update the client got, in order, the content
/// of the last one that had some, and the decision recorded for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownCall {
    pub statuses: Vec<ToolCallStatus>,
    pub content: Vec<ToolCallContent>,
    pub decision: Option<DecisionRecord>,
}

impl ScriptedEngine {
    /// An engine in `home` with `config` written there and read as the device reads it.
    pub fn start(home: Home, config: &Config) -> anyhow::Result<ScriptedEngine> {
        home.write(config);
        let settings = lembas_device::settings::load(&home.dirs())?;
        let (settings_tx, settings_rx) = watch::channel(Arc::new(settings));
        // Nobody here listens to the device's events: the updates and the cards say what a test reads.
        let (events, _) = broadcast::channel::<DeviceEvent>(64);
        let model = ScriptedModel::new();
        let engine = Engine::with_scripted_model(settings_rx, events, home.setup(), model.clone());
        let updates = engine.updates();
        Ok(ScriptedEngine {
            home,
            engine,
            model,
            updates,
            seen: Vec::new(),
            _settings: settings_tx,
        })
    }

    /// A new session in the home's `work` folder, in `mode`, on the script's model, as the link's
    /// client opens one; its id.
    pub async fn new_session(&self, mode: Mode) -> Result<SessionId, RpcError> {
        let params = NewSessionParams {
            cwd: self.home.work().display().to_string(),
            additional_directories: Vec::new(),
            mcp_servers: None,
            meta: Some(NewSessionMeta {
                mode: Some(mode),
                lembas_model: Some(SCRIPTED_MODEL.to_string()),
                ..NewSessionMeta::default()
            }),
        };
        Ok(self.engine.new_session(params).await?.session_id)
    }

    /// Sends `text` to the session. The turn runs on a task of its own, so the test can answer
    /// its cards meanwhile; the handle gives session/prompt's answer.
    pub fn prompt(&self, session_id: &str, text: &str) -> JoinHandle<Result<PromptAnswer, RpcError>> {
        let engine = self.engine.clone();
        let params = PromptParams {
            session_id: session_id.into(),
            prompt: vec![ContentBlock::text(text)],
            meta: None,
        };
        tokio::spawn(async move { engine.prompt(params).await })
    }

    /// The first approval or plan card open, once one is, waiting at most `within`.
    pub async fn card(&self, within: Duration) -> Option<Card> {
        let end = tokio::time::Instant::now() + within;
        loop {
            if let Some(card) = self.engine.cards().into_iter().next() {
                return Some(card);
            }
            if tokio::time::Instant::now() >= end {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Every update shown so far, in order.
    pub fn updates(&mut self) -> &[ShownUpdate] {
        loop {
            match self.updates.try_recv() {
                Ok(update) => self.seen.push(update),
                Err(broadcast::error::TryRecvError::Lagged(missed)) => {
                    panic!("{missed} updates were missed: the test read them too late")
                }
                Err(_) => return &self.seen,
            }
        }
    }

    /// What the tool call `tool_call_id` showed so far.
    pub fn tool_call(&mut self, tool_call_id: &str) -> ShownCall {
        let mut shown = ShownCall {
            statuses: Vec::new(),
            content: Vec::new(),
            decision: None,
        };
        for update in self.updates() {
            let (status, content) = match &update.update {
                Shown::Client(SessionUpdate::ToolCall(call)) if call.tool_call_id == tool_call_id => {
                    (call.status, Some(call.content.clone()).filter(|c| !c.is_empty()))
                }
                Shown::Client(SessionUpdate::ToolCallUpdate(call)) if call.tool_call_id == tool_call_id => {
                    (call.status, call.content.clone())
                }
                Shown::Window(WindowOnly::Decision { decision }) => {
                    if let Record::Decision(decision) = decision.as_ref()
                        && decision.tool_call_id == tool_call_id
                    {
                        shown.decision = Some(decision.clone());
                    }
                    continue;
                }
                _ => continue,
            };
            shown.statuses.push(status);
            if let Some(content) = content {
                shown.content = content;
            }
        }
        shown
    }
}
