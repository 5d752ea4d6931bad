//! JSON-RPC 2.0 as the link and the control socket speak it: one WebSocket text frame (one line
//! on the socket) is one message. Parsing never fails the connection: whatever arrives becomes an
//! [`Incoming`] or an error answer to send back.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::Reason;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's: the client must `authenticate` first (an editor's device not logged in).
pub const AUTH_REQUIRED: i64 = -32000;
/// ACP's: the request was cancelled by `$/cancel_request` before it was answered.
pub const REQUEST_CANCELLED: i64 = -32800;

/// An error answer: the spec's code, a sentence a person can act on, and optional `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }
    /// -32602 with `data: { reason }`, as scheduled refusals carry.
    pub fn refused(message: impl Into<String>, reason: Reason) -> Self {
        Self::with_reason(INVALID_PARAMS, reason, message)
    }
    /// Any code with `data: { reason }`.
    pub fn with_reason(code: i64, reason: Reason, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: Some(json!({ "reason": reason })),
        }
    }
    /// The `data.reason` it carries, when it is one this build knows.
    pub fn reason(&self) -> Option<Reason> {
        Reason::from_name(self.data.as_ref()?.get("reason")?.as_str()?)
    }
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("This device does not offer {method}."))
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// A message read from the link.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// An answer to one of our own requests.
    Response {
        id: Value,
        result: Result<Value, RpcError>,
    },
}

/// What a frame that is not a usable message gets: an error answer (id null when none was readable).
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    pub id: Value,
    pub error: RpcError,
}

pub fn parse(text: &str) -> Result<Incoming, Rejected> {
    let value: Value = serde_json::from_str(text).map_err(|e| Rejected {
        id: Value::Null,
        error: RpcError::new(PARSE_ERROR, format!("The message is not valid JSON ({e}).")),
    })?;
    let invalid = |id: Value, why: &str| Rejected {
        id,
        error: RpcError::new(INVALID_REQUEST, why.to_string()),
    };
    let obj = match value {
        Value::Object(obj) => obj,
        Value::Array(_) => {
            return Err(invalid(
                Value::Null,
                "Batches (JSON arrays) are not supported on this link: send one message per frame.",
            ));
        }
        _ => return Err(invalid(Value::Null, "A JSON-RPC message must be a JSON object.")),
    };
    let id = obj.get("id").cloned();
    let id_ok = matches!(id, None | Some(Value::Null | Value::String(_) | Value::Number(_)));
    if !id_ok {
        return Err(invalid(Value::Null, "The id must be a string, a number or null."));
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(
            id.unwrap_or(Value::Null),
            "The message must say \"jsonrpc\": \"2.0\".",
        ));
    }
    match obj.get("method") {
        Some(Value::String(method)) => {
            let params = obj.get("params").cloned().unwrap_or(Value::Null);
            if !matches!(params, Value::Null | Value::Object(_) | Value::Array(_)) {
                return Err(invalid(
                    id.unwrap_or(Value::Null),
                    "params must be an object or an array.",
                ));
            }
            let method = method.clone();
            Ok(match id {
                Some(id) => Incoming::Request { id, method, params },
                None => Incoming::Notification { method, params },
            })
        }
        Some(_) => Err(invalid(id.unwrap_or(Value::Null), "The method must be a string.")),
        None => {
            let Some(id) = id else {
                return Err(invalid(
                    Value::Null,
                    "A message needs a method, or an id with a result or an error.",
                ));
            };
            if let Some(result) = obj.get("result") {
                return Ok(Incoming::Response {
                    id,
                    result: Ok(result.clone()),
                });
            }
            match obj.get("error").and_then(Value::as_object) {
                Some(err) => {
                    let code = err.get("code").and_then(Value::as_i64).unwrap_or(INTERNAL_ERROR);
                    let message = err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let data = err.get("data").cloned();
                    Ok(Incoming::Response {
                        id,
                        result: Err(RpcError { code, message, data }),
                    })
                }
                None => Err(invalid(id, "An answer needs a result or an error.")),
            }
        }
    }
}

pub fn request(id: &Value, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

pub fn notification(method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string()
}

pub fn answer(id: &Value, result: Result<Value, RpcError>) -> String {
    match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string(),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }).to_string(),
    }
}

/// Reads typed params, turning a mismatch into -32602 with serde's sentence about what is wrong
/// and where (`mcpServers[0].name: invalid type: …`).
pub fn params<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() {
        Value::Object(Map::new())
    } else {
        params
    };
    serde_path_to_error::deserialize(params).map_err(|e| {
        let place = e.path().to_string();
        let why = e.into_inner();
        let said = if place == "." {
            why.to_string()
        } else {
            format!("{place}: {why}")
        };
        RpcError::invalid_params(format!("The params of {method} are not right: {said}."))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind_and_rejects_the_rest() {
        let cases: &[(&str, Option<i64>)] = &[
            (r#"{"jsonrpc":"2.0","id":1,"method":"a","params":{}}"#, None),
            (r#"{"jsonrpc":"2.0","method":"a"}"#, None),
            (r#"{"jsonrpc":"2.0","id":"x","result":{}}"#, None),
            (
                r#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}}"#,
                None,
            ),
            ("{", Some(PARSE_ERROR)),
            ("", Some(PARSE_ERROR)),
            ("[]", Some(INVALID_REQUEST)),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"a"}]"#,
                Some(INVALID_REQUEST),
            ),
            ("42", Some(INVALID_REQUEST)),
            (r#"{"id":1,"method":"a"}"#, Some(INVALID_REQUEST)),
            (r#"{"jsonrpc":"2.0","id":{},"method":"a"}"#, Some(INVALID_REQUEST)),
            (r#"{"jsonrpc":"2.0","id":1,"method":5}"#, Some(INVALID_REQUEST)),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"a","params":3}"#,
                Some(INVALID_REQUEST),
            ),
            (r#"{"jsonrpc":"2.0","id":1}"#, Some(INVALID_REQUEST)),
        ];
        for (text, code) in cases {
            let got = parse(text).err().map(|r| r.error.code);
            assert_eq!(got, *code, "{text}");
        }
    }

    #[test]
    fn keeps_the_id_when_it_can() {
        let r = parse(r#"{"id":7,"method":"a"}"#).unwrap_err();
        assert_eq!(r.id, json!(7));
    }
}
