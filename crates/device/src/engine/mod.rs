//! The agent engine: sessions that run turns on the instance's models, here, within the person's
//! limits (ENGINE.md). It belongs to the device runtime, not to a link: a turn running when the link
//! drops goes on, its approval cards stay open, and the next link is attached to the same sessions.
//! A link only routes requests and events here.

mod approvals;
mod ask;
mod attachments;
mod commands;
mod conversation;
mod files;
mod live;
mod methods;
pub mod model;
mod prompt;
mod session;
pub mod show;
mod tool_call;
mod turn;

use approvals::PERMISSION;
pub use approvals::{Answer, AnsweredBy, Card, PLAN};
pub use live::{LiveSession, SessionUpdate, transcript_of};

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

use crate::events::DeviceEvent;
use crate::keychain::{self, Token};
use crate::link::client::ClientLink;
use crate::policy::roots::FolderRules;
use crate::rpc::RpcError;
use crate::settings::Settings;
use crate::store::Store;
use crate::tools::ToolContext;
use session::Session;

/// How often the engine looks for sessions deleted from a shell (`lembas sessions delete`).
const DELETED_POLL: Duration = Duration::from_secs(1);

/// Cheap to clone: every clone is the same engine.
#[derive(Clone)]
pub struct Engine(Arc<Inner>);

struct Inner {
    settings: watch::Receiver<Arc<Settings>>,
    events: broadcast::Sender<DeviceEvent>,
    store: Store,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    client: Mutex<Option<ClientLink>>,
    approvals: approvals::Approvals,
    http: reqwest::Client,
    token: tokio::sync::Mutex<Option<Token>>,
    /// Turns running or waiting, over all sessions: the link counts as working while any is.
    active_turns: std::sync::atomic::AtomicUsize,
    /// Serves an editor on `lembas serve --stdio` rather than the instance's link.
    editor: bool,
    /// The request showing each open card to a client that takes no `_lembas/permission/settled`
    /// (by tool call id: the link's serial and the request id), so a card taken down here can be
    /// taken down there with ACP's own `$/cancel_request`.
    card_requests: Mutex<HashMap<String, (u64, Value)>>,
    /// Capability `files`: folder indexes and what each session used recently.
    files: crate::files::Files,
    /// Every session/update, for this computer's window (bounded: a slow reader lags).
    updates: broadcast::Sender<SessionUpdate>,
    /// What sessions showed, for the desktop's viewer.
    shelf: show::Shelf,
}

impl Engine {
    pub fn new(settings: watch::Receiver<Arc<Settings>>, events: broadcast::Sender<DeviceEvent>) -> Engine {
        Engine::with_store(settings, events, Store::open_default())
    }

    /// The engine of `lembas serve --stdio`: its client is an editor, which never hears of the
    /// deletes kept for the instance, and may leave the model to the instance's default.
    pub fn for_editor(
        settings: watch::Receiver<Arc<Settings>>,
        events: broadcast::Sender<DeviceEvent>,
    ) -> Engine {
        Engine::build(settings, events, Store::open_default(), true)
    }

    pub fn with_store(
        settings: watch::Receiver<Arc<Settings>>,
        events: broadcast::Sender<DeviceEvent>,
        store: Store,
    ) -> Engine {
        Engine::build(settings, events, store, false)
    }

