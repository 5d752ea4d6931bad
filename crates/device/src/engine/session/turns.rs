//! A session's turns as they come: accepted in order, one running at a time, the last one done
//! remembered, and the steer messages waiting for the running turn's next step. A part of the
//! session's state changed only through these methods.

use lembas_protocol::prompt::PromptAnswer;
use lembas_protocol::session::Steered;
use std::collections::VecDeque;
use tokio::sync::watch;

use super::Session;
use crate::rpc::RpcError;

/// Where a turn is: waiting its turn, running, or done with its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnPhase {
    Queued,
    Running,
    Done(Box<Result<PromptAnswer, RpcError>>),
}

/// A steer message: its `messageId` when the client gave one, and its text.
pub type Steer = (Option<String>, String);

pub struct TurnQueue {
    /// Turn ids in the order they were accepted, with their phase (the newest `kept`).
    turns: VecDeque<(String, watch::Sender<TurnPhase>)>,
    /// How many turn ids are remembered (the decisions' `turns.kept_per_session`).
    kept: usize,
    running: Option<String>,
    last_done: Option<String>,
    /// `_lembas/steer` messages for the running turn, taken in at its next step.
    steers: Vec<Steer>,
    /// A command runs that gives the model no step to take a steer in (`/compact`, `/undo`,
    /// `/plan` with no task): a steer waits for the next turn.
    acting: bool,
}

impl TurnQueue {
    /// A queue remembering the newest `kept` turn ids.
    pub fn keeping(kept: usize) -> Self {
        Self {
            turns: VecDeque::new(),
            kept,
            running: None,
            last_done: None,
            steers: Vec::new(),
            acting: false,
        }
    }

    /// A turn runs or waits.
    pub fn busy(&self) -> bool {
        self.running.is_some() || self.queued().next().is_some()
    }

    /// The turns accepted and waiting for the gate, in order.
    pub fn queued(&self) -> impl Iterator<Item = &str> {
        self.turns
            .iter()
            .filter(|(_, tx)| *tx.borrow() == TurnPhase::Queued)
            .map(|(id, _)| id.as_str())
    }

    pub fn running(&self) -> Option<&str> {
        self.running.as_deref()
    }

    pub fn last_done(&self) -> Option<&str> {
        self.last_done.as_deref()
    }

    /// The phase of a turn id this session knows.
    pub fn phase(&self, turn_id: &str) -> Option<watch::Receiver<TurnPhase>> {
        self.turns
            .iter()
            .find(|(id, _)| id == turn_id)
            .map(|(_, tx)| tx.subscribe())
    }

    /// Accepts a new turn id as queued; the oldest beyond the kept number are forgotten.
    pub fn accept(&mut self, turn_id: &str) -> watch::Receiver<TurnPhase> {
        let (tx, rx) = watch::channel(TurnPhase::Queued);
        self.remember(turn_id, tx);
        rx
    }

    /// A turn done before this process opened the session (its answer read from the store).
    pub fn done_before(&mut self, turn_id: &str, answer: Result<PromptAnswer, RpcError>) {
        let (tx, _) = watch::channel(TurnPhase::Done(Box::new(answer)));
        self.remember(turn_id, tx);
        self.last_done = Some(turn_id.to_string());
    }

    fn remember(&mut self, turn_id: &str, tx: watch::Sender<TurnPhase>) {
        self.turns.push_back((turn_id.to_string(), tx));
        while self.turns.len() > self.kept {
            self.turns.pop_front();
        }
    }

    pub fn set_phase(&mut self, turn_id: &str, phase: TurnPhase) {
        match &phase {
            TurnPhase::Running => self.running = Some(turn_id.to_string()),
            TurnPhase::Done(_) => {
                self.running = None;
                self.last_done = Some(turn_id.to_string());
            }
            TurnPhase::Queued => {}
        }
        if let Some((_, tx)) = self.turns.iter().find(|(id, _)| id == turn_id) {
            tx.send_replace(phase);
        }
    }

