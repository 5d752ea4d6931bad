//! Deleting a session: the link's `_lembas/session/delete` and an editor's `session/delete`, by
//! one set of rules (docs/protocol.md); and a session a cancelled `session/new` made, removed again.

use std::path::Path;

use super::Engine;
use super::session_access::holder;
use crate::rpc::RpcError;
use crate::store::ids;
use lembas_protocol::session::{Deleted, Empty, SessionRef};

/// docs/protocol.md: the device deletes a session the client holds now or was ever given (the `given` mark
/// in the store), or else one whose folder is inside the roots while remote work is on (trust not
/// asked: deleting runs nothing there). Anything else, an editor's session elsewhere say: -32602.
/// One another process has open is deleted all the same: the spec has the chat gone everywhere,
/// and a terminal that has it open starts a new one.
pub(super) async fn for_link(engine: &Engine, params: SessionRef) -> Result<Deleted, RpcError> {
    let id = params.session_id;
    if !ids::is_session_id(&id) {
        return Err(RpcError::invalid_params(format!(
            "{id} is not a session id of this device (ses_…)."
        )));
    }
    // A chat held at this computer and not shared is not the link's to touch.
    if !engine.link_sees(&id) {
        return Err(RpcError::invalid_params(format!(
            "The chat {id} is held at this computer and not shared with LLeMbas."
        )));
    }
    Ok(Deleted {
        deleted: delete_session(engine, &id, OtherHolder::DeleteAnyway).await?,
    })
}

/// ACP's `session/delete` (an editor's): the link's rules, a session that is not there is -32602
/// (ACP's answer has no `deleted` to say so), and one another process has open (another editor's,
/// the service's) is not deleted under it: -32602 naming the holder.
pub(super) async fn for_editor(engine: &Engine, params: SessionRef) -> Result<Empty, RpcError> {
    let id = params.session_id;
    let known = engine.sessions().contains_key(&id) || ids::is_session_id(&id) && engine.store().exists(&id);
    if !known {
        return Err(RpcError::invalid_params(format!(
            "There is no session {id} on this computer to delete (session/list says which there are)."
        )));
    }
    delete_session(engine, &id, OtherHolder::Refuse).await?;
    Ok(Empty {})
}

/// What a delete does with a session another process has open.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum OtherHolder {
    /// Held while the files go, so nobody opens it meanwhile; one already open elsewhere is
    /// refused with -32602 naming the holder.
    Refuse,
    /// Deleted under it (the link's delete: the chat is gone everywhere).
    DeleteAnyway,
}

/// Deletes the session `id` (a well-formed id): `true` when there was one.
pub(super) async fn delete_session(
    engine: &Engine,
    id: &str,
    other_holder: OtherHolder,
) -> Result<bool, RpcError> {
    let held_here = engine.sessions().contains_key(id);
    let mut _hold = None;
    if !held_here && engine.store().exists(id) {
        let summary = engine
            .store()
            .summary(id)
            .map_err(|e| RpcError::internal(format!("The session {id} could not be read: {e}.")))?;
        if !summary.given {
            deletable(engine, id, Path::new(&summary.cwd))?;
        }
        if other_holder == OtherHolder::Refuse {
            _hold = Some(
                engine
                    .store()
                    .hold(id, &holder(engine))
                    .map_err(|e| RpcError::invalid_params(format!("{id} is not deleted: {e}")))?,
            );
        }
    }
    let in_memory = engine.sessions().remove(id);
    // A front end holding it hears of the delete as the event `session_deleted`.
    engine.forget_holder(id);
    engine.files().forget(id);
    engine.shelf().forget_session(id);
    if let Some(session) = &in_memory {
        session.cancel();
        session.stop_jobs();
        session.stop_mcp_servers();
        engine.withdraw_cards_of(id).await;
    }
    let deleted = engine
        .store()
        .delete(id)
        .map_err(|e| RpcError::internal(format!("The session {id} could not be removed: {e}.")))?;
    let deleted = deleted || in_memory.is_some();
    if deleted {
        engine.device_event(crate::events::DeviceEvent::SessionDeleted {
            session_id: id.into(),
        });
    }
    Ok(deleted)
}

/// A session never given to the link's client: deleted only inside the roots with remote work on.
fn deletable(engine: &Engine, id: &str, cwd: &Path) -> Result<(), RpcError> {
    let settings = engine.settings();
    let rules = settings.folder_rules();
    let resolved = crate::paths::resolved(cwd);
    if !rules.enabled {
        return Err(RpcError::invalid_params(format!(
            "{id} was not made for LLeMbas, and remote work is off on this computer: it is not deleted from here. Turn remote work on, or delete it on this computer (lembas sessions delete {id})."
        )));
    }
    if !rules.roots.iter().any(|root| resolved.starts_with(root)) {
        return Err(RpcError::invalid_params(format!(
            "{id} was not made for LLeMbas, and its folder {} is outside the folders this computer allows for remote work: it is not deleted from here.",
            cwd.display()
        )));
    }
    Ok(())
}
