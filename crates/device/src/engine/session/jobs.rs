//! The session's background jobs (capability `jobs`): the job board is a part with its own
//! methods, reached under the session's lock for one operation at a time.

use super::Session;
use crate::engine::job_board::{Board, LimitStop};

impl Session {
    /// One operation on the session's job board. The closure runs under the session's lock: it
    /// touches the board alone and calls nothing of the session.
    pub fn jobs<R>(&self, operation: impl FnOnce(&mut Board) -> R) -> R {
        operation(&mut self.state().jobs)
    }

    /// Stops every running job (the session closed, or was deleted).
    pub fn stop_jobs(&self) {
        self.state().jobs.stop_all();
    }

    /// Stops the running jobs the limits no longer allow (`why`); how many were stopped.
    pub fn stop_jobs_for_limits(&self, why: LimitStop) -> usize {
        self.state().jobs.stop_for_limits(why)
    }

    /// The notes of jobs that ended, taken for the running turn's next step.
    pub fn take_job_notes(&self) -> Vec<(String, String)> {
        self.state().jobs.take_notes()
    }

    /// The notes of jobs that ended, taken for a machine turn: only with no turn running or
    /// waiting (one that is takes them in at its next step), and only when there are some.
    pub fn take_job_notes_at_rest(&self) -> Option<Vec<(String, String)>> {
        let mut state = self.state();
        if state.turns.busy() || !state.jobs.has_notes() {
            return None;
        }
        Some(state.jobs.take_notes())
    }
}
