//! Methods to handlers, and what the device tells the instance about itself (hello, initialize,
//! the capability list). One link has one dispatcher.

use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

use crate::client::Outbound;
use crate::client::{ClientLink, PendingRequests};
use crate::decisions::Decisions;
use crate::directories;
use crate::editor_login::EditorLogin;
use crate::engine::Engine;
use crate::engine::method::engine_methods;
use crate::events::DeviceEvent;
use crate::poison::Recover;
use crate::policy::Mode;
use crate::request_cancel::{self, Running, RunningRequests};
use crate::rpc::{self, RpcError};
use crate::scheduled;
use crate::settings::Settings;
use crate::terminal::Terminals;
use crate::terminal::board::Board;
use lembas_protocol::initialize::{
    AgentAuth, AgentCapabilities, AuthMethod, Client, DeviceSays, Implementation, InitializeAnswer,
    McpCapabilities, PromptCapabilities, SessionCapabilities,
};
use lembas_protocol::limits::{DeviceInfo, Hello, Limits};
use lembas_protocol::notices::CancelRequest;
use lembas_protocol::request::{self, method as m, serve};
use lembas_protocol::session::Empty;
use lembas_protocol::{Capability, LembasMeta, LinkMethod};

pub const AGENT_NAME: &str = "LLeMbas CLI";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Capabilities this build implements completely, given the settings. Listing one is a promise.
pub fn capabilities(settings: &Settings) -> Vec<Capability> {
    use Capability::*;
    // `scheduled` whatever the setting says: whether it is accepted now is limits.scheduled.
    let mut caps = vec![Directories, Scheduled];
    // The engine's (agent sessions on the instance's models).
    caps.extend([
        Sessions,
        Status,
        Delete,
        Title,
        Turns,
        Model,
        Context,
        Configure,
        Steer,
        Rewind,
        Compact,
        Ask,
        Plan,
        Commands,
        Attachments,
        Files,
        Show,
        PlanState,
        Jobs,
    ]);
    if settings.remote.terminal {
        caps.extend([Terminal, Shell]);
    }
    caps
}

/// What hello and initialize say; when it changes the device redials so the instance hears it.
#[derive(Debug, Clone, PartialEq)]
pub struct Announced {
    pub roots: Vec<String>,
    pub max_mode: Mode,
    pub require_trust: bool,
    pub scheduled: bool,
    pub capabilities: Vec<Capability>,
    /// Told to an editor on `lembas serve --stdio`: no limits (the person's own machine), and none
    /// of what only the link serves.
    pub editor: bool,
}

impl Announced {
    pub fn of(settings: &Settings) -> Self {
        let remote = &settings.remote;
        let roots = if remote.enabled {
            settings.roots().iter().map(|r| r.display().to_string()).collect()
        } else {
            vec![]
        };
        Self {
            roots,
            max_mode: remote.max_mode,
            require_trust: remote.require_trust,
            scheduled: remote.scheduled,
            capabilities: capabilities(settings),
            editor: false,
        }
    }

    /// What initialize tells an editor: `limits: null` (docs/protocol.md), and the capabilities without
    /// those only the link has (directories, scheduled work, terminals).
    pub fn for_editor(settings: &Settings) -> Self {
        let mut capabilities = capabilities(settings);
        capabilities.retain(|c| !c.link_only());
        Self {
            roots: vec![],
            max_mode: settings.remote.max_mode,
            require_trust: false,
            scheduled: false,
            capabilities,
            editor: true,
        }
    }

    /// `_lembas/hello`'s limits.
    pub fn hello_limits(&self) -> Limits {
        Limits {
            require_trust: Some(self.require_trust),
            ..self.limits()
        }
    }

    /// initialize's limits, as the spec's example has them; none (null) to an editor.
    pub fn initialize_limits(&self) -> Option<Limits> {
        (!self.editor).then(|| self.limits())
    }

    fn limits(&self) -> Limits {
        Limits {
            roots: self.roots.clone(),
            max_mode: self.max_mode,
            require_trust: None,
            scheduled: self.scheduled,
        }
    }

    pub fn hello(&self, decisions: &Decisions) -> Hello {
        let host = hostname::get()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        Hello {
            protocol: decisions.protocol,
            version: VERSION.to_string(),
            harness_spec: decisions.harness_spec.clone(),
            device: DeviceInfo {
                host,
                platform: std::env::consts::OS.to_string(),
            },
            limits: self.hello_limits(),
        }
    }

