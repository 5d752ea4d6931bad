//! Jobs obey the limits at every moment (docs/protocol.md "Background jobs"). A job's box is made
//! from the limits when it starts, so when they narrow (remote work turned off, Stop all remote
//! work, the session's folder out of the roots, the mode fallen to plan) the job is stopped, and
//! its end note says why. A note that waits because the session may not work is given as soon as
//! the limits let it work again.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Engine;
use super::job_board::LimitStop;
use super::session::Session;
use super::session_access::judge_again;
use crate::policy::Mode;

/// The limits changed: every session's running jobs judged against them, and a session that may
/// work is woken for the notes that waited.
pub(super) fn hold(engine: &Engine) {
    let settings = engine.settings();
    if settings.remote.enabled {
        engine.0.remote_stopped.store(false, Ordering::SeqCst);
    }
    let max = settings.remote.max_mode;
    let sessions: Vec<Arc<Session>> = engine.sessions().values().cloned().collect();
    for session in sessions {
        let why = if !settings.remote.enabled {
            Some(LimitStop::RemoteOff)
        } else if judge_again(engine, &session).is_err() {
            Some(LimitStop::FolderLeft)
        } else if mode_now(&session, max) == Mode::Plan {
            Some(LimitStop::ModeFellToPlan)
        } else {
            None
        };
        if let Some(why) = why {
            let stopped = session.stop_jobs_for_limits(why);
            if stopped > 0 {
                tracing::info!(session = %session.id, "{stopped} job(s) stopped: {}", why.says());
            }
        }
        // Plan mode still works: only its commands are read-only.
        if why.is_none_or(|why| why == LimitStop::ModeFellToPlan) {
            engine.wake(&session);
        }
    }
}

/// Stop all remote work: every job of every session stops, and no turn starts by itself until
/// remote work is on again.
pub(super) fn stop_all(engine: &Engine, sessions: &[Arc<Session>]) {
    engine.0.remote_stopped.store(true, Ordering::SeqCst);
    for session in sessions {
        session.stop_jobs_for_limits(LimitStop::StopAll);
    }
}

/// The mode a call of the session would run in now: its scheduled run's, else its own, lowered to
/// `remote.max_mode`.
fn mode_now(session: &Session, max: Mode) -> Mode {
    session.call_mode().lowered_to(max)
}
