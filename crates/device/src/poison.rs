//! Locks whose holder panicked. The device's shared state is whole between statements (no lock is
//! held across a half-made change), so a panic elsewhere leaves it usable: the next holder takes it
//! as it is rather than panicking in turn.

use std::sync::{LockResult, PoisonError};

/// `mutex.lock().recover()`: the guard, poisoned or not (also for `read`, `write`, a condvar's
/// wait and `into_inner`).
pub trait Recover<T> {
    fn recover(self) -> T;
}

impl<T> Recover<T> for LockResult<T> {
    fn recover(self) -> T {
        self.unwrap_or_else(PoisonError::into_inner)
    }
}
