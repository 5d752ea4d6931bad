//! Chats started at this computer (ENGINE.md "Chats started at this computer"): a control client
//! plays the front end (`lembas chat`, the window's composer) against the real service, the
//! reference peer plays LLeMbas over the link. Shared, the chat is announced (again on every
//! link), its cards wait at both ends and the first answer wins, a prompt from the instance runs
//! in it, and it is left on unshare, close, the connection's end or the folder leaving the roots;
//! not shared, nothing of it goes over the link.

mod cards;
mod sharing;
mod working;

use super::*;
use lembas_device::control::calls::call;
use lembas_device::control::chat::params::{OpenParams, PromptParams};
use lembas_device::control::params::Streams;
use lembas_device::control::{CallError, Client, Subscription};
use std::time::Instant;

/// A front end: one connection that holds chats and hears every session's pushes.
pub(super) async fn front_end(home: &Home) -> Subscription {
    Client::connect_control(home.socket(), &home.cookie())
        .await
        .expect("the service's control socket")
        .subscribe_with(Streams {
            sessions: true,
            ..Streams::default()
        })
        .await
        .expect("subscribed")
}

/// The next push named `method` whose params match.
pub(super) async fn pushed(
    front: &mut Subscription,
    method: &str,
    matches: impl Fn(&Value) -> bool,
) -> Value {
    let end = Instant::now() + WAIT;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let (name, params) = tokio::time::timeout(left, front.next_notification())
            .await
            .unwrap_or_else(|_| panic!("no {method} push came"))
            .expect("the subscription goes on");
        if name == method && matches(&params) {
            return params;
        }
    }
}

/// Waits for the session's turn to start (`running`) or end, as the front end hears it.
pub(super) async fn turn_running(front: &mut Subscription, session: &str, running: bool) {
    pushed(front, "session/update", |p| {
        p["session_id"] == session
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == running
    })
    .await;
}

/// Prompts the chat from the front end, as typed (no turn id of its own).
pub(super) async fn prompt(front: &mut Subscription, session: &str, text: &str) {
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.to_string(),
                text: text.into(),
                turn_id: None,
            },
        )
        .await
        .expect("the prompt is taken");
}

pub(super) fn open_in(cwd: &Path, share: Option<bool>) -> OpenParams {
    OpenParams {
        cwd: Some(cwd.display().to_string()),
        model: Some(MODEL.into()),
        share,
        ..OpenParams::default()
    }
}

pub(super) fn reason(e: &CallError) -> String {
    match e {
        CallError::Rpc(e) => {
            assert_eq!(e.code, -32602, "{e:?}");
            e.data
                .as_ref()
                .and_then(|d| d["reason"].as_str())
                .unwrap_or("")
                .to_string()
        }
        other => panic!("not an error answer: {other}"),
    }
}

/// Every message on the link naming `session`.
pub(super) fn about(link: &LinkHandle, session: &str) -> Vec<Value> {
    link.received()
        .into_iter()
        .filter(|m| m.to_string().contains(session))
        .collect()
}