    fn build(
        settings: watch::Receiver<Arc<Settings>>,
        events: broadcast::Sender<DeviceEvent>,
        store: Store,
        editor: bool,
    ) -> Engine {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .user_agent(concat!("lembas/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        if let Err(e) = store.prune_turns(std::time::SystemTime::now()) {
            tracing::warn!("old turn files could not be pruned: {e}");
        }
        Engine(Arc::new(Inner {
            settings,
            events,
            store,
            sessions: Mutex::new(HashMap::new()),
            client: Mutex::new(None),
            approvals: Default::default(),
            http,
            token: tokio::sync::Mutex::new(None),
            active_turns: Default::default(),
            editor,
            card_requests: Mutex::default(),
            files: Default::default(),
            updates: broadcast::channel(live::STREAM).0,
            shelf: Default::default(),
        }))
    }

    pub(crate) fn serves_editor(&self) -> bool {
        self.0.editor
    }

    /// Cancels every turn, running or waiting, until none is left or `within` has passed (an
    /// editor's input ended); `true` when none is left. A turn that ended has its records on disk.
    pub async fn cancel_all(&self, within: Duration) -> bool {
        let end = tokio::time::Instant::now() + within;
        loop {
            if !self.busy() {
                return true;
            }
            if tokio::time::Instant::now() >= end {
                return false;
            }
            // Again on every round: a prompt that was waiting its turn starts after the first cancel.
            let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
            for session in sessions {
                session.cancel();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Watches for deletes made from a shell while this runtime runs, and tells the client.
    pub fn spawn_deleted_watch(&self) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.0);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(DELETED_POLL).await;
                let Some(inner) = weak.upgrade() else { return };
                Engine(inner).send_deletes().await;
            }
        })
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.0.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn client(&self) -> Option<ClientLink> {
        self.0.client.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn settings(&self) -> Arc<Settings> {
        self.0.settings.borrow().clone()
    }

    pub(crate) fn store(&self) -> &Store {
        &self.0.store
    }

    pub(crate) fn files(&self) -> &crate::files::Files {
        &self.0.files
    }

    pub(crate) fn shelf(&self) -> &show::Shelf {
        &self.0.shelf
    }

    /// The files sessions showed that are still kept, newest first; only `session_id`'s when given.
    pub fn shown_list(&self, session_id: Option<&str>) -> Vec<show::ShownFile> {
        self.0.shelf.list(session_id)
    }

    /// One shown file with its text; `None` when it is not (or no longer) kept.
    pub fn shown_read(&self, id: &str) -> Option<(show::ShownFile, Arc<str>)> {
        self.0.shelf.read(id)
    }

    pub(crate) fn device_event(&self, event: DeviceEvent) {
        let _ = self.0.events.send(event);
    }

    /// Any turn running or waiting: closing the link now would not stop it, but a limits redial
    /// waits for quiet anyway so the instance is not surprised mid-turn.
    pub fn busy(&self) -> bool {
        self.0.active_turns.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// The client of a new link, once initialize is answered: it is shown every card still open and
    /// told of every delete it has not heard of.
    pub async fn attach(&self, client: ClientLink) {
        *self.0.client.lock().unwrap_or_else(|p| p.into_inner()) = Some(client.clone());
        for card in self.0.approvals.cards() {
            // A question or plan waits for a client that takes them, or for its timeout.
            if card.method == PERMISSION || client.takes_cards() {
                self.send_card(&client, card.method, card.tool_call_id, card.params);
            }
        }
        self.send_deletes().await;
        // Taken over by this link: the client hears each session's commands.
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        for session in sessions {
            commands::tell(self, &session, false).await;
        }
    }

    /// After session/new's answer went out (capability `commands`): its commands follow.
    pub async fn session_opened(&self, session_id: &str) {
        let session = self.sessions().get(session_id).cloned();
        if let Some(session) = session {
            commands::tell(self, &session, false).await;
        }
    }

    /// The link `serial` ended; a newer link stays attached.
    pub fn detach(&self, serial: u64) {
        let mut client = self.0.client.lock().unwrap_or_else(|p| p.into_inner());
        if client.as_ref().is_some_and(|c| c.serial == serial) {
            *client = None;
        }
    }

    /// `session/update` to the client, whoever it is.
    pub(crate) async fn update(&self, session_id: &str, update: Value) {
        self.show(session_id, &update);
        if let Some(client) = self.client() {
            let _ = client
                .notify(
                    "session/update",
                    json!({ "sessionId": session_id, "update": update }),
                )
                .await;
        }
    }

    /// `_lembas/event`, only to a client that said `_meta.lembas`.
    pub(crate) async fn event(&self, session_id: &str, event: Value) {
        if let Some(client) = self.client().filter(|c| c.lembas) {
            let _ = client
                .notify(
                    "_lembas/event",
                    json!({ "sessionId": session_id, "event": event }),
                )
                .await;
        }
    }

    /// Tells the client of every delete it has not heard of; each is forgotten once sent, so a
    /// link that drops half-way loses none.
    async fn send_deletes(&self) {
        let ids = match self.0.store.deleted_pending() {
            Ok(ids) => ids,
            Err(e) => {
                tracing::warn!("the kept deletes could not be read: {e}");
                return;
            }
        };
        // Deleted from a shell while this runtime held it: stop it and forget it here too.
        for id in &ids {
            if let Some(session) = self.sessions().remove(id) {
                session.cancel();
            }
            self.0.shelf.forget_session(id);
        }
        // The kept deletes are for the instance: an editor taking them would lose them.
        let Some(client) = self.client().filter(|c| c.lembas && !self.0.editor) else {
            return;
        };
        let mut sent = Vec::new();
        for id in ids {
            if client
                .notify("_lembas/session/deleted", json!({ "sessionId": id }))
                .await
                .is_err()
            {
                break;
            }
            sent.push(id);
        }
        if !sent.is_empty()
            && let Err(e) = self.0.store.forget_deleted(&sent)
        {
            tracing::warn!("the deletes told to the instance could not be forgotten: {e}");
        }
    }

    /// The instance's API with the device's token (read from the keychain once, then kept).
    pub(crate) async fn instance(&self) -> Result<model::Instance, String> {
        let settings = self.settings();
        let server = settings
            .server
            .as_ref()
            .ok_or("this device is not logged in to an instance")?;
        let base = crate::discovery::server_url(&server.url).map_err(|e| e.to_string())?;
        let mut token = self.0.token.lock().await;
        if token.is_none() {
            let loaded = tokio::task::spawn_blocking(keychain::load)
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            *token = Some(loaded);
        }
        let token = token.clone().ok_or("no token")?;
        Ok(model::Instance {
            http: self.0.http.clone(),
            base,
            token,
        })
    }

    pub(crate) async fn forget_token(&self) {
        *self.0.token.lock().await = None;
    }

    /// The tools a step of `session` is offered: `show` only where someone looks.
    pub(crate) fn tool_definitions(&self, session: &Session) -> Vec<Value> {
        let mut tools = crate::tools::definitions();
        if show::offered(self, session) {
            tools.push(crate::tools::show_definition());
        }
        tools
    }

    pub(crate) fn tool_context(&self, session: &Session) -> ToolContext {
        let settings = self.settings();
        let rules = FolderRules::from_settings(&settings);
        let home = crate::paths::resolved_home_dir();
        let mut roots = rules.roots;
        // The session's own attachments were named to the model by path: it may read them, and
        // write there when asked, as in any allowed folder outside its project.
        if let Ok(dir) = self
            .0
            .store
            .attachments_dir(&session.id)
            .and_then(std::fs::canonicalize)
        {
            roots.push(dir);
        }
        ToolContext {
            project: session.cwd.clone(),
            roots,
            home,
            copies: None,
        }
    }

    fn send_card(&self, client: &ClientLink, method: &'static str, tool_call_id: String, params: Value) {
        let client = client.clone();
        let engine = self.clone();
        let id = client.next_id();
        if !client.lembas {
            engine
                .card_requests()
                .insert(tool_call_id.clone(), (client.serial, id.clone()));
        }
        tokio::spawn(async move {
            let answered = client.request_as(id, method, params).await;
            engine.card_requests().remove(&tool_call_id);
            if let Ok(result) = answered {
                let answer = match result {
                    Ok(result) if method == PERMISSION => Answer::from_client(&result),
                    Ok(result) => Answer::Reply(result),
                    // A client that does not know questions and plans: protocol 1 from now on.
                    Err(e) if method != PERMISSION && e.code == crate::rpc::METHOD_NOT_FOUND => {
                        client.refuse_cards();
                        Answer::Unsupported
                    }
                    Err(_) => Answer::Deny { feedback: None },
                };
                engine.settle(&tool_call_id, answer, AnsweredBy::Client).await;
            }
            // The link ended first: the card stays open and the next link shows it again.
        });
    }

    /// Opens an approval card and waits for the first answer, or the timeout (a denial); with it,
    /// who gave it (none when the card was withdrawn).
    pub(crate) async fn ask(
        &self,
        session_id: &str,
        tool_call_id: &str,
        title: &str,
        params: Value,
        run: Option<&crate::scheduled::Run>,
    ) -> (Answer, Option<AnsweredBy>) {
        let scheduled = run.map(crate::scheduled::Run::desktop_card);
        let answer = self.0.approvals.ask(
            session_id,
            tool_call_id,
            PERMISSION,
            params.clone(),
            scheduled.clone(),
        );
        self.device_event(DeviceEvent::ApprovalAsked {
            session_id: session_id.to_string(),
            tool_call_id: tool_call_id.to_string(),
            title: title.to_string(),
            reason: params
                .pointer("/_meta/lembas/reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            scheduled,
        });
        if let Some(client) = self.client() {
            self.send_card(&client, PERMISSION, tool_call_id.to_string(), params);
        }
        // A scheduled run waits the schedule's time, not remote.approval_timeout.
        let (timeout, feedback) = match run {
            Some(run) => (run.wait, run.denied_text()),
            None => {
                let seconds = self.settings().remote.approval_timeout;
                (
                    Duration::from_secs(seconds),
                    format!("Nobody answered within {seconds} seconds."),
                )
            }
        };
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok((answer, by))) => (answer, Some(by)),
            Ok(Err(_)) => (Answer::Deny { feedback: None }, None),
            Err(_) => {
                self.0.approvals.withdraw(tool_call_id);
                self.settled(session_id, tool_call_id, "timed out").await;
                let answer = Answer::Deny {
                    feedback: Some(feedback),
                };
                (answer, Some(AnsweredBy::Timeout))
            }
        }
    }

    /// Opens a question or plan card (`method`) and waits for the first answer; `None` when no
    /// client here takes such cards. After `remote.approval_timeout` it is dismissed and settled;
    /// withdrawn (the turn was cancelled), it reads as dismissed too.
    pub(crate) async fn ask_card(
        &self,
        session_id: &str,
        tool_call_id: &str,
        method: &'static str,
        params: Value,
    ) -> Option<Answer> {
        let client = self.client().filter(ClientLink::takes_cards)?;
        let answer = self
            .0
            .approvals
            .ask(session_id, tool_call_id, method, params.clone(), None);
        if method == PLAN {
            // The desktop shows plans too (questions are answered in LLeMbas only).
            self.device_event(DeviceEvent::ApprovalAsked {
                session_id: session_id.to_string(),
                tool_call_id: tool_call_id.to_string(),
                title: "Approve the plan".to_string(),
                reason: params
                    .get("path")
                    .and_then(Value::as_str)
                    .map(|path| format!("The plan is in {path}"))
                    .unwrap_or_default(),
                scheduled: None,
            });
        }
        self.send_card(&client, method, tool_call_id.to_string(), params);
        let seconds = self.settings().remote.approval_timeout;
        match tokio::time::timeout(Duration::from_secs(seconds), answer).await {
            Ok(Ok((Answer::Unsupported, _))) => None,
            Ok(Ok((answer, _))) => Some(answer),
            Ok(Err(_)) => Some(Answer::Deny { feedback: None }),
            Err(_) => {
                self.0.approvals.withdraw(tool_call_id);
                self.settled(session_id, tool_call_id, "timed out").await;
                Some(Answer::Deny { feedback: None })
            }
        }
    }

    /// Takes the cards of a session down (its turn was cancelled or it was deleted).
    pub(crate) async fn withdraw_cards_of(&self, session_id: &str) {
        for card in self.0.approvals.cards() {
            if card.session_id == session_id && self.0.approvals.withdraw(&card.tool_call_id) {
                self.settled(session_id, &card.tool_call_id, "withdrawn").await;
            }
        }
    }

    /// An answer from `by`; the client is told to take its card down unless it gave the answer.
    async fn settle(&self, tool_call_id: &str, answer: Answer, by: AnsweredBy) -> bool {
        let label = answer.label();
        let Some(session_id) = self.0.approvals.answer(tool_call_id, answer, by) else {
            return false;
        };
        if by != AnsweredBy::Client {
            self.settled(&session_id, tool_call_id, label).await;
        } else {
            self.device_event(DeviceEvent::ApprovalSettled {
                session_id,
                tool_call_id: tool_call_id.to_string(),
                outcome: label.to_string(),
            });
        }
        true
    }

    async fn settled(&self, session_id: &str, tool_call_id: &str, outcome: &str) {
        self.device_event(DeviceEvent::ApprovalSettled {
            session_id: session_id.to_string(),
            tool_call_id: tool_call_id.to_string(),
            outcome: outcome.to_string(),
        });
        let Some(client) = self.client() else { return };
        if client.lembas {
            let _ = client
                .notify(
                    "_lembas/permission/settled",
                    json!({ "sessionId": session_id, "toolCallId": tool_call_id }),
                )
                .await;
            return;
        }
        // A plain ACP client (an editor) hears it as the card's request being cancelled.
        let request = self.card_requests().remove(tool_call_id);
        if let Some((serial, id)) = request
            && serial == client.serial
        {
            let _ = client
                .notify("$/cancel_request", json!({ "requestId": id }))
                .await;
        }
    }

    fn card_requests(&self) -> MutexGuard<'_, HashMap<String, (u64, Value)>> {
        self.0.card_requests.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The approval and plan cards open now, for the desktop. Questions are answered in LLeMbas
    /// only: their answers are choices among the model's options, not Allow or Deny.
    pub fn cards(&self) -> Vec<Card> {
        let mut cards = self.0.approvals.cards();
        cards.retain(|card| card.method == PERMISSION || card.method == PLAN);
        cards
    }

    /// The desktop's answer to a card (`once`, `session` or `deny`; for a plan see
    /// [`Answer::from_desktop`]): the first answer wins, and the client is told to take its card
    /// down. `false` when the card was no longer open, or is a question.
    pub async fn answer_card(&self, tool_call_id: &str, option_id: &str) -> bool {
        let Some(method) = self.0.approvals.method_of(tool_call_id) else {
            return false;
        };
        if method != PERMISSION && method != PLAN {
            return false;
        }
        self.settle(
            tool_call_id,
            Answer::from_desktop(method, option_id),
            AnsweredBy::Desktop,
        )
        .await
    }

    /// A request for the engine; `None` when the method is not the engine's.
    pub async fn request(&self, method: &str, params: Value) -> Option<Result<Value, RpcError>> {
        methods::request(self, method, params).await
    }

    /// Whether `method` is one of the engine's requests.
    pub fn serves(&self, method: &str) -> bool {
        methods::serves(method)
    }

    /// A notification for the engine (session/cancel); `false` when it is not the engine's.
    pub fn notification(&self, method: &str, params: &Value) -> bool {
        methods::notification(self, method, params)
    }
}