    /// Keeps a steer for the running turn: `_lembas/steer`'s answer, or `None` when nothing runs.
    pub fn steer(&mut self, message_id: Option<String>, text: String) -> Option<Steered> {
        self.running.as_ref()?;
        self.steers.push((message_id, text));
        Some(Steered {
            queued: self.steers.len(),
            // Nothing of an action's prompt reaches the model: the next turn takes it in.
            next_turn: self.acting,
        })
    }

    /// The steers that came since they were last taken.
    pub fn take_steers(&mut self) -> Vec<Steer> {
        std::mem::take(&mut self.steers)
    }

    /// Whether a command runs that gives the model no step (see [`TurnQueue::steer`]).
    pub fn set_acting(&mut self, acting: bool) {
        self.acting = acting;
    }
}

/// The session's turns, each method one whole operation under the session's lock.
impl Session {
    /// The phase of a turn id this session knows.
    pub fn turn(&self, turn_id: &str) -> Option<watch::Receiver<TurnPhase>> {
        self.state().turns.phase(turn_id)
    }

    /// Accepts a new turn id as queued; the oldest beyond the kept number are forgotten.
    pub fn accept_turn(&self, turn_id: &str) -> watch::Receiver<TurnPhase> {
        self.state().turns.accept(turn_id)
    }

    pub fn set_phase(&self, turn_id: &str, phase: TurnPhase) {
        self.state().turns.set_phase(turn_id, phase);
    }

    /// A turn runs or waits.
    pub fn busy(&self) -> bool {
        self.state().busy()
    }

    /// A steer message for the running turn (`None` when nothing runs that could take it).
    pub fn steer(&self, message_id: Option<String>, text: String) -> Option<Steered> {
        self.state().turns.steer(message_id, text)
    }

    /// The steers that came since the running turn's last step, taken.
    pub fn take_steers(&self) -> Vec<Steer> {
        self.state().turns.take_steers()
    }

    /// A command that gives the model no step runs (`true`) or ended (`false`).
    pub fn set_acting(&self, acting: bool) {
        self.state().turns.set_acting(acting);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_goes_from_queued_to_running_to_done() {
        let mut queue = TurnQueue::keeping(crate::decisions::Decisions::built_in().turns.kept_per_session);
        let phase = queue.accept("t1");
        queue.accept("t2");
        assert!(queue.busy());
        assert_eq!(queue.queued().collect::<Vec<_>>(), ["t1", "t2"]);
        assert_eq!(queue.steer(None, "early".into()), None, "nothing runs yet");
        queue.set_phase("t1", TurnPhase::Running);
        assert_eq!(queue.running(), Some("t1"));
        assert_eq!(*phase.borrow(), TurnPhase::Running);
        assert_eq!(
            queue.steer(Some("m1".into()), "also this".into()),
            Some(Steered {
                queued: 1,
                next_turn: false
            })
        );
        queue.set_acting(true);
        assert_eq!(
            queue.steer(None, "and this".into()).map(|s| s.next_turn),
            Some(true)
        );
        assert_eq!(queue.take_steers().len(), 2);
        assert!(queue.take_steers().is_empty());
        queue.set_phase(
            "t1",
            TurnPhase::Done(Box::new(Err(RpcError::invalid_params("x")))),
        );
        assert_eq!((queue.running(), queue.last_done()), (None, Some("t1")));
        assert!(queue.busy(), "t2 still waits");
        assert!(queue.phase("t3").is_none());
    }

    #[test]
    fn only_the_kept_number_of_turns_is_remembered() {
        let kept = crate::decisions::Decisions::built_in().turns.kept_per_session;
        let mut queue = TurnQueue::keeping(kept);
        for n in 0..kept + 5 {
            queue.done_before(&format!("t{n}"), Err(RpcError::invalid_params("x")));
        }
        assert!(queue.phase("t0").is_none());
        assert!(queue.phase(&format!("t{}", kept + 4)).is_some());
        assert!(!queue.busy());
    }
}