    /// ACP's agent capabilities: an editor reopens and lists its chats (`session/load`,
    /// `session/list`) and has its MCP servers run (stdio and HTTP); the link has the spec's own
    /// methods for the first, and runs no program the instance names.
    fn agent_capabilities(&self) -> AgentCapabilities {
        AgentCapabilities {
            load_session: self.editor,
            prompt_capabilities: PromptCapabilities {
                image: true,
                audio: false,
                embedded_context: true,
            },
            mcp_capabilities: McpCapabilities {
                http: self.editor,
                sse: false,
            },
            session_capabilities: self.editor.then_some(SessionCapabilities {
                list: Empty {},
                resume: Empty {},
                close: Empty {},
                delete: Empty {},
                additional_directories: Empty {},
            }),
            auth: self.editor.then_some(AgentAuth { logout: Empty {} }),
        }
    }

    /// `auth_methods`: an editor's login (none on the link, which is signed in already).
    pub fn initialize_answer(
        &self,
        connection: Option<&str>,
        auth_methods: Vec<AuthMethod>,
        decisions: &Decisions,
    ) -> InitializeAnswer {
        InitializeAnswer {
            protocol_version: 1,
            agent_capabilities: self.agent_capabilities(),
            auth_methods,
            agent_info: Implementation {
                name: AGENT_NAME.to_string(),
                version: VERSION.to_string(),
            },
            meta: LembasMeta {
                lembas: DeviceSays {
                    protocol: decisions.protocol,
                    harness_spec: decisions.harness_spec.clone(),
                    limits: self.initialize_limits(),
                    connection: connection.map(str::to_string),
                    capabilities: self.capabilities.clone(),
                    sandbox: crate::sandbox::support(),
                },
            },
        }
    }
}

pub struct Dispatcher {
    settings: watch::Receiver<Arc<Settings>>,
    /// What this link was told: methods of capabilities not listed here are -32601.
    announced: Announced,
    connection: Option<String>,
    terminals: Terminals,
    events: broadcast::Sender<DeviceEvent>,
    engine: Engine,
    /// This link's client as the engine sees it, once initialize said who it is.
    client: std::sync::Mutex<Option<ClientLink>>,
    serial: u64,
    out: Outbound,
    pub pending: Arc<PendingRequests>,
    /// An editor's login (`authenticate`, `logout`); none on the link.
    login: Option<EditorLogin>,
    /// The client's requests being answered now, for `$/cancel_request`.
    running: RunningRequests,
}

