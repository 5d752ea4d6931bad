//! What the instance's HTTP endpoints share, below each of them: the bearer token check and the
//! JSON error answers (`{ "detail": … }`, as the instance's API writes them).

use axum::Json;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub(crate) fn detail(status: StatusCode, detail: &str) -> Response {
    (status, Json(json!({ "detail": detail }))).into_response()
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
