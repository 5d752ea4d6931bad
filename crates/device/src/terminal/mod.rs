//! `_lembas/terminal/*`: login shells in PTYs for the web terminal, at most a few per link, each
//! closed with the link. Output is coalesced and sent on the link's bulk lane (backpressure: a shell
//! is read only as fast as the link sends); bash, zsh and fish get the shell integration's prompt marks.

pub mod board;
mod integration;
mod session;
mod shell;
// Real shells in real PTYs: Unix's.
#[cfg(all(test, unix))]
mod tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use portable_pty::PtySize;
use serde_json::json;

use crate::client::outbound::Outbound;
use crate::decisions;
use crate::poison::Recover;
use crate::policy::roots::{folder_verdict, judge_folder};
use crate::rpc::{self, RpcError};
use crate::settings::Settings;
use board::Board;
use lembas_protocol::LinkMethod;
use lembas_protocol::terminal::{
    TerminalCloseParams, TerminalExit, TerminalInputParams, TerminalOpenParams, TerminalOpened,
    TerminalResizeParams,
};
use session::Session;
use shell::Environment;
pub use shell::ShellKind;

pub const EXIT: &str = LinkMethod::TerminalExit.name();
pub use session::OUTPUT;

/// A size the client leaves out: the classic 80 × 24 (then clamped to the decided ranges).
const DEFAULT_COLS: f64 = 80.0;
const DEFAULT_ROWS: f64 = 24.0;

/// One link's terminals. Dropping it hangs up every shell.
pub struct Terminals {
    out: Outbound,
    environment: Environment,
    open: Arc<Mutex<Registry>>,
    /// The runtime's list of terminals, for its own window.
    board: Board,
    /// The decided sizes and the limit per link.
    numbers: &'static decisions::Terminal,
    /// Shells whose exit has not been queued yet, closed ones included: the link counts them as
    /// work, so a redial for new limits waits until their `exit` has gone out.
    live: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Registry {
    sessions: HashMap<String, Arc<Session>>,
    /// Opens under way, counted against the limit before their shell exists.
    starting: usize,
    last_id: u64,
}

impl Terminals {
    pub fn new(out: Outbound, board: Board, numbers: &'static decisions::Terminal) -> Self {
        Self::with_environment(out, Environment::default(), board, numbers)
    }

    fn with_environment(
        out: Outbound,
        environment: Environment,
        board: Board,
        numbers: &'static decisions::Terminal,
    ) -> Self {
        Self {
            out,
            environment,
            open: Arc::default(),
            board,
            numbers,
            live: Arc::default(),
        }
    }

    /// `_lembas/terminal/open`: `{ cwd?, cols?, rows? }` →
    /// `{ terminalId, cwd, cols, rows, shell, integration }`.
    pub async fn open(
        &self,
        params: TerminalOpenParams,
        settings: &Settings,
    ) -> Result<TerminalOpened, RpcError> {
        let rules = settings.folder_rules();
        if !rules.enabled {
            // The policy's own sentence: remote work is off, and how to turn it on.
            let verdict = folder_verdict(Path::new("/"), &rules);
            return Err(RpcError::invalid_params(verdict.reason.unwrap_or_default()));
        }
        if !settings.remote.terminal {
            return Err(RpcError::invalid_params(
                "Terminals are off on this computer. Turn them on in LLeMbas Desktop, or set remote.terminal: true in its config.yaml (`lembas remote terminal on`).".to_string(),
            ));
        }
        let requested = match params.cwd {
            Some(cwd) => cwd,
            None => match settings.roots().into_iter().next() {
                Some(first) => first,
                // No root to default to: the policy's own sentence says what to do.
                None => PathBuf::from("/"),
            },
        };
        // Judged by the roots alone: trust governs what a session loads from a project, and a
        // shell loads nothing from it (docs/protocol.md "_lembas/terminal/open").
        let cwd = judge_folder(&requested, &rules.roots_only()).map_err(|verdict| {
            RpcError::invalid_params(
                verdict
                    .reason
                    .unwrap_or_else(|| "This folder is not allowed.".into()),
            )
        })?;
        let size = PtySize {
            cols: clamp(params.cols.unwrap_or(DEFAULT_COLS), self.numbers.cols),
            rows: clamp(params.rows.unwrap_or(DEFAULT_ROWS), self.numbers.rows),
            pixel_width: 0,
            pixel_height: 0,
        };

        let slot = self.reserve()?;
        let shell = self.environment.login_shell();
        let mut integration = settings.remote.terminal_integration;
        if integration && ShellKind::of(&shell) == ShellKind::Bash {
            integration = shell::bash_supports_marks(&shell).await;
        }
        let host = hostname::get().unwrap_or_else(|_| "localhost".into());
        let launch = shell::launch(&self.environment, &shell, &cwd, integration, &host)
            .map_err(|e| RpcError::internal(format!("The shell's start files could not be written: {e}.")))?;
        let (kind, integration) = (launch.kind, launch.integration);
        let started = session::start(launch.command, launch.rc_folder, size)
            .map_err(|e| RpcError::internal(e.to_string()))?;
        let id = slot.fill(started.session.clone());
        let cwd_text = cwd.to_string_lossy();
        let screen = self.board.open(
            &id,
            &cwd_text,
            kind.name(),
            (size.cols, size.rows),
            started.session.clone(),
        );

        let (out, open, session) = (self.out.clone(), self.open.clone(), started.session);
        let board = self.board.clone();
        let terminal_id = id.clone();
        let live = LiveGuard::new(&self.live);
        tokio::spawn(async move {
            let _live = live;
            let shown = |frame: &[u8]| screen.record(&board, frame);
            let ended = session::forward_output(
                &session,
                &terminal_id,
                started.output,
                started.exited,
                &out,
                shown,
            )
            .await;
            remove(&open, &terminal_id, &session);
            board.close(&screen, ended.code);
            drop(screen);
            drop(session);
            if !ended.link_closed {
                // On the bulk lane, so it comes after every output frame of this terminal.
                let exit = rpc::notification(
                    EXIT,
                    json!(TerminalExit {
                        terminal_id,
                        code: ended.code,
                    }),
                );
                let _ = out.bulk(exit).await;
            }
        });
        Ok(TerminalOpened {
            terminal_id: id,
            cwd: cwd_text.into_owned(),
            cols: size.cols,
            rows: size.rows,
            shell: kind.name().to_string(),
            integration,
        })
    }

