//! `/undo`: the last turn leaves the conversation (as a rewind to it would) and the files it wrote
//! with `write` and `edit` are put back from the copies kept before its first write of each
//! ([`put_back`]: judged as writes under the limits as they are now; the answer names the files
//! left as they were). Changes made through `bash` have no copies and stay.

use super::super::Engine;
use super::super::put_back::put_back;
use super::super::session::{LastTurn, Message, Session};
use crate::rpc::RpcError;
use crate::store::Record;
use crate::store::message::ChatMessage;
use lembas_protocol::prompt::Undone;

/// What was undone: `undone` (`{ prompt, files }`, or null when no turn was left), and a sentence
/// naming the files that stayed as they were, if any.
pub async fn undo(engine: &Engine, session: &Session) -> Result<(Option<Undone>, Option<String>), RpcError> {
    let Some(LastTurn { turn_id, messages }) = session.last_turn() else {
        return Ok((None, None));
    };
    let prompt = messages
        .iter()
        .find_map(|m| match &m.body {
            ChatMessage::User(user) => Some(user.as_typed().to_string()),
            _ => None,
        })
        .unwrap_or_default();
    let wrote = wrote_files(&messages, &turn_id);
    let done = put_back(engine, session, &turn_id).await?;
    session.rewind(&turn_id);
    session.record(Record::Rewind {
        turn_id: turn_id.clone(),
    });
    session.flush();
    let texts = &engine.setup().decisions.commands.texts;
    let message = if !done.left.is_empty() {
        Some(texts.undo_left.replace("{{files}}", &done.left.join(", ")))
    } else if done.none_kept && wrote {
        // Its copies were pruned (or never kept): say so rather than seem to have put all back.
        Some(texts.undo_unkept.clone())
    } else {
        None
    };
    let undone = Undone {
        prompt,
        files: done.restored,
    };
    Ok((Some(undone), message))
}

/// Whether a `write` or `edit` call of the turn succeeded.
fn wrote_files(messages: &[Message], turn_id: &str) -> bool {
    let of_turn = || messages.iter().filter(|m| m.turn_id.as_deref() == Some(turn_id));
    let writes: Vec<&str> = of_turn()
        .flat_map(|m| match &m.body {
            ChatMessage::Assistant(said) => said.tool_calls.as_slice(),
            _ => &[],
        })
        .filter(|c| matches!(c.function.name.as_str(), "write" | "edit"))
        .map(|c| c.id.as_str())
        .collect();
    of_turn().any(|m| match &m.body {
        ChatMessage::Tool(result) => !result.is_error && writes.contains(&result.tool_call_id.as_str()),
        _ => false,
    })
}
