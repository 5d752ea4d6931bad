//! Putting a turn's files back from the copies kept before its first write of each (`/undo`, and
//! the timeline's "Put back"). Putting a file back is a write, judged as one under
//! `remote.max_mode` as it is now: a file the device's limits no longer let remote work write is
//! left as it is, and so is one whose folder moved since. Changes made through `bash` have no
//! copies and stay.

use super::Engine;
use super::session::Session;
use crate::policy::bash_judge::Decision;
use crate::policy::tools::{Access, decide_path};
use crate::rpc::RpcError;
use crate::status::now_ms;
use crate::store::Record;
use crate::store::record::PutBackRecord;
use crate::tools::copies::{self, Kept};

/// What one turn's put-back did.
#[derive(Debug, Default)]
pub struct PutBackDone {
    pub restored: Vec<String>,
    pub left: Vec<String>,
    /// The turn had no copies (pruned, or it wrote nothing).
    pub none_kept: bool,
}

/// Puts back the files of `turn_id`, records it in the session (`put_back`, which the timeline
/// shows) and removes the turn's copies, so a second put-back finds none.
pub async fn put_back(engine: &Engine, session: &Session, turn_id: &str) -> Result<PutBackDone, RpcError> {
    let dir = engine
        .store()
        .turn_copies_dir(&session.id, turn_id)
        .map_err(|e| RpcError::internal(format!("The copies of the turn cannot be found: {e}.")))?;
    let ctx = engine.tool_context(session);
    let max_mode = engine.settings().remote.max_mode;
    let done = tokio::task::spawn_blocking(move || {
        let kept = copies::kept_in(&dir)?;
        let mut done = PutBackDone {
            none_kept: kept.is_empty(),
            ..PutBackDone::default()
        };
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
                done.restored.push(file.path.display().to_string());
            } else {
                done.left.push(file.path.display().to_string());
            }
        }
        std::io::Result::Ok(done)
    })
    .await
    .map_err(|e| RpcError::internal(format!("Putting the files back stopped: {e}.")))?
    .map_err(|e| RpcError::internal(format!("The copies of the turn cannot be read: {e}.")))?;
    if !done.none_kept {
        session.record(Record::PutBack(PutBackRecord {
            turn_id: turn_id.to_string(),
            at_ms: now_ms(),
            files: done.restored.clone(),
            left: done.left.clone(),
        }));
    }
    if let Err(e) = engine.store().remove_turn_copies(&session.id, turn_id) {
        tracing::warn!(session = %session.id, "the put-back turn's copies could not be removed: {e}");
    }
    Ok(done)
}

/// The file's folder still resolves to where the file was written: a folder swapped for a symlink
/// since would send the old content somewhere else.
fn unmoved(file: &Kept) -> bool {
    let (Some(parent), Some(name)) = (file.path.parent(), file.path.file_name()) else {
        return false;
    };
    match crate::canonical::canonicalize(parent) {
        Ok(resolved) => resolved.join(name) == file.path,
        // The folder is gone: only a file that did not exist before may stay gone.
        Err(_) => file.copy.is_none(),
    }
}
