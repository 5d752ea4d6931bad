//! The chats a terminal on the device shares, as the instance reads them from the spec's text
//! (acp.md `_lembas/session/announce` and `_lembas/session/left`): what each notification must
//! carry, read strictly so a device that sends less (or a wrong `origin`) is a fault the test sees.

use serde::Deserialize;
use serde_json::Value;

/// `_lembas/session/announce`: { sessionId, cwd, title, model, instance, mode, effort, busy,
/// origin: "terminal" }.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Announced {
    pub session_id: String,
    pub cwd: String,
    pub title: String,
    pub model: String,
    /// The session's model is this link's instance's.
    pub instance: bool,
    pub mode: String,
    pub effort: String,
    pub busy: bool,
    pub origin: String,
}

/// `_lembas/session/left`: { sessionId, available }.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Left {
    pub session_id: String,
    /// The device can open it from the store at the next prompt.
    pub available: bool,
}

pub const ANNOUNCE: &str = "_lembas/session/announce";
pub const LEFT: &str = "_lembas/session/left";

/// What is wrong with `message` when it is an announce or a left that the spec does not allow.
pub(crate) fn fault_of(message: &Value) -> Option<String> {
    let method = message.get("method")?.as_str()?;
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    if message.get("id").is_some() && (method == ANNOUNCE || method == LEFT) {
        return Some(format!(
            "{method} is a notification, but the device sent it with an id"
        ));
    }
    match method {
        ANNOUNCE => match serde_json::from_value::<Announced>(params.clone()) {
            Ok(a) if a.origin != "terminal" => Some(format!(
                "{ANNOUNCE} has origin {:?}; the spec says \"terminal\": {params}",
                a.origin
            )),
            Ok(_) => None,
            Err(e) => Some(format!("{ANNOUNCE} is not as the spec says ({e}): {params}")),
        },
        LEFT => serde_json::from_value::<Left>(params.clone())
            .err()
            .map(|e| format!("{LEFT} is not as the spec says ({e}): {params}")),
        _ => None,
    }
}

/// The announces among `received`, in order (those the spec allows).
pub(crate) fn announced(received: &[Value]) -> Vec<Announced> {
    of_method(received, ANNOUNCE)
}

/// The lefts among `received`, in order.
pub(crate) fn left(received: &[Value]) -> Vec<Left> {
    of_method(received, LEFT)
}

fn of_method<T: for<'de> Deserialize<'de>>(received: &[Value], method: &str) -> Vec<T> {
    received
        .iter()
        .filter(|m| m.get("method").and_then(Value::as_str) == Some(method) && m.get("id").is_none())
        .filter_map(|m| serde_json::from_value(m.get("params").cloned()?).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_announce_must_carry_every_field_and_say_terminal() {
        let whole = json!({ "jsonrpc": "2.0", "method": ANNOUNCE, "params": {
            "sessionId": "ses_1", "cwd": "/w", "title": "", "model": "m", "instance": true,
            "mode": "edit", "effort": "default", "busy": false, "origin": "terminal" } });
        assert_eq!(fault_of(&whole), None);
        assert_eq!(announced(std::slice::from_ref(&whole)).len(), 1);
        let mut wrong = whole.clone();
        wrong["params"]["origin"] = json!("web");
        assert!(fault_of(&wrong).unwrap().contains("origin"));
        let mut short = whole;
        short["params"].as_object_mut().unwrap().remove("busy");
        assert!(fault_of(&short).unwrap().contains("busy"));
        assert!(announced(&[short]).is_empty());
    }

    #[test]
    fn a_left_says_whether_it_is_available() {
        let left_ok = json!({ "jsonrpc": "2.0", "method": LEFT, "params": { "sessionId": "ses_1", "available": true } });
        assert_eq!(fault_of(&left_ok), None);
        assert!(left(&[left_ok])[0].available);
        let bad = json!({ "jsonrpc": "2.0", "method": LEFT, "params": { "sessionId": "ses_1" } });
        assert!(fault_of(&bad).is_some());
    }
}
