//! Capability `scheduled`: the *Accept scheduled work* setting, judged at every scheduled request
//! as it is at that moment, and `_lembas/monitor`, the watch command of a schedule in monitor mode.

use std::path::{Path, PathBuf};

use crate::decisions;
use crate::monitor::{self, WatchOutcome};
use crate::paths::Dirs;
use crate::policy::Mode;
use crate::policy::bash_judge::{self, Decision, JudgeContext};
use crate::policy::roots::{self, FolderRules};
use crate::rpc::RpcError;
use crate::settings::Settings;
use lembas_protocol::Reason;
use lembas_protocol::context::ScheduledAsks;
use lembas_protocol::scheduled::{MonitorParams, RunOutcome, RunStatus, ScheduledCard};

/// The mode a scheduled request runs in, or its refusal: the setting first (off, or remote work
/// off), then plan (nobody can approve a plan), then lowered to `remote.max_mode`.
pub fn admit(
    settings: &Settings,
    requested: Option<Mode>,
    texts: &decisions::Texts,
) -> Result<Mode, RpcError> {
    if !settings.remote.scheduled || !settings.remote.enabled {
        return Err(RpcError::refused(texts.off.clone(), Reason::ScheduledOff));
    }
    let mode = requested.unwrap_or(Mode::Edit);
    if mode == Mode::Plan {
        return Err(RpcError::refused(texts.plan.clone(), Reason::Plan));
    }
    Ok(mode.lowered_to(settings.remote.max_mode))
}

/// A scheduled request's folder: accepted by the roots policy, or -32602 with `reason: "folder"`.
pub fn admit_folder(cwd: &Path, rules: &FolderRules) -> Result<PathBuf, RpcError> {
    roots::judge_folder(cwd, rules)
        .map_err(|v| RpcError::refused(v.reason.unwrap_or_default(), Reason::Folder))
}

/// A scheduled turn's `_meta.lembas.scheduled` (docs/protocol.md "Starting a scheduled turn").
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub schedule_id: String,
    pub run_id: String,
    pub title: String,
    /// The schedule's mode as asked (edit when absent); admitted and lowered by [`admit`].
    pub mode: Option<Mode>,
    /// How long an approval waits: the schedule's `approval_wait_s`, clamped.
    pub wait: std::time::Duration,
    /// The decided texts its outcome and its refused approvals say.
    pub texts: &'static decisions::Texts,
}

impl Run {
    /// The run `_meta.lembas.scheduled` asks for; `None` when the request is not scheduled.
    /// `least_wait_s` lowers the least wait (decided: 60 s) for tests, so one sees a scheduled
    /// approval time out in a second (the program's `Setup::least_approval_wait_s`).
    pub fn of(
        asks: Option<&ScheduledAsks>,
        least_wait_s: Option<u64>,
        numbers: &'static decisions::Scheduled,
    ) -> Option<Run> {
        let asks = asks?;
        let range = &numbers.approval_wait_seconds;
        let min = least_wait_s.unwrap_or(range.min).min(range.min);
        let asked = asks.approval_wait_s.unwrap_or(range.default);
        Some(Run {
            schedule_id: asks.schedule_id.clone(),
            run_id: asks.run_id.clone(),
            title: asks.title.clone(),
            mode: asks.mode,
            wait: std::time::Duration::from_secs(asked.clamp(min, range.max)),
            texts: &numbers.texts,
        })
    }

    /// `_meta.lembas.scheduled` on the run's approval cards.
    pub fn card_meta(&self) -> ScheduledCard {
        ScheduledCard {
            schedule_id: self.schedule_id.clone(),
            run_id: self.run_id.clone(),
            wait_s: self.wait.as_secs(),
        }
    }

    /// What the desktop shows of the run's approval cards (the schedule's title is not on the
    /// card the client gets: the client knows its own schedules).
    pub fn desktop_card(&self) -> crate::events::ScheduledAsk {
        crate::events::ScheduledAsk {
            title: self.title.clone(),
            wait_s: self.wait.as_secs(),
        }
    }

    /// The feedback the model reads when nobody approved in time (`texts.denied`).
    pub fn denied_text(&self) -> String {
        let minutes = (self.wait.as_secs() / 60).to_string();
        self.texts.denied.replace("{{minutes}}", &minutes)
    }

    /// The run's outcome in the prompt's answer: `status` from how the turn ended and its last reply.
    pub fn outcome(&self, stop_reason: Option<&str>, reply: &str, error: Option<&str>) -> RunOutcome {
        let no_reply = &self.texts.no_reply;
        let (status, error) = match (stop_reason, error) {
            (Some("cancelled"), _) => (RunStatus::Cancelled, None),
            (_, Some(e)) => (RunStatus::Failed, Some(e.to_string())),
            _ if reply.trim().is_empty() => (RunStatus::Failed, Some(no_reply.clone())),
            _ if silent(reply).is_some() => (RunStatus::Silent, None),
            _ => (RunStatus::Ok, None),
        };
        RunOutcome {
            run_id: self.run_id.clone(),
            status,
            text: reply.to_string(),
            error,
        }
    }
}

