//! Systems with no way to hold sleep off known here: the device says so in the status.

use super::Power;

pub struct Hold;

pub async fn hold(_why: &str) -> Result<Hold, String> {
    Err("this system has no way known to LLeMbas to keep it awake".into())
}

pub async fn power() -> Power {
    Power::Unknown
}
