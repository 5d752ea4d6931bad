//! What a session's calls run under: the scheduled run the current turn is (with the mode it
//! holds), the session's own mode, both lowered to the limits, and the person's "Allow for this
//! chat" grants. Each method is one whole operation under the session's lock.

use super::Session;
use crate::engine::grants::{Grant, Grants};
use crate::policy::Mode;
use crate::scheduled::Run;

/// What one call runs under, read together: its mode, the grants in force, and the scheduled run
/// the turn is.
pub struct CallTerms {
    pub mode: Mode,
    pub grants: Grants,
    pub run: Option<Run>,
}

/// The session's mode lowered to the limits.
pub struct Lowered {
    /// The session's own mode, lowered.
    pub mode: Mode,
    /// It was above the limit: the session's grants were taken back with it.
    pub own_mode_fell: bool,
}

impl Session {
    /// The turn now running is `run` (a scheduled one, with its mode), or none.
    pub fn set_run(&self, run: Option<(Run, Mode)>) {
        self.state().run = run;
    }

    /// The turn now running is a scheduled run: nobody is there to ask or show.
    pub fn is_scheduled(&self) -> bool {
        self.state().run.is_some()
    }

    /// The mode a call would run in: the scheduled run's, else the session's own (not lowered).
    pub fn call_mode(&self) -> Mode {
        let state = self.state();
        state.run.as_ref().map_or(state.mode, |(_, mode)| *mode)
    }

    /// The scheduled run's mode and the session's own lowered to `max`. Where the session's own
    /// was above it, its grants are taken back: the person narrowed what remote work may do since
    /// they were given. The session's mode itself is left for the caller to switch (it is
    /// recorded and told).
    pub fn lower_to(&self, max: Mode) -> Lowered {
        let mut state = self.state();
        let own_mode_fell = state.mode > max;
        if own_mode_fell {
            state.grants.clear();
        }
        if let Some((_, run_mode)) = state.run.as_mut() {
            *run_mode = (*run_mode).lowered_to(max);
        }
        Lowered {
            mode: state.mode.lowered_to(max),
            own_mode_fell,
        }
    }

    /// What a call runs under now.
    pub fn call_terms(&self) -> CallTerms {
        let state = self.state();
        let run = state.run.clone();
        CallTerms {
            mode: run.as_ref().map_or(state.mode, |(_, mode)| *mode),
            grants: state.grants.clone(),
            run: run.map(|(run, _)| run),
        }
    }

    /// "Allow for this chat" given.
    pub fn give_grant(&self, grant: Grant) {
        self.state().grants.give(grant);
    }

    /// One grant taken back; the grants left, or `None` when it was not in force.
    pub fn revoke_grant(&self, grant: &Grant) -> Option<Vec<Grant>> {
        let mut state = self.state();
        state.grants.revoke(grant).then(|| state.grants.in_force())
    }

    /// The grants in force.
    pub fn grants_in_force(&self) -> Vec<Grant> {
        self.state().grants.in_force()
    }
}
