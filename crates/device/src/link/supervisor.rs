//! Keeps the link up: discovery, dial, run, and on a drop redial with capped, jittered backoff
//! (reset after a stable period). Some ends are final and need a person: no login, a token the
//! instance refused (401), a server that speaks an older protocol (discovery, or close 4400).

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest, http};

use super::connection::{self, LinkContext, LinkEnd, Ws};
use crate::decisions;
use crate::discovery::{self, DiscoveryError};
use crate::events::{DeviceEvent, LinkState};
use crate::keychain::{KeychainError, Token};
use crate::proxy;
use crate::settings::Settings;
use crate::status::Status;

const DIAL_TIMEOUT: Duration = Duration::from_secs(20);
/// The largest message the link reads: a whole prompt at its limit, base64 and JSON included.
const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Timings, from docs/protocol.md `link` unless a test or benchmark narrows them.
#[derive(Debug, Clone)]
pub struct LinkOptions {
    pub backoff_first: Duration,
    pub backoff_max: Duration,
    pub jitter: f64,
    pub stable_after: Duration,
    pub ping_interval: Duration,
    pub dead_after_missed_pings: u32,
}

impl LinkOptions {
    /// The decided timings.
    pub fn decided(link: &decisions::Link) -> Self {
        Self {
            backoff_first: Duration::from_millis(link.backoff_ms.first),
            backoff_max: Duration::from_millis(link.backoff_ms.max),
            jitter: link.backoff_ms.jitter,
            stable_after: Duration::from_millis(link.stable_after_ms),
            ping_interval: Duration::from_millis(link.ping_interval_ms),
            dead_after_missed_pings: link.dead_after_missed_pings,
        }
    }
}

impl LinkOptions {
    /// The decided timings with the config's `link:` overrides applied.
    pub fn from_settings(timings: &crate::settings::LinkTimings, link: &decisions::Link) -> Self {
        let d = Self::decided(link);
        let ms = |v: Option<u64>, default: Duration| v.map(Duration::from_millis).unwrap_or(default);
        Self {
            backoff_first: ms(timings.backoff_first_ms, d.backoff_first),
            backoff_max: ms(timings.backoff_max_ms, d.backoff_max),
            jitter: d.jitter,
            stable_after: ms(timings.stable_after_ms, d.stable_after),
            ping_interval: ms(timings.ping_interval_ms, d.ping_interval).max(Duration::from_millis(50)),
            dead_after_missed_pings: timings
                .dead_after_missed_pings
                .unwrap_or(d.dead_after_missed_pings),
        }
    }

    /// The wait before redial number `attempt` (0-based): doubling, capped, jittered.
    pub fn backoff(&self, attempt: u32, random: f64) -> Duration {
        let base = self
            .backoff_first
            .saturating_mul(2u32.saturating_pow(attempt.min(20)))
            .min(self.backoff_max);
        let factor = 1.0 + self.jitter * (2.0 * random.clamp(0.0, 1.0) - 1.0);
        base.mul_f64(factor.max(0.0))
    }
}

/// Why the supervisor stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    Shutdown,
    NotLoggedIn(String),
    ServerNeedsUpdate(String),
    TokenRefused(String),
}

impl Stop {
    pub fn message(&self) -> Option<&str> {
        match self {
            Stop::Shutdown => None,
            Stop::NotLoggedIn(m) | Stop::ServerNeedsUpdate(m) | Stop::TokenRefused(m) => Some(m),
        }
    }
}

/// What the supervisor needs from the runtime.
pub struct Supervisor {
    pub options: LinkOptions,
    pub settings: watch::Receiver<Arc<Settings>>,
    pub status: watch::Sender<Status>,
    pub events: broadcast::Sender<DeviceEvent>,
    pub engine: crate::engine::Engine,
    pub board: crate::terminal::board::Board,
    pub shutdown: watch::Receiver<bool>,
    pub wake: broadcast::Sender<()>,
    /// What a final end does: stop (a headless service exits and says why), or wait for a
    /// person (the desktop's runtime keeps serving its window, which can log in again).
    pub at_final: AtFinal,
}

/// What the supervisor does when the link reaches a final state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtFinal {
    Stop,
    /// Keep the final state shown and dial again on a change of the settings (a login writes the
    /// server) or a wake (a login with a new token for the same server asks for one).
    Wait,
}

enum Dial {
    Linked(Box<Ws>),
    Unauthorized,
    Failed(String),
}