/// docs/protocol.md "Silent": the reply without its `[SILENT]` line when it is silent, else `None`.
pub fn silent(reply: &str) -> Option<String> {
    let is_sentinel = |line: &str| {
        let line = line.trim();
        let line = line.strip_suffix('.').unwrap_or(line);
        line.eq_ignore_ascii_case("[SILENT]")
    };
    let lines: Vec<&str> = reply.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty())?;
    let last = lines.iter().rposition(|l| !l.trim().is_empty())?;
    let drop = if is_sentinel(lines[first]) {
        first
    } else if is_sentinel(lines[last]) {
        last
    } else {
        return None;
    };
    let kept: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != drop)
        .map(|(_, l)| *l)
        .collect();
    Some(kept.join("\n").trim().to_string())
}

/// `_lembas/monitor`: admit, judge the command as bash in that folder, run it, answer the outcome.
pub async fn monitor(
    params: MonitorParams,
    settings: &Settings,
    dirs: &Dirs,
    numbers: &decisions::Scheduled,
) -> Result<WatchOutcome, RpcError> {
    let mode = admit(settings, params.mode, &numbers.texts)?;
    let rules = settings.folder_rules();
    let folder = admit_folder(Path::new(&params.cwd), &rules)?;
    let trusted = roots::is_trusted(&folder, &rules.trusted);
    let project = if trusted {
        crate::settings::project_rules(&folder, &rules.trusted)?
    } else {
        None
    };
    let home = dirs.resolved_home();
    let ctx = JudgeContext {
        mode,
        global: &settings.permissions.bash,
        project: project.as_ref().map(|p| &p.bash),
        folder: &folder,
        roots: &rules.roots,
        home: &home,
        protected: &dirs.protected_places(),
    };
    let texts = &numbers.texts;
    let judgement = bash_judge::judge(&params.command, &ctx);
    match judgement.decision {
        Decision::Allow => {}
        Decision::Ask => return Err(RpcError::refused(texts.monitor_asks.clone(), Reason::Permission)),
        Decision::Deny => {
            return Err(RpcError::refused(
                texts.monitor_denied.clone(),
                Reason::Permission,
            ));
        }
    }
    let timeout = monitor::clamp_timeout(params.timeout_s, &numbers.monitor.timeout_seconds);
    let sandbox = crate::sandbox::Sandbox::for_remote(&settings.remote, &rules.roots, &[], mode, dirs);
    monitor::run_watch(&folder, &params.command, timeout, &sandbox, &numbers.monitor)
        .await
        .map_err(|e| RpcError::internal(format!("The watch command could not be run: {e}.")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silent_follows_the_conformance_cases() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/conformance/silent.json"
        );
        let cases: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for case in cases["cases"].as_array().unwrap() {
            let reply = case["reply"].as_str().unwrap();
            let want = case["stripped"].as_str().map(str::to_string);
            assert_eq!(silent(reply), want, "{reply:?}");
            assert_eq!(
                silent(reply).is_some(),
                case["silent"].as_bool().unwrap(),
                "{reply:?}"
            );
        }
    }

    fn decisions() -> &'static decisions::Decisions {
        decisions::Decisions::built_in()
    }

    #[test]
    fn outcome_statuses() {
        let run = Run {
            schedule_id: "s".into(),
            run_id: "r".into(),
            title: "t".into(),
            mode: None,
            wait: std::time::Duration::from_secs(1800),
            texts: &decisions().scheduled.texts,
        };
        let status = |stop, reply, error| run.outcome(stop, reply, error).status;
        assert_eq!(status(Some("end_turn"), "All wrapped.", None), RunStatus::Ok);
        assert_eq!(status(Some("max_turn_requests"), "Partly.", None), RunStatus::Ok);
        assert_eq!(
            status(Some("end_turn"), "Nothing new.\n[SILENT]", None),
            RunStatus::Silent
        );
        assert_eq!(status(Some("end_turn"), "  ", None), RunStatus::Failed);
        assert_eq!(
            run.outcome(Some("end_turn"), "", None).error.as_deref(),
            Some(decisions().scheduled.texts.no_reply.as_str())
        );
        assert_eq!(status(None, "", Some("The model broke off.")), RunStatus::Failed);
        assert_eq!(status(Some("cancelled"), "half", None), RunStatus::Cancelled);
        // On the wire as before: every key, the error null when there is none.
        assert_eq!(
            serde_json::to_value(run.outcome(Some("end_turn"), "Done.", None)).unwrap(),
            serde_json::json!({ "run_id": "r", "status": "ok", "text": "Done.", "error": null })
        );
        assert_eq!(
            run.denied_text(),
            decisions().scheduled.texts.denied.replace("{{minutes}}", "30")
        );
    }

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
            let got = admit(&settings(*enabled, *scheduled, *max), *asked, texts);
            match (got, want) {
                (Ok(m), Ok(w)) => assert_eq!(m, *w),
                (Err(e), Err(reason)) => {
                    assert_eq!(e.code, crate::rpc::INVALID_PARAMS);
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
