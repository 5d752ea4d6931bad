//! Keeping the computer awake while remote work runs (`remote.keep_awake`): while an agent turn
//! (scheduled runs are turns), a background job or a watch is working, the device holds the
//! system's own "do not sleep" (logind's `sleep:idle` inhibitor, an IOPM assertion,
//! `SetThreadExecutionState`) and lets it go as the work ends. One small module per platform holds
//! it; what to hold and why is decided here, on plain values.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::settings::{KeepAwakeSetting, Settings};
use crate::status::{Awake, Status};

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod elsewhere;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(windows)]
mod windows;

#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
use elsewhere as platform;
#[cfg(target_os = "linux")]
use linux as platform;
#[cfg(target_os = "macos")]
use macos as platform;
#[cfg(windows)]
use windows as platform;

/// How often the work is counted again when nothing said it changed: a job ends without an event
/// the runtime folds, so its end is seen within this.
const RECOUNT: Duration = Duration::from_secs(1);
/// How long a reading of the power source is trusted while work runs; also how long after a failed
/// hold the next try waits (a missing login manager does not come back every second).
const POWER_FRESH: Duration = Duration::from_secs(30);

/// The remote work running now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Work {
    /// Agent turns running or waiting (scheduled runs included).
    pub turns: usize,
    /// Background jobs running, over all sessions.
    pub jobs: usize,
    /// Watches running (`_lembas/monitor`: a schedule in monitor mode, or the instance's).
    pub watches: usize,
}

impl Work {
    pub fn is_none(self) -> bool {
        self.turns == 0 && self.jobs == 0 && self.watches == 0
    }

    /// "1 agent turn, 2 jobs running".
    fn says(self) -> String {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut parts = Vec::new();
        if self.turns > 0 {
            parts.push(plural(self.turns, "agent turn", "agent turns"));
        }
        if self.jobs > 0 {
            parts.push(plural(self.jobs, "job", "jobs"));
        }
        if self.watches > 0 {
            parts.push(plural(self.watches, "watch", "watches"));
        }
        format!("{} running", parts.join(", "))
    }
}

/// Where the computer's power comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Power {
    Mains,
    Battery,
    /// The system would not say: taken as mains (a desktop or a server has no battery to spare).
    Unknown,
}

/// What to do about sleep, and the sentence that says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Hold(String),
    LetSleep(String),
}

/// The pure half: `work` running (not none), under `setting`, on `power`.
pub fn decide(setting: KeepAwakeSetting, work: Work, power: Power) -> Decision {
    let work = work.says();
    match (setting, power) {
        (KeepAwakeSetting::Never, _) => Decision::LetSleep(format!("{work}; remote.keep_awake is never")),
        (KeepAwakeSetting::OnPower, Power::Battery) => {
            Decision::LetSleep(format!("{work}; on battery (remote.keep_awake: on_power)"))
        }
        (KeepAwakeSetting::OnPower, _) => Decision::Hold(format!("{work}, on mains power")),
        (KeepAwakeSetting::Always, _) => Decision::Hold(work),
    }
}

/// Follows the work (counted by `count`, asked again at each change of `changed` and, while work
/// runs, every [`RECOUNT`]) and the settings, holding the system's inhibitor while [`decide`] says so, and
/// writes what it does into the status. Ending the task (abort) lets the computer sleep again.
pub fn spawn<F>(
    mut settings: watch::Receiver<Arc<Settings>>,
    mut changed: watch::Receiver<()>,
    count: F,
    status: watch::Sender<Status>,
) -> JoinHandle<()>
where
    F: Fn() -> Work + Send + 'static,
{
    tokio::spawn(async move {
        let mut hold: Option<platform::Hold> = None;
        let mut power: Option<(Instant, Power)> = None;
        let mut failed: Option<(Instant, String)> = None;
        loop {
            let work = count();
            let setting = settings.borrow_and_update().remote.keep_awake;
            let awake = if work.is_none() {
                hold = None;
                power = None;
                None
            } else {
                let reading = match power {
                    Some((at, reading)) if at.elapsed() < POWER_FRESH => reading,
                    _ if setting != KeepAwakeSetting::OnPower => Power::Unknown,
                    _ => {
                        let reading = platform::power().await;
                        power = Some((Instant::now(), reading));
                        reading
                    }
                };
                Some(match decide(setting, work, reading) {
                    Decision::LetSleep(why) => {
                        hold = None;
                        Awake { held: false, why }
                    }
                    Decision::Hold(why) if hold.is_some() => Awake { held: true, why },
                    Decision::Hold(why) => match &failed {
                        Some((at, error)) if at.elapsed() < POWER_FRESH => Awake {
                            held: false,
                            why: format!("{why}, but {error}"),
                        },
                        _ => match platform::hold(&why).await {
                            Ok(held) => {
                                hold = Some(held);
                                failed = None;
                                Awake { held: true, why }
                            }
                            Err(error) => {
                                tracing::warn!("cannot keep the computer awake: {error}");
                                let awake = Awake {
                                    held: false,
                                    why: format!("{why}, but {error}"),
                                };
                                failed = Some((Instant::now(), error));
                                awake
                            }
                        },
                    },
                })
            };
            // Counted again every RECOUNT only while work runs (a job's end sends no event): an idle
            // device waits for the next event, with no timer of its own.
            let working = awake.is_some();
            status.send_if_modified(|s| {
                let differs = s.keep_awake != awake;
                if differs {
                    s.keep_awake = awake;
                }
                differs
            });
            tokio::select! {
                r = changed.changed() => if r.is_err() { return },
                r = settings.changed() => if r.is_err() { return },
                () = tokio::time::sleep(RECOUNT), if working => {}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A_JOB: Work = Work {
        turns: 0,
        jobs: 1,
        watches: 0,
    };

    #[test]
    fn each_setting_on_each_power_source() {
        use Decision::*;
        use KeepAwakeSetting::*;
        let held = |why: &str| Hold(why.to_string());
        let rows = [
            (OnPower, Power::Mains, held("1 job running, on mains power")),
            (OnPower, Power::Unknown, held("1 job running, on mains power")),
            (
                OnPower,
                Power::Battery,
                LetSleep("1 job running; on battery (remote.keep_awake: on_power)".into()),
            ),
            (Always, Power::Battery, held("1 job running")),
            (Always, Power::Mains, held("1 job running")),
            (
                Never,
                Power::Mains,
                LetSleep("1 job running; remote.keep_awake is never".into()),
            ),
        ];
        for (setting, power, expected) in rows {
            assert_eq!(
                decide(setting, A_JOB, power),
                expected,
                "{setting:?} on {power:?}"
            );
        }
    }

    #[test]
    fn the_work_is_said_in_words() {
        let work = Work {
            turns: 2,
            jobs: 1,
            watches: 3,
        };
        assert_eq!(work.says(), "2 agent turns, 1 job, 3 watches running");
        assert!(Work::default().is_none() && !work.is_none());
    }
}
