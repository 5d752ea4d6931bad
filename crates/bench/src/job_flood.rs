//! A background job that prints as fast as it can (`yes`, for the flood's length): the device keeps
//! only the last 2 MiB of a job's output, so its resident memory stays near where it was before the
//! job, and the client hears the job's `update` event at most four times a second.

use std::time::Duration;

use anyhow::bail;
use lembas_peer::ModelReply;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::agent::REQUEST_WAIT;
use crate::procfs::rss;
use crate::reference;
use crate::report::{Row, mb};

pub const ROWS: [&str; 2] = ["Job output flood: RSS", "Job output flood: events"];
const GOAL_ADDED_RSS: u64 = 5_000_000;
const GOAL_EVENTS_PER_SECOND: f64 = 4.0;
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// Sampled before the job, for the device's own level.
const BEFORE: Duration = Duration::from_secs(1);

pub async fn run(flood: Duration) -> anyhow::Result<Vec<Row>> {
    let remote = |work: &std::path::Path| {
        format!(
            "remote:\n  enabled: true\n  max_mode: auto\n  roots:\n    - {w}\ntrusted:\n  - {w}\n",
            w = work.display()
        )
    };
    let mut d = reference::linked(|_| {}, remote).await?;
    let pid = d.device.pid();
    let work = d.home.work();
    let session =
        reference::new_session(&mut d.link, &work, Some("auto"), lembas_peer::DEFAULT_MODEL).await?;
    let before = peak_over(pid, BEFORE).await;

    let seconds = flood.as_secs().max(1);
    d.peer.model().push(ModelReply::tool_call(
        "call_flood",
        "bash",
        json!({ "command": format!("timeout {seconds} yes lembas-job-flood"), "background": true,
                "description": "Print as fast as it can" }),
    ));
    d.peer.model().push(ModelReply::text("Started."));
    let answer = d
        .link
        .request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "flood" }] }),
            REQUEST_WAIT,
        )
        .await?;
    if answer["result"]["stopReason"] != "end_turn" {
        bail!("the turn that starts the job did not end: {answer}");
    }
    let started = Instant::now();
    let during = peak_over(pid, flood + Duration::from_secs(1)).await;
    let ran = started.elapsed().as_secs_f64();

    let job_events: Vec<Value> = d
        .link
        .received()
        .into_iter()
        .filter(|m| m["method"] == "_lembas/event" && m["params"]["event"]["type"] == "job")
        .map(|m| m["params"]["event"].clone())
        .collect();
    if !job_events.iter().any(|e| e["state"] == "start") {
        bail!("the job never started: {:?}", d.link.received().last());
    }
    let updates = job_events.iter().filter(|e| e["state"] == "update").count();
    let rate = updates as f64 / seconds as f64;
    let added = during.saturating_sub(before);
    Ok(vec![
        Row::new(
            ROWS[0],
            format!("+{}", mb(added)),
            format!("before the job {}", mb(before)),
        )
        .ratio(during as f64 / before.max(1) as f64)
        .goal("<= 5 MB above", added <= GOAL_ADDED_RSS)
        .note(format!(
            "peak while `yes` ran for {seconds} s (sampled {ran:.1} s)"
        )),
        Row::new(
            ROWS[1],
            format!("{rate:.2}/s"),
            format!("{updates} updates in {seconds} s"),
        )
        .goal("<= 4/s", rate <= GOAL_EVENTS_PER_SECOND)
        .note("the job's update events the client heard while it printed"),
    ])
}

/// The most resident memory `pid` had over `window`, sampled.
async fn peak_over(pid: u32, window: Duration) -> u64 {
    let end = Instant::now() + window;
    let mut peak = 0;
    while Instant::now() < end {
        peak = peak.max(rss(pid).unwrap_or(0));
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
    peak
}
