//! `sessions/*`: the sessions on this computer for its window, with what is live in this runtime
//! (working or not, model, mode, a scheduled run), a chat's timeline, Stop, Put back (`undo`) and
//! Take back (`revoke`).

use lembas_protocol::{ControlMethod, Reason};
use serde_json::Value;
use std::collections::HashMap;

use super::calls::{call, notification, push, serve_call};
use super::params::{ListedSession, SessionParams, Stopped};
use crate::engine::timeline::Timeline;
use crate::engine::{Engine, LiveSession, ShownUpdate};
use crate::rpc::RpcError;
use crate::store::SessionSummary;

/// A `sessions/*` request.
pub(super) async fn request(
    engine: &Engine,
    method: ControlMethod,
    params: Value,
) -> Result<Value, RpcError> {
    match method {
        ControlMethod::SessionsList => serve_call(call::SessionsList, params, |_| list(engine)).await,
        ControlMethod::SessionsTimeline => {
            serve_call(call::SessionsTimeline, params, |asked| timeline(engine, asked)).await
        }
        ControlMethod::SessionsStop => {
            serve_call(
                call::SessionsStop,
                params,
                |asked| async move { stop(engine, asked) },
            )
            .await
        }
        ControlMethod::SessionsUndo => {
            serve_call(call::SessionsUndo, params, |asked| async move {
                engine.put_back_from(&asked.session_id, &asked.turn_id).await
            })
            .await
        }
        ControlMethod::SessionsRevoke => {
            serve_call(call::SessionsRevoke, params, |asked| async move {
                engine.revoke(&asked.session_id, &asked.grant)
            })
            .await
        }
        other => Err(RpcError::method_not_found(other.name())),
    }
}

/// Running first, then the latest; the stored order is kept within each.
async fn list(engine: &Engine) -> Result<Vec<ListedSession>, RpcError> {
    let store = engine.store().clone();
    let stored = tokio::task::spawn_blocking(move || store.list())
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
        .map_err(|e| RpcError::internal(format!("cannot read the sessions: {e}")))?;
    Ok(merged(stored, engine.live_sessions()))
}

pub fn merged(stored: Vec<SessionSummary>, live: Vec<LiveSession>) -> Vec<ListedSession> {
    let live: HashMap<String, LiveSession> = live.into_iter().map(|l| (l.id.clone(), l)).collect();
    let mut listed: Vec<ListedSession> = stored
        .into_iter()
        .map(|summary| {
            let here = live.get(&summary.id);
            ListedSession {
                running: here.is_some_and(|l| l.running),
                open: here.is_some(),
                model: here.map(|l| l.model.clone()),
                mode: here.map(|l| l.mode.clone()),
                scheduled: here.is_some_and(|l| l.scheduled),
                summary,
            }
        })
        .collect();
    // Stable: the latest first within the running and the resting.
    listed.sort_by_key(|s| !s.running);
    listed
}

async fn timeline(engine: &Engine, asked: SessionParams) -> Result<Timeline, RpcError> {
    let engine = engine.clone();
    tokio::task::spawn_blocking(move || engine.timeline(&asked.session_id))
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
}

fn stop(engine: &Engine, asked: SessionParams) -> Result<Stopped, RpcError> {
    if !engine.stop(&asked.session_id) {
        return Err(RpcError::refused(
            format!(
                "Nothing is running in {} on this computer: there is no turn to stop.",
                asked.session_id
            ),
            Reason::NotRunning,
        ));
    }
    Ok(Stopped {
        session_id: asked.session_id,
        stopped: true,
    })
}

/// The push a subscriber gets for a session's update.
pub(super) fn push(update: ShownUpdate) -> String {
    notification(push::SessionUpdate, &update)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(id: &str, updated_ms: u64) -> SessionSummary {
        SessionSummary {
            id: id.into(),
            title: String::new(),
            cwd: "/p".into(),
            created_ms: 1,
            updated_ms,
            messages: 0,
            given: false,
        }
    }

    #[test]
    fn running_sessions_come_first_then_the_latest() {
        let live = vec![LiveSession {
            id: "ses_old".into(),
            running: true,
            model: "m".into(),
            mode: "ask".into(),
            scheduled: true,
        }];
        let listed = merged(
            vec![stored("ses_new", 3), stored("ses_mid", 2), stored("ses_old", 1)],
            live,
        );
        let ids: Vec<&str> = listed.iter().map(|s| s.summary.id.as_str()).collect();
        assert_eq!(ids, ["ses_old", "ses_new", "ses_mid"]);
        assert_eq!(
            (listed[0].model.as_deref(), listed[0].scheduled),
            (Some("m"), true)
        );
        assert_eq!((listed[1].open, listed[1].model.as_deref()), (false, None));
        // The old fields stay where they were.
        let line = json!(listed[1]);
        assert_eq!(
            (line["id"].as_str(), line["updated_ms"].as_u64()),
            (Some("ses_new"), Some(3))
        );
    }
}
