//! What an automatic compaction costs a turn: in a session on a model whose window is 100 tokens,
//! every step fills it, so each turn's step is compacted first (the summary asked of the model, the
//! conversation rebuilt); beside it the same one-step turn on a model with the default window, both
//! against the reference peer's instant model. The figure includes the summary's own request to the
//! model: that is what a compaction costs the person.

use std::time::{Duration, Instant};

use anyhow::bail;
use lembas_peer::{DEFAULT_MODEL, ModelReply, VISION_MODEL};
use serde_json::json;

use crate::agent::{REQUEST_WAIT, remote};
use crate::reference::{self, PeerDevice};
use crate::report::{Row, ms, ms_added};
use crate::stats::percentile;

pub const ROWS: [&str; 1] = ["Automatic compaction, per turn"];

pub async fn run(turns: usize) -> anyhow::Result<Vec<Row>> {
    // The default model's window is 100 tokens: every step fills it.
    let mut d = reference::linked(|c| c.models["data"][0]["context_length"] = json!(100), remote).await?;
    let work = d.home.work();
    let compacting = reference::new_session(&mut d.link, &work, Some("edit"), DEFAULT_MODEL).await?;
    let plain = reference::new_session(&mut d.link, &work, Some("edit"), VISION_MODEL).await?;
    // A first turn each, untimed: it fills the small window, so every later turn compacts first.
    turn(&mut d, &compacting, 0, false).await?;
    turn(&mut d, &plain, 0, false).await?;
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for n in 1..=turns {
        with.push(turn(&mut d, &compacting, n, true).await?);
        without.push(turn(&mut d, &plain, n, false).await?);
    }
    let compacted = d
        .link
        .received()
        .iter()
        .filter(|m| m["method"] == "_lembas/event" && m["params"]["event"]["type"] == "compacted")
        .count();
    if compacted < turns {
        bail!("{compacted} compactions for {turns} turns");
    }
    let (figure, baseline) = (percentile(&with, 50.0), percentile(&without, 50.0));
    Ok(vec![
        Row::new(
            ROWS[0],
            ms_added(figure, baseline),
            format!("no compaction {}", ms(baseline)),
        )
        .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
        .note(format!(
            "a one-step turn, median of {turns}; the summary's own request to the instant model included"
        )),
    ])
}

/// One turn of one step (and, when it compacts, the summary before it).
async fn turn(d: &mut PeerDevice, session: &str, n: usize, compacts: bool) -> anyhow::Result<Duration> {
    let model = d.peer.model();
    if compacts {
        model.push(ModelReply::text("We talked about the folder."));
    }
    model.push(ModelReply::text("Noted."));
    let started = Instant::now();
    let answer = d
        .link
        .request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": format!("note {n}") }] }),
            REQUEST_WAIT,
        )
        .await?;
    let took = started.elapsed();
    if answer["result"]["stopReason"] != "end_turn" {
        bail!("the turn did not end: {answer}");
    }
    Ok(took)
}
