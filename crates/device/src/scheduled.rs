//! Capability `scheduled`: the *Accept scheduled work* setting, judged at every scheduled request
//! as it is at that moment, and `_lembas/monitor`, the watch command of a schedule in monitor mode.

use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::decisions::decisions;
use crate::monitor;
use crate::paths;
use crate::policy::Mode;
use crate::policy::bash_judge::{self, Decision, JudgeContext};
use crate::policy::roots::{self, FolderRules};
use crate::rpc::{self, RpcError};
use crate::settings::{Permissions, Settings};

/// The mode a scheduled request runs in, or its refusal: the setting first (off, or remote work
/// off), then plan (nobody can approve a plan), then lowered to `remote.max_mode`.
pub fn admit(settings: &Settings, requested: Option<Mode>) -> Result<Mode, RpcError> {
    let texts = &decisions().scheduled.texts;
    if !settings.remote.scheduled || !settings.remote.enabled {
        return Err(RpcError::refused(texts.off.clone(), "scheduled_off"));
    }
    let mode = requested.unwrap_or(Mode::Edit);
    if mode == Mode::Plan {
        return Err(RpcError::refused(texts.plan.clone(), "plan"));
    }
    Ok(mode.lowered_to(settings.remote.max_mode))
}

/// A scheduled request's folder: accepted by the roots policy, or -32602 with `reason: "folder"`.
pub fn admit_folder(cwd: &Path, rules: &FolderRules) -> Result<PathBuf, RpcError> {
    roots::judge_folder(cwd, rules).map_err(|v| RpcError::refused(v.reason.unwrap_or_default(), "folder"))
}

#[derive(Deserialize)]
struct MonitorParams {
    cwd: String,
    command: String,
    mode: Option<Mode>,
    timeout_s: Option<f64>,
    #[serde(rename = "schedule_id")]
    _schedule_id: Option<String>,
    #[serde(rename = "run_id")]
    _run_id: Option<String>,
}

/// The rules a trusted project adds: the nearest `.lembas/config.yaml` from `folder` up to the
/// trusted folder that holds it. A file that cannot be read refuses the watch rather than
/// silently dropping the project's deny rules.
fn project_rules(folder: &Path, trusted: &[PathBuf]) -> Result<Option<Permissions>, RpcError> {
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
                "permission",
            )
        })?;
        return Ok(Some(config.unwrap_or_default().permissions));
    }
    Ok(None)
}

/// A trusted project's own bash rules for a session's folder (none for an untrusted one). A rules
/// file that cannot be read gives rules that deny everything, rather than dropping its deny rules.
pub fn project_bash_rules(folder: &Path, settings: &Settings) -> Option<crate::settings::BashRules> {
    let rules = FolderRules::from_settings(settings);
    if !roots::is_trusted(folder, &rules.trusted) {
        return None;
    }
    match project_rules(folder, &rules.trusted) {
        Ok(p) => p.map(|p| p.bash),
        Err(e) => {
            tracing::warn!("{}", e.message);
            Some(crate::settings::BashRules {
                deny: vec!["*".into()],
                ..Default::default()
            })
        }
    }
}

/// `_lembas/monitor`: admit, judge the command as bash in that folder, run it, answer the outcome.
pub async fn monitor(params: Value, settings: &Settings) -> Result<Value, RpcError> {
    let params: MonitorParams = rpc::params("_lembas/monitor", params)?;
    let mode = admit(settings, params.mode)?;
    let rules = FolderRules::from_settings(settings);
    let folder = admit_folder(Path::new(&params.cwd), &rules)?;
    let trusted = roots::is_trusted(&folder, &rules.trusted);
    let project = if trusted {
        project_rules(&folder, &rules.trusted)?
    } else {
        None
    };
    let home = std::fs::canonicalize(paths::home_dir()).unwrap_or_else(|_| paths::home_dir());
    let ctx = JudgeContext {
        mode,
        global: &settings.permissions.bash,
        project: project.as_ref().map(|p| &p.bash),
        folder: &folder,
        roots: &rules.roots,
        home: &home,
    };
    let texts = &decisions().scheduled.texts;
    let judgement = bash_judge::judge(&params.command, &ctx);
    match judgement.decision {
        Decision::Allow => {}
        Decision::Ask => return Err(RpcError::refused(texts.monitor_asks.clone(), "permission")),
        Decision::Deny => return Err(RpcError::refused(texts.monitor_denied.clone(), "permission")),
    }
    let timeout = monitor::clamp_timeout(params.timeout_s);
    let outcome = monitor::run_watch(&folder, &params.command, timeout)
        .await
        .map_err(|e| RpcError::internal(format!("The watch command could not be run: {e}.")))?;
    serde_json::to_value(outcome).map_err(|e| RpcError::internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(enabled: bool, scheduled: bool, max: Mode) -> Settings {
        let mut s = Settings::default();
        s.remote.enabled = enabled;
        s.remote.scheduled = scheduled;
        s.remote.max_mode = max;
        s
    }

    #[test]
    fn admit_table() {
        let texts = &decisions().scheduled.texts;
        use Mode::*;
        // (remote on, scheduled on, max mode, asked mode, lowered mode or refusal reason)
        type Case = (bool, bool, Mode, Option<Mode>, Result<Mode, &'static str>);
        let cases: &[Case] = &[
            (true, true, Auto, None, Ok(Edit)),
            (true, true, Auto, Some(Auto), Ok(Auto)),
            (true, true, Edit, Some(Auto), Ok(Edit)),
            (true, true, Manual, Some(Edit), Ok(Manual)),
            (true, true, Plan, Some(Manual), Ok(Plan)),
            (true, true, Auto, Some(Plan), Err("plan")),
            (true, false, Auto, Some(Edit), Err("scheduled_off")),
            (false, true, Auto, Some(Edit), Err("scheduled_off")),
            (false, false, Auto, Some(Plan), Err("scheduled_off")),
        ];
        for (enabled, scheduled, max, asked, want) in cases {
            let got = admit(&settings(*enabled, *scheduled, *max), *asked);
            match (got, want) {
                (Ok(m), Ok(w)) => assert_eq!(m, *w),
                (Err(e), Err(reason)) => {
                    assert_eq!(e.code, rpc::INVALID_PARAMS);
                    assert_eq!(e.data, Some(serde_json::json!({ "reason": reason })));
                    let text = if *reason == "plan" {
                        &texts.plan
                    } else {
                        &texts.off
                    };
                    assert_eq!(&e.message, text);
                }
                (got, want) => panic!("{enabled} {scheduled} {max:?} {asked:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
