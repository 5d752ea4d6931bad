//! `window/state`: the snapshot the window shows ([`Snapshot`]), built by the runtime from its
//! status, the config, the activity it folded and the open approval cards, so a window needs
//! nothing but this socket whichever process runs the device.

use crate::desktop_view::pending::open_cards;
use crate::desktop_view::{self, HostState, Snapshot};
use crate::poison::Recover;
use crate::rpc::RpcError;
use crate::settings;

use super::runtime_handles::RuntimeHandles;

/// How the desktop app names itself in the device lock: its window shows no "runs in" note for
/// its own runtime, and names any other holder (a headless `lembas service run`).
pub const DESKTOP_HOLDER: &str = "LLeMbas Desktop";

pub(super) async fn snapshot(parts: &RuntimeHandles) -> Result<Snapshot, RpcError> {
    let dirs = parts.engine.setup().dirs.clone();
    let home = dirs.home.clone();
    let loaded = tokio::task::spawn_blocking(move || settings::load(&dirs))
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
        .map_err(|e| e.to_string());
    let host = HostState {
        status: Some(parts.status.borrow().clone()),
        held_by: (parts.holder != DESKTOP_HOLDER).then(|| parts.holder.clone()),
        problem: None,
    };
    let cards = open_cards(&parts.engine.cards(), crate::status::now_ms());
    let activity = parts.activity.lock().recover();
    Ok(desktop_view::snapshot(
        &host,
        loaded.as_ref().map_err(Clone::clone),
        &activity,
        cards,
        &home,
        &parts.engine.setup().decisions.scheduled.setting,
    ))
}
