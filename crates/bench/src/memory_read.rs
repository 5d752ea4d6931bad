//! What the instance's memory costs a session's start: `session/new` on a device whose token has
//! the `memory` scope (it reads `lembas://memory` and the tool list from the reference peer's
//! `/mcp` before answering) beside one whose token has not, the two asked in turn.

use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::json;

use crate::agent::remote;
use crate::reference::{self, PeerDevice};
use crate::report::{Row, ms, ms_added};
use crate::stats::percentile;

pub const ROWS: [&str; 1] = ["Memory read on session/new"];
const GOAL_ADDED: Duration = Duration::from_millis(50);
/// The memory the instance keeps: twenty entries of a sentence each.
const ENTRIES: usize = 20;

pub async fn run(sessions: usize) -> anyhow::Result<Vec<Row>> {
    let entries: Vec<String> = (0..ENTRIES)
        .map(|n| format!("Fact {n}: the person prefers short answers with examples."))
        .collect();
    let mut with = reference::linked(|c| c.memory = entries, remote).await?;
    let mut without = reference::linked(
        |c| {
            if let Some(instance) = c.instance.as_mut() {
                instance["scope"] = json!("models link");
            }
        },
        remote,
    )
    .await?;
    let (mut with_took, mut without_took) = (Vec::new(), Vec::new());
    for _ in 0..sessions {
        with_took.push(new_session(&mut with).await?);
        without_took.push(new_session(&mut without).await?);
    }
    let reads = with
        .peer
        .mcp_log()
        .iter()
        .filter(|c| c.method == "resources/read")
        .count();
    if reads < sessions {
        bail!("the device read the memory {reads} times for {sessions} sessions");
    }
    if !without.peer.mcp_log().is_empty() {
        bail!("a device without the memory scope asked /mcp");
    }
    let (figure, baseline) = (percentile(&with_took, 50.0), percentile(&without_took, 50.0));
    Ok(vec![
        Row::new(
            ROWS[0],
            ms_added(figure, baseline),
            format!("no memory scope {}", ms(baseline)),
        )
        .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
        .goal("<= 50 ms added", figure.saturating_sub(baseline) <= GOAL_ADDED)
        .note(format!(
            "session/new against the reference peer, median of {sessions}; {ENTRIES} entries in lembas://memory"
        )),
    ])
}

async fn new_session(device: &mut PeerDevice) -> anyhow::Result<Duration> {
    let work = device.home.work();
    let started = Instant::now();
    reference::new_session(&mut device.link, &work, None, lembas_peer::DEFAULT_MODEL).await?;
    Ok(started.elapsed())
}
