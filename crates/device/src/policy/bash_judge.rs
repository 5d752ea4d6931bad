//! Placeholder until the judge branch lands: everything asks.
use crate::policy::Mode;
use crate::settings::BashRules;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}
pub struct Judgement {
    pub decision: Decision,
    pub reason: String,
}
pub struct JudgeContext<'a> {
    pub mode: Mode,
    pub global: &'a BashRules,
    pub project: Option<&'a BashRules>,
    pub folder: &'a Path,
    pub roots: &'a [PathBuf],
    pub home: &'a Path,
}
pub fn judge(_line: &str, _ctx: &JudgeContext) -> Judgement {
    Judgement {
        decision: Decision::Ask,
        reason: String::new(),
    }
}