async fn dial(url: &url::Url, token: &Token) -> Dial {
    let mut request = match url.as_str().into_client_request() {
        Ok(r) => r,
        Err(e) => return Dial::Failed(format!("bad link address: {e}")),
    };
    let Ok(mut bearer) = http::HeaderValue::from_str(&format!("Bearer {}", token.expose())) else {
        return Dial::Unauthorized; // a token that cannot be a header value cannot be right
    };
    bearer.set_sensitive(true);
    request.headers_mut().insert(http::header::AUTHORIZATION, bearer);
    // A prompt may carry 25 MB of attachments, base64 in one message: frames as large as messages.
    let config = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let via = match proxy::for_link(url) {
        Ok(via) => via,
        Err(e) => return Dial::Failed(e.to_string()),
    };
    let connect = async {
        // Nagle off (here, and in the tunnel): a turn writes small frames back to back, and the
        // last would wait for a delayed ACK.
        // The process's TLS configuration: the system's roots are not read again at each dial.
        let tls = crate::tls::client_config().map(tokio_tungstenite::Connector::Rustls);
        let Some(via) = via else {
            return Ok(
                tokio_tungstenite::connect_async_tls_with_config(request, Some(config), true, tls).await,
            );
        };
        let host = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(443);
        let stream = proxy::tunnel(&via, host, port).await.map_err(|e| e.to_string())?;
        Ok(tokio_tungstenite::client_async_tls_with_config(request, stream, Some(config), tls).await)
    };
    match tokio::time::timeout(DIAL_TIMEOUT, connect).await {
        Ok(Err(proxy_said)) => Dial::Failed(proxy_said),
        Ok(Ok(Ok((ws, _)))) => Dial::Linked(Box::new(ws)),
        Ok(Ok(Err(tungstenite::Error::Http(response))))
            if response.status() == http::StatusCode::UNAUTHORIZED =>
        {
            Dial::Unauthorized
        }
        Ok(Ok(Err(tungstenite::Error::Http(response)))) => {
            Dial::Failed(format!("the link was refused ({})", response.status()))
        }
        Ok(Ok(Err(e))) => Dial::Failed(e.to_string()),
        Err(_) => Dial::Failed("the dial timed out".into()),
    }
}

impl Supervisor {
    fn set(&self, link: LinkState, error: Option<String>) {
        self.status.send_modify(|s| {
            s.link = link.clone();
            if error.is_some() {
                s.last_error = error.clone();
            }
            s.updated_ms = crate::status::now_ms();
        });
        let _ = self.events.send(DeviceEvent::Link { link, error });
    }

    fn stop(&self, stop: Stop) -> Stop {
        let state = match &stop {
            Stop::Shutdown => LinkState::Stopped,
            Stop::NotLoggedIn(_) => LinkState::NotLoggedIn,
            Stop::ServerNeedsUpdate(_) => LinkState::ServerNeedsUpdate,
            Stop::TokenRefused(_) => LinkState::TokenRefused,
        };
        if let Some(m) = stop.message() {
            tracing::error!("{m}");
        }
        self.set(state, stop.message().map(str::to_string));
        stop
    }

    pub async fn run(mut self) -> Stop {
        loop {
            let stop = self.run_until_final().await;
            if stop == Stop::Shutdown || self.at_final == AtFinal::Stop {
                return stop;
            }
            let mut wake = self.wake.subscribe();
            let mut settings = self.settings.clone();
            settings.mark_unchanged();
            tokio::select! {
                _ = self.shutdown.changed() => return self.stop(Stop::Shutdown),
                _ = wake.recv() => {}
                _ = settings.changed() => {}
            }
            tracing::info!(
                "dialling again after {}",
                stop.message().unwrap_or("a final state")
            );
        }
    }

