//! Methods to handlers, and what the device tells the instance about itself (hello, initialize,
//! the capability list). One link has one dispatcher.

use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

use crate::decisions::decisions;
use crate::directories;
use crate::engine::Engine;
use crate::events::DeviceEvent;
use crate::link::Outbound;
use crate::link::client::{ClientLink, PendingRequests};
use crate::policy::roots::FolderRules;
use crate::rpc::{self, RpcError};
use crate::scheduled;
use crate::settings::Settings;
use crate::terminal::Terminals;
use crate::terminal::board::Board;

pub const AGENT_NAME: &str = "LLeMbas CLI";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Capabilities this build implements completely, given the settings. Listing one is a promise.
pub fn capabilities(settings: &Settings) -> Vec<&'static str> {
    // `scheduled` whatever the setting says: whether it is accepted now is limits.scheduled.
    let mut caps = vec!["directories", "scheduled"];
    // The engine's (agent sessions on the instance's models).
    caps.extend([
        "sessions",
        "status",
        "delete",
        "title",
        "turns",
        "model",
        "context",
        "configure",
        "steer",
        "rewind",
        "compact",
        "ask",
        "plan",
        "commands",
        "attachments",
        "files",
        "show",
    ]);
    if settings.remote.terminal {
        caps.extend(["terminal", "shell"]);
    }
    caps
}

/// Capabilities only the link to the instance has: an editor is never offered them.
const LINK_ONLY: [&str; 4] = ["directories", "scheduled", "terminal", "shell"];

/// The capability an engine method belongs to (session/* are ACP's own and always there).
fn engine_capability(method: &str) -> Option<&'static str> {
    Some(match method {
        "_lembas/session/status" => "status",
        "_lembas/session/history" => "sessions",
        "_lembas/session/title" => "title",
        "_lembas/session/delete" => "delete",
        "_lembas/configure" => "configure",
        "_lembas/steer" => "steer",
        "_lembas/session/rewind" => "rewind",
        "_lembas/session/compact" => "compact",
        "_lembas/commands" => "commands",
        "_lembas/files/search" => "files",
        _ => return None,
    })
}

