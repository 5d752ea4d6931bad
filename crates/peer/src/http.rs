//! The instance's HTTP side: discovery, `/api/v1/instance`, `/v1/models`, the scripted model at
//! `/v1/chat/completions`, the link's upgrade at `/api/devices/link` and the memory's MCP endpoint at
//! `/mcp` (`mcp.rs`), each request recorded.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use crate::PeerState;
use crate::answers::{authorized, detail, unauthorized};
use crate::link::HelloRules;
use crate::link_task;
use crate::lock;
use crate::mcp;
use crate::model;

/// The path a device dials for its link.
pub const LINK_PATH: &str = "/api/devices/link";
/// Where discovery is served.
pub const DISCOVERY_PATH: &str = "/.well-known/lembas.json";
/// The instance description the CLI's `login --token-stdin` proves a token on.
pub const INSTANCE_PATH: &str = "/api/v1/instance";
/// The OpenAI-style model list.
pub const MODELS_PATH: &str = "/v1/models";
/// The OpenAI-compatible chat completions the scripted model streams.
pub const CHAT_COMPLETIONS_PATH: &str = "/v1/chat/completions";

/// The largest chat completion body taken: an agent's conversation with file contents in it
/// outgrows axum's default of 2 MiB long before a real server refuses it.
const CHAT_BODY_LIMIT: usize = 64 * 1024 * 1024;

pub(crate) fn router(state: Arc<PeerState>) -> Router {
    Router::new()
        .route(DISCOVERY_PATH, get(discovery))
        .route(INSTANCE_PATH, get(instance))
        .route(MODELS_PATH, get(models))
        .route(
            CHAT_COMPLETIONS_PATH,
            post(model::chat_completions).layer(DefaultBodyLimit::max(CHAT_BODY_LIMIT)),
        )
        .route(LINK_PATH, get(link_upgrade))
        .merge(mcp::router(state.clone()))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), record_request))
        .with_state(state)
}

async fn record_request(State(state): State<Arc<PeerState>>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    tracing::info!(%method, %path, status, "http");
    lock(&state.http_log).push((method, path, status));
    response
}

fn not_found_response() -> Response {
    detail(StatusCode::NOT_FOUND, "Not Found")
}

async fn not_found() -> Response {
    not_found_response()
}

async fn discovery(State(state): State<Arc<PeerState>>) -> Json<Value> {
    Json(lock(&state.config).discovery.clone())
}

async fn instance(State(state): State<Arc<PeerState>>, headers: HeaderMap) -> Response {
    let (body, token) = {
        let config = lock(&state.config);
        (config.instance.clone(), config.token.clone())
    };
    // A server without the endpoint answers 404 whatever the token.
    let Some(body) = body else {
        return not_found_response();
    };
    if !authorized(&headers, &token) {
        return unauthorized();
    }
    Json(body).into_response()
}

async fn models(State(state): State<Arc<PeerState>>, headers: HeaderMap) -> Response {
    let (body, token) = {
        let config = lock(&state.config);
        (config.models.clone(), config.token.clone())
    };
    if !authorized(&headers, &token) {
        return unauthorized();
    }
    Json(body).into_response()
}

async fn link_upgrade(
    State(state): State<Arc<PeerState>>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let (refuse, token, rules) = {
        let config = lock(&state.config);
        let rules = HelloRules {
            protocols: config.link_protocols.clone(),
            refusal_reason: config.hello_refusal_reason.clone(),
        };
        (config.refuse_upgrade, config.token.clone(), rules)
    };
    if let Some(status) = refuse {
        return match StatusCode::from_u16(status) {
            Ok(status) => detail(
                status,
                "the link is refused (the reference peer was told to refuse it)",
            ),
            Err(_) => detail(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("the peer's refuse_upgrade is {status}, which is not an HTTP status"),
            ),
        };
    }
    if !authorized(&headers, &token) {
        return unauthorized();
    }
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let shutdown = state.shutdown.clone();
    // Counted before the 101 goes out, so a device that saw its dial succeed is already counted.
    state
        .links_accepted
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    upgrade.on_upgrade(move |socket| async move {
        let (handle, run) = link_task::open(socket, headers, rules, shutdown);
        if state.new_links.send(handle).is_err() {
            // Nobody will take it (the peer is gone): the handle is dropped and the link with it.
            tracing::warn!("a device linked after the peer stopped taking links");
        }
        run.await;
    })
}
