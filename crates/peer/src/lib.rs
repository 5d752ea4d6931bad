//! The reference peer: the LLeMbas instance's side of the device link, written from the spec
//! (`docs/protocol.md`: "Versions and discovery", `initialize`, `_lembas/hello`, "The HTTP API the CLI
//! uses"). It is the device's examiner in tests and benchmarks, and the local demo instance.
//! Its [`ScriptedModel`] answers `POST /v1/chat/completions` as an OpenAI-compatible server
//! streams, with the replies a test queued ([`Peer::model`]) or, with none queued, the demo's.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use std::time::Duration;
//! use lembas_peer::{Peer, PeerConfig};
//! let peer = Peer::start(PeerConfig::with_token("t")).await?;
//! // ... point a device at peer.url() with token "t" ...
//! let mut link = peer.next_link(Duration::from_secs(5)).await?;
//! let hello = link.hello(Duration::from_secs(5)).await?;
//! let init = link.initialize(Duration::from_secs(5)).await?;
//! # let _ = (hello, init);
//! peer.stop().await;
//! # Ok(()) }
//! ```

mod answers;
mod config;
mod http;
mod link;
mod link_task;
mod mcp;
mod model;
mod terminal_sessions;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context, anyhow};
use axum::serve::ListenerExt;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

pub use config::{
    DEFAULT_CONNECTION, DEFAULT_MODEL, LINK_PROTOCOL, PeerConfig, REFUSAL_CLOSE_CODE, UPDATE_CLI_REASON,
    VISION_MODEL, default_discovery, default_instance, default_models,
};
pub use http::{CHAT_COMPLETIONS_PATH, DISCOVERY_PATH, INSTANCE_PATH, LINK_PATH, MODELS_PATH};
pub use link::LinkHandle;
pub use mcp::{GARBAGE_BODY, MCP_PATH, MEMORY_TOOL, MEMORY_URI, McpCall, McpFault, memory_text, memory_tool};
pub use model::{ModelReply, Part, ScriptedModel};
pub use terminal_sessions::{Announced, Left};

/// One HTTP request the peer answered: method, path (without the query) and status (101 for a
/// link upgrade that went through).
pub type HttpRecord = (String, String, u16);

/// How long `stop` lets open HTTP connections finish before cutting them.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// What the HTTP handlers and link tasks share with the `Peer`.
pub(crate) struct PeerState {
    pub config: Mutex<PeerConfig>,
    pub http_log: Mutex<Vec<HttpRecord>>,
    pub mcp_log: Mutex<Vec<McpCall>>,
    pub links_accepted: AtomicUsize,
    pub new_links: mpsc::UnboundedSender<LinkHandle>,
    pub model: ScriptedModel,
    pub shutdown: watch::Receiver<bool>,
}

/// Locks a mutex, going on with the data when another thread panicked while holding it: every
/// value behind these locks stays whole between statements, and a test's panic must not hide the
/// record from the tests that follow.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running reference peer on 127.0.0.1.
pub struct Peer {
    address: SocketAddr,
    state: Arc<PeerState>,
    links: tokio::sync::Mutex<mpsc::UnboundedReceiver<LinkHandle>>,
    shutdown: watch::Sender<bool>,
    server: JoinHandle<()>,
}

impl Peer {
    /// Starts a peer on 127.0.0.1 at a port the system picks.
    pub async fn start(config: PeerConfig) -> anyhow::Result<Peer> {
        Peer::start_at(config, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Starts a peer on `address` (port 0: the system picks).
    pub async fn start_at(config: PeerConfig, address: SocketAddr) -> anyhow::Result<Peer> {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("could not listen on {address}: is the port taken?"))?;
        let address = listener
            .local_addr()
            .context("could not read the address the peer listens on")?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let (new_links, links) = mpsc::unbounded_channel();
        let state = Arc::new(PeerState {
            config: Mutex::new(config),
            http_log: Mutex::new(Vec::new()),
            mcp_log: Mutex::new(Vec::new()),
            links_accepted: AtomicUsize::new(0),
            new_links,
            model: ScriptedModel::new(),
            shutdown: shutdown_rx.clone(),
        });
        let router = http::router(state.clone());
        let mut stopped = shutdown_rx;
        let server = tokio::spawn(async move {
            // As a real server is set up: small answers (an MCP reply after its headers) are not held
            // back by Nagle's algorithm waiting on the client's delayed ACK.
            let listener = listener.tap_io(|stream| {
                if let Err(error) = stream.set_nodelay(true) {
                    tracing::debug!("TCP_NODELAY not set: {error}");
                }
            });
            let serving = axum::serve(listener, router).with_graceful_shutdown(async move {
                let _ = stopped.wait_for(|stopped| *stopped).await;
            });
            if let Err(error) = serving.await {
                tracing::error!("the peer's server stopped: {error}");
            }
        });
        Ok(Peer {
            address,
            state,
            links: tokio::sync::Mutex::new(links),
            shutdown,
            server,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// `ws://127.0.0.1:PORT/api/devices/link`.
    pub fn link_url(&self) -> String {
        format!("ws://{}{LINK_PATH}", self.address)
    }

    /// The address the peer listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Changes the peer's behaviour while it runs; the next request (or link) sees the change.
    /// A link already open keeps the hello rules it started with.
    pub fn set_config(&self, change: impl FnOnce(&mut PeerConfig)) {
        change(&mut lock(&self.state.config));
    }

    /// A copy of the configuration now.
    pub fn config(&self) -> PeerConfig {
        lock(&self.state.config).clone()
    }

    /// The next device that linked (after the upgrade went through), in the order they linked.
    pub async fn next_link(&self, within: Duration) -> anyhow::Result<LinkHandle> {
        let mut links = self.links.lock().await;
        match tokio::time::timeout(within, links.recv()).await {
            Ok(Some(link)) => Ok(link),
            Ok(None) => Err(anyhow!("the peer stopped taking links")),
            Err(_) => Err(anyhow!("no device linked within {within:?}")),
        }
    }

    /// How many link upgrades were answered 101 so far.
    pub fn links_accepted(&self) -> usize {
        self.state.links_accepted.load(Ordering::SeqCst)
    }

    /// Every HTTP request answered so far, link upgrades included, in order.
    pub fn http_log(&self) -> Vec<HttpRecord> {
        lock(&self.state.http_log).clone()
    }

    /// Every `tools/call` and `resources/read` `/mcp` received so far, in order, with the scope
    /// each carried.
    pub fn mcp_log(&self) -> Vec<McpCall> {
        lock(&self.state.mcp_log).clone()
    }

    /// The scripted model answering `POST /v1/chat/completions`: queue its replies, read the
    /// requests it got. Every clone is the same model.
    pub fn model(&self) -> ScriptedModel {
        self.state.model.clone()
    }

    /// Stops listening and cuts every link (no close frame), letting HTTP requests in flight finish
    /// for up to two seconds.
    pub async fn stop(mut self) {
        let _ = self.shutdown.send(true);
        if tokio::time::timeout(STOP_GRACE, &mut self.server).await.is_err() {
            self.server.abort();
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.server.abort();
    }
}