/// What hello and initialize say; when it changes the device redials so the instance hears it.
#[derive(Debug, Clone, PartialEq)]
pub struct Announced {
    pub roots: Vec<String>,
    pub max_mode: String,
    pub require_trust: bool,
    pub scheduled: bool,
    pub capabilities: Vec<&'static str>,
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
            max_mode: remote.max_mode.to_string(),
            require_trust: remote.require_trust,
            scheduled: remote.scheduled,
            capabilities: capabilities(settings),
            editor: false,
        }
    }

    /// What initialize tells an editor: `limits: null` (acp.md), and the capabilities without
    /// those only the link has (directories, scheduled work, terminals).
    pub fn for_editor(settings: &Settings) -> Self {
        let mut capabilities = capabilities(settings);
        capabilities.retain(|c| !LINK_ONLY.contains(c));
        Self {
            roots: vec![],
            max_mode: settings.remote.max_mode.to_string(),
            require_trust: false,
            scheduled: false,
            capabilities,
            editor: true,
        }
    }

    /// `_lembas/hello`'s limits.
    pub fn hello_limits(&self) -> Value {
        json!({ "roots": self.roots, "max_mode": self.max_mode, "require_trust": self.require_trust, "scheduled": self.scheduled })
    }

    /// initialize's limits, as the spec's example has them; null to an editor.
    pub fn initialize_limits(&self) -> Value {
        if self.editor {
            return Value::Null;
        }
        json!({ "roots": self.roots, "max_mode": self.max_mode, "scheduled": self.scheduled })
    }

    pub fn hello(&self) -> Value {
        let host = hostname::get()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        json!({
            "protocol": decisions().protocol,
            "version": VERSION,
            "harness_spec": decisions().harness_spec,
            "device": { "host": host, "platform": std::env::consts::OS },
            "limits": self.hello_limits(),
        })
    }

    pub fn initialize_result(&self, connection: Option<&str>) -> Value {
        json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": false,
                "promptCapabilities": { "image": true, "audio": false, "embeddedContext": true },
                "mcpCapabilities": { "http": false, "sse": false }
            },
            "authMethods": [],
            "agentInfo": { "name": AGENT_NAME, "version": VERSION },
            "_meta": { "lembas": {
                "protocol": decisions().protocol,
                "harness_spec": decisions().harness_spec,
                "limits": self.initialize_limits(),
                "connection": connection,
                "capabilities": self.capabilities,
            } }
        })
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
            terminals: Terminals::new(out.clone(), board),
            events,
            engine,
            client: std::sync::Mutex::new(None),
            serial: LINK_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            out,
            pending: Arc::default(),
        }
    }

    /// After initialize's answer went out: the engine takes this link's client (cards still open
    /// are shown again, deletes kept are told).
    async fn initialized(&self) {
        let client = self.client.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(client) = client {
            self.engine.attach(client).await;
        }
    }

    /// After an answer went out: a new session's commands follow session/new's answer.
    pub async fn answered(&self, method: &str, new_session: Option<String>) {
        match (method, new_session) {
            ("initialize", _) => self.initialized().await,
            ("session/new", Some(id)) if self.offers("commands") => self.engine.session_opened(&id).await,
            _ => {}
        }
    }

    /// The settings as they are at this moment: limits apply to every request as they are now.
    fn now(&self) -> Arc<Settings> {
        self.settings.borrow().clone()
    }

    fn offers(&self, capability: &str) -> bool {
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
        match method {
            "session/cancel" | "_lembas/terminal/input" | "_lembas/terminal/resize" => true,
            "initialize"
            | "_lembas/directories"
            | "_lembas/monitor"
            | "_lembas/terminal/open"
            | "_lembas/terminal/close" => false,
            // Nobody serves it: -32601.
            _ => !self.engine.serves(method),
        }
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

    async fn route(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let lembas = params
                    .pointer("/clientCapabilities/_meta/lembas")
                    .is_some_and(|l| !l.is_null() && l != &Value::Bool(false));
                // A protocol 1 client sends `lembas: true` and no protocol.
                let protocol = params
                    .pointer("/clientCapabilities/_meta/lembas/protocol")
                    .and_then(Value::as_u64)
                    .unwrap_or(1);
                let show =
                    params.pointer("/clientCapabilities/_meta/lembas/show") == Some(&Value::Bool(true));
                let client = ClientLink::new(
                    self.serial,
                    self.out.clone(),
                    self.pending.clone(),
                    lembas,
                    protocol,
                    show,
                );
                *self.client.lock().unwrap_or_else(|p| p.into_inner()) = Some(client);
                Ok(self.announced.initialize_result(self.connection.as_deref()))
            }
            "_lembas/directories" | "_lembas/monitor" | "_lembas/terminal/open" if self.announced.editor => {
                Err(RpcError::new(
                    rpc::METHOD_NOT_FOUND,
                    format!(
                        "{method} is served only on the link to LLeMbas, not to an editor on lembas serve --stdio."
                    ),
                ))
            }
            "_lembas/directories" if self.offers("directories") => {
                let settings = self.now();
                directories::handle(params, &settings.roots(), &FolderRules::from_settings(&settings))
            }
            "_lembas/monitor" if self.offers("scheduled") => {
                let settings = self.now();
                let cwd = params
                    .get("cwd")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let command = params
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let _ = self.events.send(DeviceEvent::WatchStarted {
                    cwd: cwd.clone(),
                    command: command.clone(),
                });
                let result = scheduled::monitor(params, &settings).await;
                if let Ok(outcome) = &result {
                    let _ = self.events.send(DeviceEvent::Watch {
                        cwd,
                        command,
                        outcome: outcome.clone(),
                    });
                }
                result
            }
            "_lembas/terminal/open" if self.offers("terminal") => {
                let settings = self.now();
                let opened = self.terminals.open(params, &settings).await?;
                let _ = self.events.send(DeviceEvent::TerminalOpened {
                    terminal_id: opened["terminalId"].as_str().unwrap_or_default().to_string(),
                    cwd: opened["cwd"].as_str().unwrap_or_default().to_string(),
                });
                Ok(opened)
            }
            // Notifications sent as requests get an empty answer.
            "_lembas/terminal/input" | "_lembas/terminal/resize" | "_lembas/terminal/close"
                if self.offers("terminal") =>
            {
                self.terminal_notification(method, params)
                    .await
                    .map(|()| json!({}))
            }
            _ if engine_capability(method).is_some_and(|c| !self.offers(c)) => {
                Err(RpcError::method_not_found(method))
            }
            _ => match self.engine.request(method, params).await {
                Some(result) => result,
                None => Err(RpcError::method_not_found(method)),
            },
        }
    }

    async fn terminal_notification(&self, method: &str, params: Value) -> Result<(), RpcError> {
        match method {
            "_lembas/terminal/input" => self.terminals.input(params).await,
            "_lembas/terminal/resize" => self.terminals.resize(params).await,
            _ => {
                let id = params
                    .get("terminalId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                self.terminals.close(params).await?;
                let _ = self.events.send(DeviceEvent::TerminalClosed { terminal_id: id });
                Ok(())
            }
        }
    }

    /// A notification has nobody to answer; a failure is logged.
    pub async fn notification(&self, method: &str, params: Value) {
        let result = match method {
            m if m.starts_with("_lembas/terminal/") && self.offers("terminal") => {
                self.terminal_notification(m, params).await
            }
            "session/cancel" => {
                self.engine.notification(method, &params);
                Ok(())
            }
            "notifications/initialized" => Ok(()),
            other => Err(RpcError::method_not_found(other)),
        };
        if let Err(e) = result {
            tracing::warn!(method, error = %e, "notification not handled");
        }
    }
}
