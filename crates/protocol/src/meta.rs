//! `{ "lembas": … }`, the `_meta` the device puts on its answers and pushes: one envelope that
//! every family of messages (sessions, prompts, cards, questions, commands) wraps its own in.

use serde::{Deserialize, Serialize};

/// `{ "lembas": … }`, the `_meta` of the device's answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LembasMeta<T> {
    pub lembas: T,
}