/// Tells links apart for the engine.
static LINK_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Dispatcher {
    pub fn new(
        settings: watch::Receiver<Arc<Settings>>,
        announced: Announced,
        connection: Option<String>,
        out: Outbound,
        events: broadcast::Sender<DeviceEvent>,
        engine: Engine,
        board: Board,
    ) -> Self {
        Self {
            settings,
            announced,
            connection,
            terminals: Terminals::new(out.clone(), board, &engine.setup().decisions.terminal),
            events,
            engine,
            client: std::sync::Mutex::new(None),
            serial: LINK_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            out,
            pending: Arc::default(),
            login: None,
            running: RunningRequests::default(),
        }
    }

    /// An editor's dispatcher: `authenticate` and `logout` change `login`.
    pub fn with_login(mut self, login: EditorLogin) -> Self {
        self.login = Some(login);
        self
    }

    /// An editor's login, for the methods that need one; -32601 on the link.
    fn login(&self, name: &str) -> Result<&EditorLogin, RpcError> {
        self.login
            .as_ref()
            .ok_or_else(|| RpcError::method_not_found(name))
    }

    /// After initialize's answer went out: the engine takes this link's client (cards still open
    /// are shown again, deletes kept are told).
    async fn initialized(&self) {
        let client = self.client.lock().recover().clone();
        if let Some(client) = client {
            self.engine.attach(client).await;
        }
    }

    /// After an answer went out: a new session's commands follow session/new's answer.
    pub async fn answered(&self, method: &str, new_session: Option<String>) {
        match (LinkMethod::served(method), new_session) {
            (Some(LinkMethod::Initialize), _) => self.initialized().await,
            (Some(LinkMethod::SessionNew), Some(id)) if self.offers(Capability::Commands) => {
                self.engine.session_opened(&id).await
            }
            _ => {}
        }
    }

    /// The settings as they are at this moment: limits apply to every request as they are now.
    fn now(&self) -> Arc<Settings> {
        self.settings.borrow().clone()
    }

    fn offers(&self, capability: Capability) -> bool {
        self.announced.capabilities.contains(&capability)
    }

    /// Remote work going on that closing the link would cut short (open shells).
    pub fn busy(&self) -> bool {
        self.terminals.live_count() > 0 || self.engine.busy()
    }

    /// Takes back what the settings no longer allow: open shells once terminals or remote work are
    /// turned off (the person's switch wins over a shell the instance holds open).
    pub fn enforce(&self) {
        let settings = self.now();
        if (!settings.remote.enabled || !settings.remote.terminal) && self.terminals.open_count() > 0 {
            tracing::info!("terminals are no longer allowed: hanging up the open ones");
            self.terminals.close_all();
        }
    }

    /// Closes everything this link opened.
    pub fn close_all(&self) {
        self.terminals.close_all();
        self.engine.detach(self.serial);
        self.pending.fail_all();
    }

    /// Requests answered from memory, with no file, process or network work before the answer:
    /// the link's reader runs these itself rather than handing each to a task of its own (a
    /// handler that does have to wait still goes on in its own task). None of them needs
    /// [`Dispatcher::answered`].
    pub fn answers_at_once(&self, method: &str) -> bool {
        use LinkMethod::*;
        match LinkMethod::served(method) {
            Some(SessionCancel | TerminalInput | TerminalResize | Initialized) => true,
            // Nobody serves it: -32601.
            None => true,
            Some(_) => false,
        }
    }

    /// The request `id` runs from now on: a `$/cancel_request` for it reaches
    /// [`Dispatcher::request_cancellable`].
    pub fn start_running(&self, id: &Value) -> Running {
        self.running.start(id)
    }

    /// A request the client may cancel with `$/cancel_request` while it runs (crate::request_cancel).
    pub async fn request_cancellable(
        &self,
        running: Running,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let undo = request_cancel::undo_of(&self.engine, method, &params);
        let handling = self.request(method, params);
        request_cancel::answer(&self.engine, method, undo, running, handling).await
    }

    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let result = self.route(method, params).await;
        if let Err(e) = &result
            && e.code == rpc::INVALID_PARAMS
        {
            let _ = self.events.send(DeviceEvent::Refused {
                method: method.to_string(),
                reason: e.message.clone(),
            });
        }
        result
    }

    /// The method a client may call here: one the device serves, of a capability this link was
    /// told (else -32601).
    fn admitted(&self, name: &str) -> Result<LinkMethod, RpcError> {
        let method = LinkMethod::served(name).ok_or_else(|| RpcError::method_not_found(name))?;
        if self.announced.editor && method.link_only() {
            return Err(RpcError::new(
                rpc::METHOD_NOT_FOUND,
                format!(
                    "{name} is served only on the link to LLeMbas, not to an editor on lembas serve --stdio."
                ),
            ));
        }
        if !self.announced.editor && method.editor_only() {
            return Err(RpcError::new(
                rpc::METHOD_NOT_FOUND,
                format!(
                    "{name} is served to an editor on lembas serve --stdio; the link has _lembas/session/*."
                ),
            ));
        }
        match method.capability() {
            Some(capability) if !self.offers(capability) => Err(RpcError::method_not_found(name)),
            _ => Ok(method),
        }
    }

    async fn route(&self, name: &str, params: Value) -> Result<Value, RpcError> {
        use LinkMethod::*;
        let method = self.admitted(name)?;
        match method {
            Initialize => {
                let params = request::read(m::Initialize, params)?;
                let auth_methods = match &self.login {
                    Some(login) => login.methods(params.terminal_auth()),
                    None => Vec::new(),
                };
                let Client {
                    lembas,
                    protocol,
                    show,
                } = params.client();
                let client = ClientLink::new(
                    self.serial,
                    self.out.clone(),
                    self.pending.clone(),
                    lembas,
                    protocol,
                    show,
                )
                .with_terminal_output(params.terminal_output())
                .with_elicitation_form(params.elicitation_form());
                *self.client.lock().recover() = Some(client);
                request::answer(self.announced.initialize_answer(
                    self.connection.as_deref(),
                    auth_methods,
                    self.engine.setup().decisions,
                ))
            }
            Directories => {
                let settings = self.now();
                let (roots, rules) = (settings.roots(), settings.folder_rules());
                serve(m::Directories, params, |p| async move {
                    directories::handle(p, &roots, &rules)
                })
                .await
            }
            Monitor => {
                let settings = self.now();
                let params = request::read(m::Monitor, params)?;
                let (cwd, command) = (params.cwd.clone(), params.command.clone());
                let _ = self.events.send(DeviceEvent::WatchStarted {
                    cwd: cwd.clone(),
                    command: command.clone(),
                });
                let outcome = scheduled::monitor(
                    params,
                    &settings,
                    &self.engine.setup().dirs,
                    &self.engine.setup().decisions.scheduled,
                )
                .await?;
                let _ = self.events.send(DeviceEvent::Watch {
                    cwd,
                    command,
                    outcome: outcome.end(),
                });
                request::answer(outcome.watched)
            }
            TerminalOpen => {
                let settings = self.now();
                let params = request::read(m::TerminalOpen, params)?;
                let opened = self.terminals.open(params, &settings).await?;
                let _ = self.events.send(DeviceEvent::TerminalOpened {
                    terminal_id: opened.terminal_id.clone(),
                    cwd: opened.cwd.clone(),
                });
                request::answer(opened)
            }
            // Notifications sent as requests get an empty answer.
            TerminalInput | TerminalResize | TerminalClose => self
                .terminal_notification(method, params)
                .await
                .map(|()| json!({})),
            Initialized => Ok(json!({})),
            Authenticate => {
                let login = self.login(name)?;
                serve(m::Authenticate, params, |p| login.authenticate(&self.engine, p)).await
            }
            Logout => {
                let login = self.login(name)?;
                serve(m::Logout, params, |_| login.logout(&self.engine)).await
            }
            // An editor's device not logged in: ACP's auth-required, so the editor offers the login
            // (a chat's prompt too, after a logout: its turn could reach no model).
            SessionNew | SessionPrompt if self.login.is_some() => {
                if let Some(login) = &self.login {
                    login.require(&self.engine).await?;
                }
                self.engine.request(method, params).await
            }
            // The engine's: one list with its handlers (engine::method).
            engine_methods!(pattern) => self.engine.request(method, params).await,
            // The device's own (admitted never lets one through).
            SessionUpdate | RequestPermission | Hello | Event | SessionDeleted | SessionAnnounce
            | SessionLeft | PermissionSettled | Show | Question | Plan | ElicitationCreate
            | TerminalOutput | TerminalExit | CancelRequest => Err(RpcError::method_not_found(name)),
        }
    }

    async fn terminal_notification(&self, method: LinkMethod, params: Value) -> Result<(), RpcError> {
        match method {
            LinkMethod::TerminalInput => {
                self.terminals
                    .input(request::read(m::TerminalInput, params)?)
                    .await
            }
            LinkMethod::TerminalResize => {
                self.terminals
                    .resize(request::read(m::TerminalResize, params)?)
                    .await
            }
            _ => {
                let params = request::read(m::TerminalClose, params)?;
                let terminal_id = self.terminals.close(params).await?;
                let _ = self.events.send(DeviceEvent::TerminalClosed { terminal_id });
                Ok(())
            }
        }
    }

    /// A notification has nobody to answer; a failure is logged.
    pub async fn notification(&self, name: &str, params: Value) {
        // JSON-RPC's own, either way: a cancel for an id not running is ignored.
        if name == LinkMethod::CancelRequest.name() {
            match rpc::params::<CancelRequest>(name, params) {
                Ok(cancel) => self.running.cancel(&cancel.request_id),
                Err(e) => tracing::warn!(method = name, error = %e, "notification not handled"),
            }
            return;
        }
        let result = match self.admitted(name) {
            Ok(
                method @ (LinkMethod::TerminalInput | LinkMethod::TerminalResize | LinkMethod::TerminalClose),
            ) => self.terminal_notification(method, params).await,
            Ok(method @ LinkMethod::SessionCancel) => self.engine.request(method, params).await.map(drop),
            Ok(LinkMethod::Initialized) => Ok(()),
            Ok(_) => Err(RpcError::new(
                rpc::INVALID_REQUEST,
                format!("{name} is a request: send it with an id."),
            )),
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!(method = name, error = %e, "notification not handled");
        }
    }
}
