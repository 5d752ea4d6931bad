//! `/undo`: the last turn leaves the conversation (as a rewind to it would) and the files it wrote
//! with `write` and `edit` are put back from the copies kept before its first write of each.
//! Putting a file back is a write, judged as one under `remote.max_mode` as it is now: a file the
//! device's limits no longer let remote work write is left as it is, and the answer says so.
//! Changes made through `bash` have no copies and stay.

use serde_json::{Value, json};

use super::super::Engine;
use super::super::session::{Message, Session, user_text};
use crate::decisions::decisions;
use crate::policy::bash_judge::Decision;
use crate::policy::tools::{Access, decide_path};
use crate::rpc::RpcError;
use crate::tools::copies::{self, Kept};

/// What was undone: `undone` (`{ prompt, files }`, or null when no turn was left), and a sentence
/// naming the files that stayed as they were, if any.
pub async fn undo(engine: &Engine, session: &Session) -> Result<(Value, Option<String>), RpcError> {
    let (turn_id, prompt, wrote) = {
        let state = session.state();
        let Some(turn_id) = state.messages.iter().rev().find_map(|m| m.turn_id.clone()) else {
            return Ok((Value::Null, None));
        };
        let prompt = state
            .messages
            .iter()
            .find(|m| m.turn_id.as_deref() == Some(turn_id.as_str()) && m.body["role"] == "user")
            .map(|m| user_text(&m.body).to_string())
            .unwrap_or_default();
        let wrote = wrote_files(&state.messages, &turn_id);
        (turn_id, prompt, wrote)
    };
    let dir = engine
        .store()
        .turn_copies_dir(&session.id, &turn_id)
        .map_err(|e| RpcError::internal(format!("The copies of the last turn cannot be found: {e}.")))?;
    let ctx = engine.tool_context(session);
    let max_mode = engine.settings().remote.max_mode;
    let put = tokio::task::spawn_blocking(move || {
        let kept = copies::kept_in(&dir)?;
        let mut restored = Vec::new();
        let mut left = Vec::new();
        for file in &kept {
            let allowed = decide_path(
                Access::Write,
                max_mode,
                &file.path,
                &ctx.project,
                &ctx.roots,
                &ctx.protected,
            )
            .decision
                != Decision::Deny;
            if allowed && unmoved(file) && copies::put_back(&dir, file).is_ok() {
                restored.push(file.path.display().to_string());
            } else {
                left.push(file.path.display().to_string());
            }
        }
        std::io::Result::Ok((restored, left, kept.is_empty()))
    })
    .await
    .map_err(|e| RpcError::internal(format!("Putting the files back stopped: {e}.")))?
    .map_err(|e| RpcError::internal(format!("The copies of the last turn cannot be read: {e}.")))?;
    let (restored, left, none_kept) = put;
    session.state().rewind(&turn_id);
    session.record(json!({ "type": "rewind", "turnId": turn_id }));
    session.flush();
    if let Err(e) = engine.store().remove_turn_copies(&session.id, &turn_id) {
        tracing::warn!(session = %session.id, "the undone turn's copies could not be removed: {e}");
    }
    let texts = &decisions().commands.texts;
    let message = if !left.is_empty() {
        Some(texts.undo_left.replace("{{files}}", &left.join(", ")))
    } else if none_kept && wrote {
        // Its copies were pruned (or never kept): say so rather than seem to have put all back.
        Some(texts.undo_unkept.clone())
    } else {
        None
    };
    Ok((json!({ "prompt": prompt, "files": restored }), message))
}

/// Whether a `write` or `edit` call of the turn succeeded.
fn wrote_files(messages: &[Message], turn_id: &str) -> bool {
    let of_turn = || messages.iter().filter(|m| m.turn_id.as_deref() == Some(turn_id));
    let writes: Vec<&str> = of_turn()
        .flat_map(|m| m.body["tool_calls"].as_array().into_iter().flatten())
        .filter(|c| {
            matches!(
                c.pointer("/function/name").and_then(Value::as_str),
                Some("write" | "edit")
            )
        })
        .filter_map(|c| c["id"].as_str())
        .collect();
    of_turn().any(|m| {
        m.body["role"] == "tool"
            && m.body["is_error"] != true
            && m.body["tool_call_id"]
                .as_str()
                .is_some_and(|id| writes.contains(&id))
    })
}

/// The file's folder still resolves to where the file was written: a folder swapped for a symlink
/// since would send the old content somewhere else.
fn unmoved(file: &Kept) -> bool {
    let (Some(parent), Some(name)) = (file.path.parent(), file.path.file_name()) else {
        return false;
    };
    match std::fs::canonicalize(parent) {
        Ok(resolved) => resolved.join(name) == file.path,
        // The folder is gone: only a file that did not exist before may stay gone.
        Err(_) => file.copy.is_none(),
    }
}