    async fn run_until_final(&mut self) -> Stop {
        let client = discovery::http_client();
        let mut attempt: u32 = 0;
        loop {
            if *self.shutdown.borrow() {
                return self.stop(Stop::Shutdown);
            }
            let settings = self.settings.borrow().clone();
            let Some(server) = settings.server.clone() else {
                return self.stop(Stop::NotLoggedIn(
                    "Not logged in: this device has no server yet. Log in with: lembas login --token-stdin --server <url>".into(),
                ));
            };
            let url = match discovery::server_url(&server.url) {
                Ok(u) => u,
                Err(e) => {
                    return self.stop(Stop::NotLoggedIn(format!(
                        "The server in the config cannot be used: {e}"
                    )));
                }
            };
            self.status.send_modify(|s| {
                s.server = Some(server.url.clone());
                s.connection = server.connection.clone();
            });
            let keychain = self.engine.setup().keychain.clone();
            let token = match tokio::task::spawn_blocking(move || keychain.load()).await {
                Ok(Ok(t)) => t,
                Ok(Err(KeychainError::Missing | KeychainError::Empty)) => {
                    return self.stop(Stop::NotLoggedIn(KeychainError::Missing.to_string()));
                }
                Ok(Err(e)) => {
                    if !self.wait(&mut attempt, e.to_string()).await {
                        return self.stop(Stop::Shutdown);
                    }
                    continue;
                }
                Err(e) => {
                    return self.stop(Stop::NotLoggedIn(format!("The keychain could not be read: {e}")));
                }
            };
            self.set(LinkState::Connecting, None);
            match discovery::discover(&client, &url, self.engine.setup().decisions.protocol).await {
                Ok(_) => {}
                Err(e @ DiscoveryError::OldServer { .. }) => {
                    return self.stop(Stop::ServerNeedsUpdate(e.to_string()));
                }
                Err(e) => {
                    if !self.wait(&mut attempt, e.to_string()).await {
                        return self.stop(Stop::Shutdown);
                    }
                    continue;
                }
            }
            let ws = match dial(&discovery::link_url(&url), &token).await {
                Dial::Linked(ws) => *ws,
                Dial::Unauthorized => {
                    return self.stop(Stop::TokenRefused(format!(
                        "{} refused this device's token (401). Log in again: lembas login --token-stdin --server {}",
                        server.url, server.url
                    )));
                }
                Dial::Failed(why) => {
                    if !self
                        .wait(&mut attempt, format!("cannot link to {}: {why}", server.url))
                        .await
                    {
                        return self.stop(Stop::Shutdown);
                    }
                    continue;
                }
            };
            drop(token);
            let linked_at = Instant::now();
            self.set(LinkState::Linked, None);
            let announced = crate::dispatcher::Announced::of(&settings);
            self.status
                .send_modify(|s| s.limits = Some(announced.hello_limits()));
            tracing::info!(server = %server.url, "linked");
            let end = connection::run(
                ws,
                LinkContext {
                    settings: self.settings.clone(),
                    connection: server.connection.clone(),
                    events: self.events.clone(),
                    engine: self.engine.clone(),
                    board: self.board.clone(),
                    shutdown: self.shutdown.clone(),
                    wake: self.wake.subscribe(),
                    ping_interval: self.options.ping_interval,
                    dead_after: self.options.ping_interval * self.options.dead_after_missed_pings.max(1),
                },
            )
            .await;
            tracing::info!(?end, "link ended");
            if linked_at.elapsed() >= self.options.stable_after {
                attempt = 0;
            }
            match end {
                LinkEnd::Shutdown => return self.stop(Stop::Shutdown),
                LinkEnd::Refused { reason } => {
                    return self.stop(Stop::ServerNeedsUpdate(format!(
                        "{} closed the link with 4400 ({reason}): the server needs updating to LLeMbas 2.0 (protocol 3).",
                        server.url
                    )));
                }
                LinkEnd::LimitsChanged | LinkEnd::Woke => attempt = 0,
                LinkEnd::Dead => {
                    if !self
                        .wait(&mut attempt, "the link went quiet (no answer to pings)".into())
                        .await
                    {
                        return self.stop(Stop::Shutdown);
                    }
                }
                LinkEnd::Dropped(why) => {
                    if !self.wait(&mut attempt, why).await {
                        return self.stop(Stop::Shutdown);
                    }
                }
            }
        }
    }

    /// Waits before the next dial; `false` when asked to shut down meanwhile. A wake from sleep
    /// or a change of the settings (a new login) cuts the wait short.
    async fn wait(&mut self, attempt: &mut u32, why: String) -> bool {
        let delay = self.options.backoff(*attempt, fastrand::f64());
        *attempt = attempt.saturating_add(1);
        tracing::warn!(retry_in_ms = delay.as_millis() as u64, "{why}");
        self.set(
            LinkState::Offline {
                retry_in_ms: delay.as_millis() as u64,
            },
            Some(why),
        );
        let mut wake = self.wake.subscribe();
        let mut settings = self.settings.clone();
        settings.mark_unchanged();
        tokio::select! {
            _ = tokio::time::sleep(delay) => true,
            _ = self.shutdown.changed() => false,
            _ = wake.recv() => { *attempt = 0; true }
            _ = settings.changed() => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_caps_and_jitters() {
        let o = LinkOptions::decided(&decisions::Decisions::built_in().link);
        let ms = |a, r| o.backoff(a, r).as_millis() as u64;
        assert_eq!(ms(0, 0.5), 500);
        assert_eq!(ms(1, 0.5), 1000);
        assert_eq!(ms(3, 0.5), 4000);
        assert_eq!(ms(10, 0.5), 30000);
        assert_eq!(ms(1000, 0.5), 30000);
        assert_eq!(ms(0, 0.0), 400);
        assert_eq!(ms(0, 1.0), 600);
        assert_eq!(ms(10, 1.0), 36000);
    }
}
