//! `settings/change { setting, value }`: one setting the window changes, written to the config
//! with its comments kept (`settings::edit`); the runtime takes it from the file as it takes any
//! edit. Answers the window's new snapshot.

use lembas_protocol::Reason;
use std::path::PathBuf;

use serde::Deserialize;

use crate::desktop_view::Snapshot;
use crate::policy::Mode;
use crate::rpc::{self, RpcError};
use crate::settings::SettingsError;
use crate::settings::edit::{Change, apply};

use super::runtime_handles::RuntimeHandles;

/// One setting a face changes: a typed subset of [`Change`] (the login has its own method;
/// nothing here passes arbitrary changes through).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "setting", content = "value", rename_all = "snake_case")]
pub enum SettingChange {
    RemoteEnabled(bool),
    Scheduled(bool),
    Terminal(bool),
    RequireTrust(bool),
    MaxMode(Mode),
    AddRoot(PathBuf),
    RemoveRoot(PathBuf),
    Trust(PathBuf),
    Untrust(PathBuf),
}

impl From<SettingChange> for Change {
    fn from(change: SettingChange) -> Self {
        match change {
            SettingChange::RemoteEnabled(b) => Change::RemoteEnabled(b),
            SettingChange::Scheduled(b) => Change::Scheduled(b),
            SettingChange::Terminal(b) => Change::Terminal(b),
            SettingChange::RequireTrust(b) => Change::RequireTrust(b),
            SettingChange::MaxMode(m) => Change::MaxMode(m),
            SettingChange::AddRoot(p) => Change::AddRoot(p),
            SettingChange::RemoveRoot(p) => Change::RemoveRoot(p),
            SettingChange::Trust(p) => Change::Trust(p),
            SettingChange::Untrust(p) => Change::Untrust(p),
        }
    }
}

/// The code a face branches on for a settings error: a refusal of the change itself is bad
/// params (-32602); a config that cannot be read or written is the device's (-32603).
pub fn error(e: SettingsError) -> RpcError {
    let (code, reason) = match &e {
        SettingsError::Refused(_) => (rpc::INVALID_PARAMS, Reason::Refused),
        SettingsError::Invalid { .. } => (rpc::INTERNAL_ERROR, Reason::ConfigInvalid),
        SettingsError::Contended { .. } => (rpc::INTERNAL_ERROR, Reason::ConfigBusy),
        _ => (rpc::INTERNAL_ERROR, Reason::ConfigUnwritable),
    };
    RpcError::with_reason(code, reason, e.to_string())
}

pub(super) async fn change(parts: &RuntimeHandles, change: SettingChange) -> Result<Snapshot, RpcError> {
    let dirs = parts.engine.setup().dirs.clone();
    tokio::task::spawn_blocking(move || apply(&dirs, &[change.into()]))
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
        .map_err(error)?;
    super::window_state::snapshot(parts).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_face_sends_typed_changes() {
        let parse = |v| serde_json::from_value::<SettingChange>(v);
        assert_eq!(
            parse(json!({ "setting": "scheduled", "value": true })).unwrap(),
            SettingChange::Scheduled(true)
        );
        assert_eq!(
            parse(json!({ "setting": "max_mode", "value": "auto" })).unwrap(),
            SettingChange::MaxMode(Mode::Auto)
        );
        assert!(parse(json!({ "setting": "server", "value": "x" })).is_err());
        assert!(parse(json!({ "setting": "max_mode", "value": "root" })).is_err());
    }

    #[test]
    fn settings_errors_carry_the_face_s_code() {
        let refused = error(SettingsError::Refused("/nowhere does not exist.".into()));
        assert_eq!(refused.code, rpc::INVALID_PARAMS);
        assert_eq!(refused.data, Some(json!({ "reason": "refused" })));
        assert_eq!(refused.message, "/nowhere does not exist.");
    }
}
