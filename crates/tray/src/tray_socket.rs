//! The tray process's own socket, beside the runtime's control socket (`desktop.sock` in the same
//! private folder, 0600, peer credentials checked, JSON-RPC a line as there). It is the tray's and
//! not the runtime's because the runtime is not always the tray's (a headless `lembas service run`
//! may hold the device) nor always running (it stops at "not logged in"), while a second launch
//! and the window must reach the tray all the same. Methods:
//! - `window/open` `{ view? }` → `{}`: opens the window (or brings the open one forward) on `view`
//!   (`{ view: "activity" }`, `{ view: "card", tool_call_id }`, `{ view: "session", session_id }`).
//!   A second launch calls it.
//!
//! The window itself asks the runtime, over the control socket, for everything it shows.
//!
//! One tray per user: `desktop.lock` beside the socket is held for the tray's life, so of two
//! launches at once exactly one becomes the tray and the other asks it to open the window.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::PathBuf;
use std::time::Duration;

use lembas_device::control::endpoint::{Listener, Stream, own_uid};
use lembas_device::control::{CallError, Client, credentials};
use lembas_device::paths::Dirs;
use lembas_device::rpc::{self, Incoming, RpcError};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::window::WindowProcess;
use lembas_protocol::view::View;

pub const WINDOW_OPEN: &str = "window/open";

/// The longest line read; a longer one ends the connection (only the window and a launch talk here).
const MAX_LINE: u64 = 64 * 1024;
/// How long a second launch tries to reach the first (it may be binding its socket this instant).
const REACH_FOR: Duration = Duration::from_secs(5);

/// The tray's socket, in the runtime folder beside the control socket.
pub fn path(dirs: &Dirs) -> PathBuf {
    dirs.runtime.join("desktop.sock")
}

fn lock_path(dirs: &Dirs) -> PathBuf {
    dirs.runtime.join("desktop.lock")
}

/// What a launch found.
pub enum Claim {
    /// This process is the tray: it holds the lock (for as long as it keeps it) and serves.
    First { lock: File, listener: Listener },
    /// Another process is the tray.
    Running,
}

/// Takes the tray's lock and binds its socket (within a tokio runtime).
pub fn claim(dirs: &Dirs) -> std::io::Result<Claim> {
    lembas_device::paths::ensure_private_dir(&dirs.runtime)?;
    let lock = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path(dirs))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(Claim::Running),
        Err(TryLockError::Error(e)) => return Err(e),
    }
    // The lock says no tray serves: a socket left there is a dead one's and is replaced.
    let listener = Listener::bind(&path(dirs))?;
    Ok(Claim::First { lock, listener })
}

/// A second launch: asks the running tray to open its window.
pub async fn ask_to_open(dirs: &Dirs, view: Option<View>) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + REACH_FOR;
    let params = json!({ "view": view });
    loop {
        let tried = match Client::connect_at(path(dirs)).await {
            Ok(mut client) => client.call(WINDOW_OPEN, params.clone()).await.map(|_| ()),
            Err(e) => Err(CallError::Io(std::io::Error::other(e))),
        };
        match tried {
            Ok(()) => return Ok(()),
            Err(CallError::Rpc(refused)) => return Err(refused.message),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(format!("LLeMbas Desktop is running but does not answer: {e}"));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// What the socket's methods reach.
#[derive(Clone)]
pub struct Served {
    pub window: WindowProcess,
}

/// Serves until the process ends.
pub async fn serve(listener: Listener, served: Served) {
    let own = own_uid();
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                if let Err(why) = credentials::admit(peer, own) {
                    tracing::warn!("the tray's socket refused a connection: {why}");
                    continue;
                }
                tokio::spawn(connection(stream, served.clone()));
            }
            Err(e) => {
                tracing::warn!("the tray's socket cannot accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn connection(stream: Stream, served: Served) {
    let (read, mut write) = tokio::io::split(stream);
    let mut reader = BufReader::new(read);
    loop {
        let mut text = String::new();
        match (&mut reader).take(MAX_LINE).read_line(&mut text).await {
            Ok(0) | Err(_) => return,
            Ok(_) if !text.ends_with('\n') && text.len() as u64 >= MAX_LINE => return,
            Ok(_) => {}
        }
        if text.trim().is_empty() {
            continue;
        }
        let answer = match rpc::parse(text.trim_end()) {
            Ok(Incoming::Request { id, method, params }) => {
                rpc::answer(&id, request(&served, &method, params).await)
            }
            Ok(_) => continue,
            Err(rejected) => rpc::answer(&rejected.id, Err(rejected.error)),
        };
        if write.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
            return;
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenParams {
    view: Option<View>,
}

async fn request(served: &Served, method: &str, params: Value) -> Result<Value, RpcError> {
    match method {
        WINDOW_OPEN => {
            let asked: OpenParams = rpc::params(method, params)?;
            served
                .window
                .open(asked.view)
                .map_err(|e| RpcError::internal(format!("The window cannot be opened: {e}")))?;
            Ok(json!({}))
        }
        other => Err(RpcError::method_not_found(other)),
    }
}
