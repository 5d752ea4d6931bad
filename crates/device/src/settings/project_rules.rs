//! A trusted project's own rules: the `permissions:` of the nearest `.lembas/config.yaml` from a
//! folder up to the trusted folder that holds it. Read where commands are judged (a session's bash
//! calls, a scheduled watch), each time, so a change to the file counts at the next command.

use serde::Deserialize;
use std::path::{Path, PathBuf};

use super::{BashRules, Permissions, Settings};
use crate::policy::roots;
use crate::rpc::RpcError;
use lembas_protocol::Reason;

/// The rules a trusted project adds: the nearest `.lembas/config.yaml` from `folder` up to the
/// trusted folder that holds it. A file that cannot be read refuses the watch rather than
/// silently dropping the project's deny rules.
pub fn project_rules(folder: &Path, trusted: &[PathBuf]) -> Result<Option<Permissions>, RpcError> {
    let Some(top) = trusted
        .iter()
        .filter(|t| folder.starts_with(t))
        .max_by_key(|t| t.components().count())
    else {
        return Ok(None);
    };
    for dir in folder.ancestors().take_while(|d| d.starts_with(top)) {
        let file = dir.join(".lembas/config.yaml");
        if !file.exists() {
            continue;
        }
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct ProjectConfig {
            permissions: Permissions,
        }
        let text = std::fs::read_to_string(&file).map_err(|e| {
            RpcError::invalid_params(format!(
                "The project's rules in {} cannot be read: {e}.",
                file.display()
            ))
        })?;
        let config: Option<ProjectConfig> = serde_norway::from_str(&text).map_err(|e| {
            RpcError::refused(
                format!(
                    "The project's rules in {} are not valid ({e}); fix them first.",
                    file.display()
                ),
                Reason::Permission,
            )
        })?;
        return Ok(Some(config.unwrap_or_default().permissions));
    }
    Ok(None)
}

/// A trusted project's own bash rules for a session's folder (none for an untrusted one). A rules
/// file that cannot be read gives rules that deny everything, rather than dropping its deny rules.
pub fn project_bash_rules(folder: &Path, settings: &Settings) -> Option<BashRules> {
    let rules = settings.folder_rules();
    if !roots::is_trusted(folder, &rules.trusted) {
        return None;
    }
    match project_rules(folder, &rules.trusted) {
        Ok(p) => p.map(|p| p.bash),
        Err(e) => {
            tracing::warn!("{}", e.message);
            Some(BashRules {
                deny: vec!["*".into()],
                ..Default::default()
            })
        }
    }
}
