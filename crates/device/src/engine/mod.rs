//! The agent engine: sessions that run turns on the instance's models, here, within the person's
//! limits (docs/protocol.md). It belongs to the device runtime, not to a link: a turn running when the link
//! drops goes on, its approval cards stay open, and the next link is attached to the same sessions.
//! A link only routes requests and events here.

mod approvals;
mod ask;
mod attachments;
mod cards;
mod commands;
mod compaction;
mod config_choices;
mod config_options;
mod conversation;
mod delete;
mod elicitation;
mod files;
pub mod front_end;
pub mod grants;
mod instance;
mod instance_memory;
mod instructions;
mod job_board;
mod job_limits;
mod jobs;
mod mcp_servers;
mod memory;
pub(crate) mod method;
mod methods;
pub mod model;
mod plan_state;
mod prompt;
mod put_back;
mod reopen;
mod session;
mod session_access;
pub mod show;
mod start;
mod step_request;
pub mod timeline;
mod tool;
mod turn;
mod unjudged_call;
mod window_view;

pub use approvals::{Answer, AnsweredBy, Card, CardFacts};
pub use step_request::{ApiMessage, StepRequest, UserContent};
pub use window_view::{LiveSession, PutBackAnswer, Shown, ShownUpdate, WindowOnly};

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

use crate::client::ClientLink;
use crate::events::DeviceEvent;
use crate::keychain::Token;
use crate::poison::Recover;
use crate::rpc::RpcError;
use crate::settings::Settings;
use crate::setup::Setup;
use crate::store::Store;
use crate::tools::ToolContext;
use lembas_protocol::event::{Event, EventNotification};
use lembas_protocol::notices::SessionDeleted;
use lembas_protocol::update::{SessionNotification, SessionUpdate};
use lembas_protocol::{LinkMethod, SessionId};
use method::EngineMethod;
use session::Session;

/// How often the engine looks for sessions deleted from a shell (`lembas sessions delete`).
const DELETED_POLL: Duration = Duration::from_secs(1);

/// Cheap to clone: every clone is the same engine.
#[derive(Clone)]
pub struct Engine(Arc<Inner>);

struct Inner {
    settings: watch::Receiver<Arc<Settings>>,
    /// The device's folders and keychain entry, as the hosting program handed them down.
    setup: Setup,
    events: broadcast::Sender<DeviceEvent>,
    store: Store,
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    client: Mutex<Option<ClientLink>>,
    approvals: approvals::Approvals,
    http: reqwest::Client,
    token: tokio::sync::Mutex<Option<Token>>,
    /// What the instance said of itself and the token (`/api/v1/instance`), by server, and when.
    about: tokio::sync::Mutex<Option<(url::Url, std::time::Instant, model::About)>>,
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
    updates: broadcast::Sender<ShownUpdate>,
    /// What sessions showed, for the desktop's viewer.
    shelf: show::Shelf,
    /// "Stop all remote work" was pressed and remote work has not been on since: no turn starts
    /// by itself, even before the settings say remote work is off (`job_limits`).
    remote_stopped: std::sync::atomic::AtomicBool,
    /// A test's model, answering in place of the instance; `None` in the programs.
    scripted: Option<model::ScriptedModel>,
    /// The chats front ends at this computer hold (`front_end`).
    front_ends: front_end::Holders,
    /// What front ends hear beside the updates: cards, their settling, sharing changes.
    chat_news: broadcast::Sender<front_end::ChatNews>,
}

impl Engine {
    pub fn new(
        settings: watch::Receiver<Arc<Settings>>,
        events: broadcast::Sender<DeviceEvent>,
        setup: Setup,
    ) -> Engine {
        Engine::build(settings, events, setup, false, None)
    }

    /// The engine of `lembas serve --stdio`: its client is an editor, which never hears of the
    /// deletes kept for the instance, and may leave the model to the instance's default.
    pub fn for_editor(
        settings: watch::Receiver<Arc<Settings>>,
        events: broadcast::Sender<DeviceEvent>,
        setup: Setup,
    ) -> Engine {
        Engine::build(settings, events, setup, true, None)
    }

