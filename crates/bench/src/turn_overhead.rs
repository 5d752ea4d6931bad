//! Turn overhead: session/prompt sent to its `end_turn` answer read, the model answering one short
//! text chunk at once, against a no-op request's round trip on the same link and session
//! (`_lembas/session/status`), alternating, so the difference is what a turn itself costs.

use lembas_protocol::LinkMethod;
use std::time::Duration;

use anyhow::bail;
use serde_json::json;

use crate::agent::{self, REQUEST_WAIT};
use crate::instance::LeanInstance;
use crate::model_server::Reply;
use crate::report::{Row, ms, ms_added};
use crate::stats::percentile;

pub const ROWS: [&str; 1] = ["Turn, instant model"];
const GOAL_ADDED: Duration = Duration::from_millis(5);
/// Not counted: the first turns read the token, open the model's connection and set the title.
const WARMUP: usize = 5;

pub async fn run(instance: &mut LeanInstance, turns: usize) -> anyhow::Result<Vec<Row>> {
    let home = agent::home(&instance.url())?;
    let (_device, mut link) = home.link(instance).await?;
    let session = agent::new_session(&mut link, &home.work()).await?;
    instance.model().set(Reply::Instant);
    let (mut turn, mut noop) = (Vec::with_capacity(turns), Vec::with_capacity(turns));
    for round in 0..WARMUP + turns {
        let (took, answer) = link
            .timed_request(
                LinkMethod::SessionPrompt.name(),
                agent::prompt(&session, "hi"),
                REQUEST_WAIT,
            )
            .await?;
        agent::ended(&answer)?;
        let (status_took, status) = link
            .timed_request(
                LinkMethod::SessionStatus.name(),
                json!({ "sessionId": session }),
                REQUEST_WAIT,
            )
            .await?;
        if status["result"]["exists"] != true {
            bail!("_lembas/session/status did not find the session: {status}");
        }
        if round >= WARMUP {
            turn.push(took);
            noop.push(status_took);
        }
    }
    let (figure, baseline) = (percentile(&turn, 50.0), percentile(&noop, 50.0));
    let added = figure.saturating_sub(baseline);
    Ok(vec![
        Row::new(ROWS[0], ms(figure), format!("session/status {}", ms(baseline)))
            .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
            .goal("<= 5 ms added", added <= GOAL_ADDED)
            .note(format!(
                "{} added; median of {turns} turns in one session, p99 {}",
                ms_added(figure, baseline),
                ms(percentile(&turn, 99.0)),
            )),
    ])
}
