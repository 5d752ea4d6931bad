//! Device runtimes hosted in this test process, side by side: each test's runtime lives in a home
//! of its own, handed its folders and a keychain entry of its own (`lembas_testkit::Home::setup`),
//! so these run in parallel in one binary. Needs a Secret Service (scripts/with-keyring).

mod control_client;
mod control_cookie;
mod desktop_answer;
mod desktop_runtime_waits;

use lembas_device::events::LinkState;
use lembas_device::runtime::Runtime;
use std::time::Duration;

pub const WAIT: Duration = Duration::from_secs(20);

/// Waits for the runtime's status to reach `wanted`.
pub async fn reaches(runtime: &Runtime, wanted: LinkState) {
    let mut status = runtime.status.clone();
    let reached = tokio::time::timeout(WAIT, status.wait_for(|s| s.link == wanted)).await;
    assert!(
        matches!(reached, Ok(Ok(_))),
        "{wanted:?} within the wait; now {:?}",
        runtime.status.borrow().link
    );
}