    /// An engine whose model is `script`, answering in this process, for tests of the engine
    /// itself: no instance, so no login either; all else is as [`Engine::new`] builds it.
    pub fn with_scripted_model(
        settings: watch::Receiver<Arc<Settings>>,
        events: broadcast::Sender<DeviceEvent>,
        setup: Setup,
        script: model::ScriptedModel,
    ) -> Engine {
        Engine::build(settings, events, setup, false, Some(script))
    }

    fn build(
        settings: watch::Receiver<Arc<Settings>>,
        events: broadcast::Sender<DeviceEvent>,
        setup: Setup,
        editor: bool,
        scripted: Option<model::ScriptedModel>,
    ) -> Engine {
        let decisions = setup.decisions;
        let store = Store::at(setup.dirs.state.clone(), &decisions.turns);
        let http = crate::tls::http_client_builder()
            .connect_timeout(Duration::from_secs(20))
            .user_agent(concat!("lembas/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        if let Err(e) = store.prune_turns(std::time::SystemTime::now()) {
            tracing::warn!("old turn files could not be pruned: {e}");
        }
        Engine(Arc::new(Inner {
            settings,
            setup,
            events,
            store,
            sessions: Mutex::new(HashMap::new()),
            client: Mutex::new(None),
            approvals: Default::default(),
            http,
            token: tokio::sync::Mutex::new(None),
            about: tokio::sync::Mutex::new(None),
            active_turns: Default::default(),
            editor,
            card_requests: Mutex::default(),
            files: crate::files::Files::new(&decisions.files),
            updates: broadcast::channel(window_view::STREAM).0,
            shelf: Default::default(),
            remote_stopped: Default::default(),
            scripted,
            front_ends: Default::default(),
            chat_news: broadcast::channel(window_view::STREAM).0,
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

    /// Every session's MCP servers stopped, waited for: the editor is gone.
    pub async fn stop_all_mcp_servers(&self) {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        for session in sessions {
            if let Some(servers) = session.take_mcp_servers() {
                servers.stop().await;
            }
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

    /// Follows the settings: at each change, the running jobs are held to the limits as they are
    /// now (`job_limits`). Ends with the engine.
    pub fn spawn_limits_watch(&self) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.0);
        let mut settings = self.0.settings.clone();
        tokio::spawn(async move {
            while settings.changed().await.is_ok() {
                let Some(inner) = weak.upgrade() else { return };
                let engine = Engine(inner);
                job_limits::hold(&engine);
                engine.recheck_shared().await;
            }
        })
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<SessionId, Arc<Session>>> {
        self.0.sessions.lock().recover()
    }

    fn client(&self) -> Option<ClientLink> {
        self.0.client.lock().recover().clone()
    }

    /// The client draws a command's output as it comes (Zed's `terminal_output`).
    pub(crate) fn client_draws_terminal_output(&self) -> bool {
        self.client().is_some_and(|c| c.terminal_output)
    }

    pub(crate) fn settings(&self) -> Arc<Settings> {
        self.0.settings.borrow().clone()
    }

    pub(crate) fn store(&self) -> &Store {
        &self.0.store
    }

    /// The device's folders and keychain entry.
    pub fn setup(&self) -> &Setup {
        &self.0.setup
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

    /// Background jobs running now, over every session (for `crate::keep_awake`).
    pub fn jobs_running(&self) -> usize {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        sessions.iter().map(|s| s.jobs(|board| board.running())).sum()
    }

    /// The client of a new link, once initialize is answered: it is shown every card still open and
    /// told of every delete it has not heard of.
    pub async fn attach(&self, client: ClientLink) {
        *self.0.client.lock().recover() = Some(client.clone());
        for card in self.0.approvals.cards() {
            // A question or plan waits for a client that takes them, or for its timeout.
            if card.request.method() == LinkMethod::RequestPermission || client.takes_cards() {
                self.send_card(&client, card.request);
            }
        }
        self.send_deletes().await;
        self.announce_shared().await;
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
        let mut client = self.0.client.lock().recover();
        if client.as_ref().is_some_and(|c| c.serial == serial) {
            *client = None;
            drop(client);
            self.link_went_down();
        }
    }

    /// `session/update` to the client, whoever it is (never of a chat held here and not shared).
    pub(crate) async fn update(&self, session_id: &str, update: SessionUpdate) {
        self.show(session_id, || window_view::Shown::Client(update.clone()));
        if let Some(client) = self.client().filter(|_| self.link_sees(session_id)) {
            let notification = SessionNotification {
                session_id: session_id.into(),
                update,
            };
            let _ = client
                .notify(LinkMethod::SessionUpdate, json!(notification))
                .await;
        }
    }

    /// `_lembas/event`, only to a client that said `_meta.lembas`; a job's also to the front ends
    /// at this computer, which draw a chat's jobs.
    pub(crate) async fn event(&self, session_id: &str, event: Event) {
        if let Event::Job { state, job } = &event {
            self.tell_front_ends(front_end::ChatNews::Job {
                session_id: session_id.to_string(),
                state: *state,
                job: job.clone(),
            });
        }
        if let Some(client) = self.client().filter(|c| c.lembas && self.link_sees(session_id)) {
            let notification = EventNotification {
                session_id: session_id.into(),
                event,
            };
            let _ = client.notify(LinkMethod::Event, json!(notification)).await;
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
            if let Some(session) = self.sessions().remove(id.as_str()) {
                session.cancel();
                session.stop_jobs();
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
                .notify(
                    LinkMethod::SessionDeleted,
                    json!(SessionDeleted {
                        session_id: id.as_str().into()
                    }),
                )
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

    pub(crate) fn tool_context(&self, session: &Session) -> ToolContext {
        let settings = self.settings();
        let rules = settings.folder_rules();
        let mut protected = self.0.setup.dirs.protected_places();
        let mut roots = rules.roots;
        // A local chat works in the folder the person at the keyboard opened it in.
        roots.extend(self.local_chat_folder(session));
        // The session's own attachments were named to the model by path: it may read them, and
        // write there when asked, as in any allowed folder outside its project; other sessions'
        // stay protected with the rest of the device's state.
        if let Ok(dir) = self
            .0
            .store
            .attachments_dir(&session.id)
            .and_then(crate::canonical::canonicalize)
        {
            roots.push(dir.clone());
            protected = protected.with_own(dir);
        }
        ToolContext {
            project: session.cwd.clone(),
            roots,
            protected,
            copies: None,
            additional: session.additional_dirs(),
            numbers: &self.0.setup.decisions.tools,
        }
    }

    /// The sandbox a session's command runs in, from the limits now (docs/protocol.md "The sandbox under
    /// every command"): the roots as set, and the session's own attachments, which lie inside the
    /// device's state folder that is otherwise out of reach.
    pub(crate) fn command_sandbox(
        &self,
        session: &Session,
        mode: crate::policy::Mode,
    ) -> crate::sandbox::Sandbox {
        let settings = self.settings();
        let mut roots = settings.folder_rules().roots;
        roots.extend(self.local_chat_folder(session));
        // A session's folder below /tmp under a root above it (an editor's `/`) would be covered
        // by the command's own /tmp: named as a root of its own, it is attached over it.
        for folder in std::iter::once(session.cwd.clone()).chain(session.additional_dirs()) {
            let inside_a_root = roots.iter().any(|root| folder.starts_with(root));
            let rooted_there = roots
                .iter()
                .any(|root| folder.starts_with(root) && crate::sandbox::covered_by_the_box(root));
            if inside_a_root && !rooted_there && crate::sandbox::covered_by_the_box(&folder) {
                roots.push(folder);
            }
        }
        let own: Vec<_> = self
            .0
            .store
            .attachments_dir(&session.id)
            .and_then(crate::canonical::canonicalize)
            .into_iter()
            .collect();
        let sandbox =
            crate::sandbox::Sandbox::for_remote(&settings.remote, &roots, &own, mode, &self.0.setup.dirs);
        match self.0.store.temp_dir(&session.id) {
            Ok(temp) => sandbox.with_temp(temp),
            Err(_) => sandbox,
        }
    }

    /// Notes of jobs that ended are waiting: a session at rest starts the machine turn that gives
    /// them to the model (routed here so a job's end reaches the turns without importing them).
    pub(crate) fn wake(&self, session: &Arc<Session>) {
        start::wake(self, session)
    }

    /// A session method of the link; one that is not the engine's is -32601.
    pub async fn request(&self, method: LinkMethod, params: Value) -> Result<Value, RpcError> {
        match EngineMethod::of(method) {
            Some(method) => methods::request(self, method, params).await,
            None => Err(RpcError::method_not_found(method.name())),
        }
    }
}
