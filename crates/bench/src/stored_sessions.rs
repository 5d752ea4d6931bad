//! Stored sessions, written with the device's own store into its state folder before it starts:
//! the idle memory of a linked device holding 100 of them (beside a `sleep` over the same window),
//! then `_lembas/session/history` of a 5,000-message session, which the engine must open from the
//! store, against the same request for a 50-message one (also opened from the store).

use lembas_protocol::{Effort, LinkMethod};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use lembas_device::store::{SessionHeader, Store, new_session_id};
use serde_json::{Value, json};

use crate::agent::{self, REQUEST_WAIT};
use crate::instance::{LeanInstance, RawLink};
use crate::model_server::MODEL;
use crate::report::{Row, mb, ms};
use crate::stats::{max, percentile};

pub const ROWS: [&str; 2] = ["Reopen 5,000-message session", "Idle RSS, 100 stored sessions"];
const BIG_MESSAGES: usize = 5_000;
const SMALL_MESSAGES: usize = 50;
const STORED: usize = 100;
const GOAL_REOPEN: Duration = Duration::from_millis(50);
const GOAL_RSS: u64 = 20_000_000;

/// `reopens` big sessions are timed, each once: a session opened stays in memory.
pub async fn run(
    instance: &mut LeanInstance,
    reopens: usize,
    idle_window: Duration,
) -> anyhow::Result<Vec<Row>> {
    let home = agent::home(&instance.url())?;
    let store = Store::at(
        home.path().join(".local/state/lembas"),
        &lembas_device::decisions::Decisions::built_in().turns,
    );
    let work = home.work();
    let small = (0..STORED)
        .map(|n| write_session(&store, &work, n, SMALL_MESSAGES))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let big = (0..reopens)
        .map(|n| write_session(&store, &work, STORED + n, BIG_MESSAGES))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (device, mut link) = home.link(instance).await?;

    let (idle, sleep) = crate::idle::beside_sleep(device.pid(), &mut link, idle_window).await?;
    let (mut big_took, mut small_took) = (Vec::new(), Vec::new());
    for (big, small) in big.iter().zip(&small) {
        big_took.push(history(&mut link, big, BIG_MESSAGES).await?);
        small_took.push(history(&mut link, small, SMALL_MESSAGES).await?);
    }

    let (figure, baseline) = (percentile(&big_took, 50.0), percentile(&small_took, 50.0));
    let seconds = idle_window.as_secs_f64();
    Ok(vec![
        Row::new(
            ROWS[0],
            ms(figure),
            format!("{SMALL_MESSAGES} messages {}", ms(baseline)),
        )
        .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
        .goal("<= 50 ms", figure <= GOAL_REOPEN)
        .note(format!(
            "_lembas/session/history from the store (a plan in it), median of {reopens}, worst {}",
            ms(max(&big_took))
        )),
        Row::new(
            ROWS[1],
            mb(idle.peak_rss),
            format!("sleep {}", mb(sleep.peak_rss)),
        )
        .ratio(idle.peak_rss as f64 / sleep.peak_rss.max(1) as f64)
        .goal("<= 20 MB", idle.peak_rss <= GOAL_RSS)
        .note(format!(
            "{STORED} sessions of {SMALL_MESSAGES} messages (+{reopens} of {BIG_MESSAGES}), peak over {seconds:.0} s"
        )),
    ])
}

/// Times `_lembas/session/history` and checks it gave back the whole conversation.
async fn history(link: &mut RawLink, session: &str, messages: usize) -> anyhow::Result<Duration> {
    let (took, answer) = link
        .timed_request(
            LinkMethod::SessionHistory.name(),
            json!({ "sessionId": session }),
            REQUEST_WAIT,
        )
        .await?;
    let turns = answer["result"]["turns"].as_array().map_or(0, Vec::len);
    if turns != history_turns(messages) {
        let shown: String = answer.to_string().chars().take(300).collect();
        bail!("the history of a {messages}-message session had {turns} turns: {shown}");
    }
    Ok(took)
}

/// How many history turns `messages` make: each exchange of four (see [`message`]) is a user turn
/// and an assistant turn, and an exchange cut short still has its user turn, then its tool call's.
fn history_turns(messages: usize) -> usize {
    messages / 4 * 2 + (messages % 4).min(2)
}

/// A session as the engine writes one: its header, then `messages` messages in exchanges of four
/// (the person's prompt, a tool call, its result, the answer); its id.
pub fn write_session(store: &Store, cwd: &Path, number: usize, messages: usize) -> anyhow::Result<String> {
    let id = new_session_id();
    let header = SessionHeader {
        cwd: cwd.display().to_string(),
        created_ms: Some(1_700_000_000_000u64 + number as u64),
        model: MODEL.to_string(),
        mode: "edit".to_string(),
        effort: Some(Effort::Default),
        title: format!("Stored session {number}"),
        ..SessionHeader::default()
    };
    let mut log = store
        .create(&id, &header)
        .with_context(|| format!("cannot store session {number}"))?;
    let mut records: Vec<Value> = (0..messages)
        .map(|n| json!({ "type": "message", "turnId": format!("turn_{:06}", n / 4), "message": message(n) }))
        .collect();
    // Reopened with its plan, as a working session is.
    records.push(json!({ "type": "plan", "plan": plan(number) }));
    log.append(&records)
        .with_context(|| format!("cannot write session {number}'s messages"))?;
    Ok(id)
}

/// A plan of three phases of four tasks, as `plan_write` leaves one.
fn plan(number: usize) -> Value {
    let phases: Vec<Value> = (1..=3)
        .map(|p| {
            let tasks: Vec<Value> = (1..=4)
                .map(|t| json!({ "id": format!("t{p}{t}"), "content": format!("Task {t} of phase {p}"), "status": "pending", "steps": [] }))
                .collect();
            json!({ "id": format!("p{p}"), "title": format!("Phase {p}"), "tasks": tasks })
        })
        .collect();
    json!({ "version": 1, "title": format!("Plan of session {number}"), "summary": "", "objectives": [],
            "findings": [], "phases": phases })
}

/// Message `n` of a stored conversation, sized like a real one's (a short prompt, a file read back,
/// a paragraph of answer).
fn message(n: usize) -> Value {
    let exchange = n / 4;
    let call = format!("call_{exchange}");
    match n % 4 {
        0 => json!({ "role": "user", "content": format!(
            "Look at src/module_{exchange}.rs and tell me why the totals are off by one when the list is empty."
        ) }),
        1 => json!({ "role": "assistant", "content": "", "tool_calls": [{
            "id": call, "type": "function",
            "function": { "name": "read", "arguments": format!("{{\"path\":\"src/module_{exchange}.rs\"}}") },
        }] }),
        2 => json!({ "role": "tool", "tool_call_id": call, "is_error": false, "content":
            format!("{:>6}\tfn total(items: &[Item]) -> usize {{\n", 1)
                + &"     2\t    items.iter().map(|item| item.size).sum::<usize>() + 1\n".repeat(12)
        }),
        _ => json!({ "role": "assistant", "content": format!(
            "The total adds one after summing (line 2 of src/module_{exchange}.rs), so an empty list gives 1 \
             instead of 0. Drop the `+ 1`; if a header row was meant to be counted, count it where the \
             rows are read instead, so the sum stays the sum of the sizes."
        ) }),
    }
}
