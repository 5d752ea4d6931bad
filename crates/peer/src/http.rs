//! The instance's HTTP side: discovery, `/api/v1/instance`, `/v1/models`, the scripted model at
//! `/v1/chat/completions`, the link's upgrade at `/api/devices/link` and the memory's MCP endpoint at
//! `/mcp` (`mcp.rs`), each request recorded.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::PeerState;
use crate::link::{self, HelloRules};
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

pub(crate) fn detail(status: StatusCode, detail: &str) -> Response {
    (status, Json(json!({ "detail": detail }))).into_response()
}

fn not_found_response() -> Response {
    detail(StatusCode::NOT_FOUND, "Not Found")
}

async fn not_found() -> Response {
    not_found_response()
}

pub(crate) fn unauthorized() -> Response {
    let mut response = detail(
        StatusCode::UNAUTHORIZED,
        "this token is not accepted here: send Authorization: Bearer <the device token>",
    );
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// Whether the request carries `Authorization: Bearer <token>` with exactly the configured token.
pub(crate) fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, presented)) = value.split_once(' ') else {
        return false;
    };
    // The scheme is case-insensitive (RFC 9110 §11.1); the token is compared exactly.
    scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && same_token(presented.trim(), token)
}

/// Compares without stopping at the first difference, so timing says nothing about the token.
fn same_token(presented: &str, token: &str) -> bool {
    let (a, b) = (presented.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |differ, (x, y)| differ | (x ^ y)) == 0
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
        let (handle, run) = link::open(socket, headers, rules, shutdown);
        if state.new_links.send(handle).is_err() {
            // Nobody will take it (the peer is gone): the handle is dropped and the link with it.
            tracing::warn!("a device linked after the peer stopped taking links");
        }
        run.await;
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_authorization(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn bearer_token_is_checked_exactly() {
        let cases = [
            ("Bearer t0k", "t0k", true),
            ("bearer t0k", "t0k", true),
            ("Bearer t0k ", "t0k", true),
            ("Bearer t0", "t0k", false),
            ("Bearer t0kk", "t0k", false),
            ("Basic t0k", "t0k", false),
            ("t0k", "t0k", false),
            ("Bearer ", "", false),
            ("Bearer", "", false),
        ];
        for (header_value, token, expected) in cases {
            assert_eq!(
                authorized(&with_authorization(header_value), token),
                expected,
                "{header_value:?}"
            );
        }
        assert!(!authorized(&HeaderMap::new(), "t0k"));
    }
}