    /// `_lembas/terminal/input`: `{ terminalId, data: <base64> }`.
    pub async fn input(&self, params: TerminalInputParams) -> Result<(), RpcError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(params.data.as_bytes())
            .map_err(|e| {
                RpcError::invalid_params(format!(
                    "The data of _lembas/terminal/input must be base64 ({e})."
                ))
            })?;
        let session = self.find(&params.terminal_id)?;
        if bytes.is_empty() {
            return Ok(());
        }
        session
            .write(bytes)
            .await
            .map_err(|()| ended(&params.terminal_id))
    }

    /// `_lembas/terminal/resize`: `{ terminalId, cols, rows }`, clamped to the decided ranges.
    pub async fn resize(&self, params: TerminalResizeParams) -> Result<(), RpcError> {
        let session = self.find(&params.terminal_id)?;
        let size = PtySize {
            cols: clamp(params.cols, self.numbers.cols),
            rows: clamp(params.rows, self.numbers.rows),
            pixel_width: 0,
            pixel_height: 0,
        };
        session
            .resize(size)
            .map_err(|e| RpcError::internal(e.to_string()))?;
        self.board.resized(&params.terminal_id, (size.cols, size.rows));
        Ok(())
    }

    /// `_lembas/terminal/close`: `{ terminalId }`, hung up (SIGHUP); the id it closed. Its exit
    /// follows.
    pub async fn close(&self, params: TerminalCloseParams) -> Result<String, RpcError> {
        let session = self
            .lock()
            .sessions
            .remove(&params.terminal_id)
            .ok_or_else(|| unknown(&params.terminal_id))?;
        session.hang_up();
        Ok(params.terminal_id)
    }

    /// The link closed: every shell is hung up.
    pub fn close_all(&self) {
        let sessions: Vec<_> = self.lock().sessions.drain().map(|(_, session)| session).collect();
        for session in sessions {
            session.hang_up();
        }
    }

    pub fn open_count(&self) -> usize {
        self.lock().sessions.len()
    }

    /// Shells still running or still sending their last output and `exit`.
    pub fn live_count(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.open.lock().recover()
    }

    fn find(&self, id: &str) -> Result<Arc<Session>, RpcError> {
        self.lock().sessions.get(id).cloned().ok_or_else(|| unknown(id))
    }

    /// A place under the per-link limit, held until the shell is in the registry or the open failed.
    fn reserve(&self) -> Result<Slot<'_>, RpcError> {
        let max = self.numbers.max_per_link;
        let mut registry = self.lock();
        if registry.sessions.len() + registry.starting >= max {
            return Err(RpcError::invalid_params(format!(
                "This link already has {max} terminals open, the most it may have. Close one first."
            )));
        }
        registry.starting += 1;
        Ok(Slot {
            terminals: self,
            filled: false,
        })
    }

    #[cfg(all(test, unix))]
    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().sessions.get(id).cloned()
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        self.close_all();
    }
}

struct Slot<'a> {
    terminals: &'a Terminals,
    filled: bool,
}

impl Slot<'_> {
    /// Registers the session under a new id ("t1", "t2", … never reused on this link).
    fn fill(mut self, session: Arc<Session>) -> String {
        let mut registry = self.terminals.lock();
        registry.last_id += 1;
        let id = format!("t{}", registry.last_id);
        registry.sessions.insert(id.clone(), session);
        registry.starting -= 1;
        self.filled = true;
        id
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if !self.filled {
            self.terminals.lock().starting -= 1;
        }
    }
}

/// Counts a shell as live until its forwarding task ends, however it ends.
struct LiveGuard(Arc<AtomicUsize>);

impl LiveGuard {
    fn new(live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::SeqCst);
        Self(live.clone())
    }
}

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes `id` out of the registry if it still names this session (a close took it out already).
fn remove(open: &Mutex<Registry>, id: &str, session: &Arc<Session>) {
    let mut registry = open.lock().recover();
    if registry.sessions.get(id).is_some_and(|s| Arc::ptr_eq(s, session)) {
        registry.sessions.remove(id);
    }
}

/// A size within `[min, max]`; what is not a number in range becomes the nearest bound.
fn clamp(value: f64, [min, max]: [u16; 2]) -> u16 {
    if value.is_nan() {
        return min;
    }
    value.round().clamp(f64::from(min), f64::from(max)) as u16
}

fn unknown(id: &str) -> RpcError {
    RpcError::invalid_params(format!("There is no terminal {id} open on this link."))
}

fn ended(id: &str) -> RpcError {
    RpcError::invalid_params(format!("The terminal {id} has ended."))
}
