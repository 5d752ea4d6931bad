//! The session's settings: its model, mode and effort, its title, what the client said it knows
//! for the prompt, and the command set the client was told last. Each method is one whole
//! operation under the session's lock.

use lembas_protocol::Effort;
use lembas_protocol::context::LembasAsks;
use lembas_protocol::update::SessionUpdate;

use super::{Session, SessionState};
use crate::policy::Mode;

/// The session's model, mode and effort as they were read together.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub model: String,
    pub mode: Mode,
    pub effort: Effort,
}

impl Settings {
    pub(super) fn of(state: &SessionState) -> Settings {
        Settings {
            model: state.model.clone(),
            mode: state.mode,
            effort: state.effort,
        }
    }
}

/// A choice of model and effort: what they were before and are now.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChange {
    pub before: (String, Effort),
    pub now: (String, Effort),
}

impl ModelChange {
    pub fn changed(&self) -> bool {
        self.before != self.now
    }
}

impl Session {
    /// The model, mode and effort now.
    pub fn settings(&self) -> Settings {
        Settings::of(&self.state())
    }

    /// The session's mode becomes `mode`; its jobs held to it at once (in plan, those started to
    /// write stop).
    pub fn set_mode(&self, mode: Mode) {
        let mut state = self.state();
        state.mode = mode;
        state.jobs.hold_to_mode(mode);
    }

    /// The model and effort, either or both, chosen.
    pub fn choose_model(&self, model: Option<String>, effort: Option<Effort>) -> ModelChange {
        let mut state = self.state();
        let before = (state.model.clone(), state.effort);
        if let Some(model) = model {
            state.model = model;
        }
        if let Some(effort) = effort {
            state.effort = effort;
        }
        let now = (state.model.clone(), state.effort);
        ModelChange { before, now }
    }

    /// A choice taken back: the model and effort it replaced come back, unless they are no
    /// longer what it made them (the person changed them meanwhile: their choice stays). Whether
    /// they came back.
    pub fn take_back_model(&self, choice: ModelChange) -> bool {
        let mut state = self.state();
        let back = (state.model.clone(), state.effort) == choice.now && choice.changed();
        if back {
            (state.model, state.effort) = choice.before;
        }
        back
    }

    pub fn title(&self) -> String {
        self.state().title.clone()
    }

    pub fn set_title(&self, title: String) {
        self.state().title = title;
    }

    /// What the client said it knows for the prompt, updated by a prompt's `_meta.lembas`.
    pub fn update_context(&self, lembas: Option<&LembasAsks>) {
        self.state().context.update(lembas);
    }

    /// Whether the client is to be told `update` (with `only_if_changed`, only when it differs
    /// from what it was told last); remembered as told when it is.
    pub fn commands_to_tell(&self, update: &SessionUpdate, only_if_changed: bool) -> bool {
        let mut state = self.state();
        if only_if_changed && state.commands_sent.as_ref() == Some(update) {
            return false;
        }
        state.commands_sent = Some(update.clone());
        true
    }
}
