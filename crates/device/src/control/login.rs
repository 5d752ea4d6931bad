//! `login { server, token }` and `logout`: the window's login, done by the runtime of the same
//! user (the socket is 0600 and every peer's credentials are checked), as `lembas login` does it:
//! the token proved on the server, stored in the OS keychain, the server written to the config;
//! then the link dials again at once. The token crosses the socket once and is never logged or
//! echoed. Errors carry the code a face branches on in `data.reason`.

use serde_json::Value;

use crate::keychain::{Token, TokenStorage};
use crate::login::{self, LoginError};
use crate::rpc::{self, RpcError};
use lembas_protocol::Reason;

use super::params::{LoginParams, Said};
use super::runtime_handles::RuntimeHandles;

/// The server and the token from the params, read without serde's messages (which could quote a
/// value given in the wrong place).
fn asked(params: Value) -> Result<(String, Token), RpcError> {
    let Ok(LoginParams { server, token }) = serde_json::from_value(params) else {
        return Err(RpcError::invalid_params(
            "login takes { server, token }: the server's address and the device token, as strings.",
        ));
    };
    let token = Token::new(&token).map_err(|_| {
        RpcError::with_reason(
            rpc::INVALID_PARAMS,
            Reason::MalformedToken,
            "Paste the device token first.",
        )
    })?;
    Ok((server.trim().to_string(), token))
}

pub(super) async fn login(parts: &RuntimeHandles, params: Value) -> Result<Value, RpcError> {
    let (server, token) = asked(params)?;
    let done = login::login(parts.engine.setup(), &server, token, TokenStorage::Keychain)
        .await
        .map_err(error)?;
    // A new token for the same server leaves the config as it was: dial again explicitly.
    let _ = parts.wake.send(());
    let name = done
        .name
        .or(done.connection)
        .unwrap_or_else(|| done.base_url.clone());
    let account = done.account.map(|a| format!(" as {a}")).unwrap_or_default();
    let again = if done.fresh { "" } else { " again" };
    lembas_protocol::request::answer(Said {
        message: format!(
            "Logged in{again} to {name} ({}), LLeMbas {}{account}. The token is in the OS keychain.",
            done.base_url, done.version
        ),
    })
}

/// A login error as a face gets it: bad input (-32602) or the device's trouble (-32603), with the
/// code to branch on.
fn error(e: LoginError) -> RpcError {
    let (code, reason) = match &e {
        // The core's sentence speaks of standard input; a face has a field.
        LoginError::MalformedToken => {
            return RpcError::with_reason(
                rpc::INVALID_PARAMS,
                Reason::MalformedToken,
                "The token has spaces or line breaks inside it; paste only the token, on one line.",
            );
        }
        LoginError::BadServer(_) => (rpc::INVALID_PARAMS, Reason::BadServer),
        LoginError::TokenRefused { .. } => (rpc::INVALID_PARAMS, Reason::TokenRefused),
        LoginError::NoLinkScope { .. } => (rpc::INVALID_PARAMS, Reason::NoLinkScope),
        LoginError::ServerNeedsUpdate(_) | LoginError::OlderServer { .. } => {
            (rpc::INTERNAL_ERROR, Reason::ServerNeedsUpdate)
        }
        LoginError::Unreachable { .. } => (rpc::INTERNAL_ERROR, Reason::Unreachable),
        LoginError::BadAnswer { .. } => (rpc::INTERNAL_ERROR, Reason::BadAnswer),
        LoginError::Config(_) | LoginError::Save(_) => (rpc::INTERNAL_ERROR, Reason::ConfigUnwritable),
        LoginError::Keychain(_) => (rpc::INTERNAL_ERROR, Reason::Keychain),
        LoginError::Internal(_) => (rpc::INTERNAL_ERROR, Reason::Internal),
    };
    RpcError::with_reason(code, reason, e.to_string())
}

pub(super) async fn logout(parts: &RuntimeHandles) -> Result<Said, RpcError> {
    let said = login::logout(parts.engine.setup()).await;
    // A link open with the old token ends now, not at its next drop.
    let _ = parts.wake.send(());
    match said {
        Ok(done) => Ok(Said {
            message: match done.server {
                Some(server) => format!(
                    "Logged out of {server}: the login is gone from the config and the token from this computer."
                ),
                None => "This device was not logged in; any token left is gone too.".to_string(),
            },
        }),
        Err(e) => Err(RpcError::with_reason(
            rpc::INTERNAL_ERROR,
            Reason::LogoutIncomplete,
            e.to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_empty_or_broken_token_is_refused_without_echoing_it() {
        let e = asked(json!({ "server": "http://127.0.0.1:9", "token": "  " })).unwrap_err();
        assert_eq!(e.data, Some(json!({ "reason": "malformed_token" })));
        let e = asked(json!({ "server": "http://127.0.0.1:9", "token": 7 })).unwrap_err();
        assert_eq!(e.code, rpc::INVALID_PARAMS);
        let e = error(LoginError::MalformedToken);
        assert_eq!(e.data, Some(json!({ "reason": "malformed_token" })));
        assert!(e.message.contains("paste only the token"), "{}", e.message);
    }

    #[test]
    fn each_login_error_has_its_code() {
        let e = error(LoginError::TokenRefused {
            server: "https://llm.example".into(),
        });
        assert_eq!(
            (e.code, e.data),
            (rpc::INVALID_PARAMS, Some(json!({ "reason": "token_refused" })))
        );
        assert!(e.message.contains("Get a new device token"), "{}", e.message);
        let e = error(LoginError::Unreachable {
            server: "http://127.0.0.1:9".into(),
            why: "connection refused".into(),
        });
        assert_eq!(e.data, Some(json!({ "reason": "unreachable" })));
    }
}
