//! What the soak proves, read from what it saw: each check a row of the table it prints.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;

use crate::device::{SHORT_BACKOFF_FIRST_MS, SHORT_BACKOFF_MAX_MS, Sample, Timings};
use crate::driver::Outcome;
use crate::proxy::LinkSpan;

/// RSS is flat when the last tenth's median is at most the first tenth's plus this share of it
/// and this many KiB.
const RSS_GROWTH_SHARE: f64 = 0.10;
const RSS_GROWTH_KB: u64 = 2048;
/// Open files are flat when the last tenth's median is at most the first tenth's plus this.
const FD_GROWTH: usize = 4;
/// Clock slack allowed between the proxy seeing a link end and the device starting its wait.
const CLOCK_SLACK: Duration = Duration::from_millis(5);

pub struct Row {
    pub check: &'static str,
    pub pass: bool,
    pub value: String,
    pub detail: String,
}

fn row(check: &'static str, pass: bool, value: impl ToString, detail: impl Into<String>) -> Row {
    Row {
        check,
        pass,
        value: value.to_string(),
        detail: detail.into(),
    }
}

pub fn evaluate(outcome: &Outcome, timings: Timings) -> Vec<Row> {
    let mut rows = Vec::new();
    let panicked = outcome.log.contains("panicked");
    let crashes = usize::from(outcome.early_exit.is_some()) + usize::from(panicked);
    rows.push(row(
        "crashes",
        crashes == 0,
        crashes,
        outcome.early_exit.clone().unwrap_or_else(|| {
            if panicked {
                "a panic in the device's log".into()
            } else {
                "the device ran until the close 4400".into()
            }
        }),
    ));
    let (twice, first_steps) = turns_run_twice(&outcome.ledger.model_requests);
    rows.push(row(
        "turns run twice",
        twice.is_empty(),
        twice.len(),
        format!(
            "{} turns prompted, {} resent after a drop, {} first steps at the model{}",
            outcome.ledger.turns.len(),
            outcome.ledger.resends,
            first_steps,
            list(&twice)
        ),
    ));
    let unended: Vec<String> = outcome
        .ledger
        .turns
        .keys()
        .filter(|t| !outcome.ledger.turns_ended.contains(*t))
        .filter(|t| {
            let session = &outcome.ledger.turns[*t];
            !outcome.ledger.deletes.contains_key(session)
        })
        .cloned()
        .collect();
    rows.push(row(
        "turns lost",
        unended.is_empty(),
        unended.len(),
        format!(
            "every turn of a session not deleted answered or done by status{}",
            list(&unended)
        ),
    ));
    let lost: Vec<String> = outcome
        .ledger
        .deletes
        .iter()
        .filter(|(_, d)| !d.confirmed)
        .map(|(s, d)| format!("{s}{}", if d.offline { " (offline)" } else { "" }))
        .collect();
    let offline = outcome.ledger.deletes.values().filter(|d| d.offline).count();
    rows.push(row(
        "deletes lost",
        lost.is_empty(),
        lost.len(),
        format!(
            "{} deletes ({} on the link, {} offline by lembas sessions delete){}{}",
            outcome.ledger.deletes.len(),
            outcome.ledger.deletes.len() - offline,
            offline,
            list(&lost),
            if outcome.ledger.cli_delete_failures.is_empty() {
                String::new()
            } else {
                format!(
                    "; the CLI refused: {}",
                    outcome.ledger.cli_delete_failures.join(", ")
                )
            }
        ),
    ));
    let leaked: Vec<String> = outcome
        .left_behind
        .iter()
        .map(|p| format!("{} {} (group {})", p.pid, p.comm, p.pgid))
        .collect();
    let shells = outcome.seen_processes.len();
    rows.push(row(
        "leaked processes",
        leaked.is_empty(),
        leaked.len(),
        format!("{shells} child processes seen over the run{}", list(&leaked)),
    ));
    rows.push(flatness(&outcome.samples));
    rows.push(fds_flat(&outcome.samples));
    rows.push(backoff(&outcome.spans, timings));
    let said = outcome.log.contains("4400") && outcome.log.contains("needs updating");
    let stopped = outcome.exit_after_4400.is_some_and(|s| !s.success());
    let pass = said && stopped && outcome.links_after_4400 == 0;
    rows.push(row(
        "close 4400",
        pass,
        if pass { "stopped" } else { "no" },
        format!(
            "exit {}, said the server needs updating: {said}, dials after it: {}",
            outcome
                .exit_after_4400
                .map(|s| s.to_string())
                .unwrap_or_else(|| "none (still running)".into()),
            outcome.links_after_4400
        ),
    ));
    if let Some(why) = &outcome.aborted {
        rows.push(row("run finished", false, "no", why.clone()));
    }
    rows
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        String::new()
    } else {
        let shown: Vec<&str> = items.iter().take(8).map(String::as_str).collect();
        format!(
            ": {}{}",
            shown.join(", "),
            if items.len() > 8 { ", ..." } else { "" }
        )
    }
}

/// The turn marks a text carries (`T` and six digits).
fn marks(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    for i in 0..bytes.len() {
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if bytes[i] == b'T'
            && starts_word
            && bytes.len() >= i + 7
            && bytes[i + 1..i + 7].iter().all(u8::is_ascii_digit)
            && bytes.get(i + 7).is_none_or(|b| !b.is_ascii_alphanumeric())
        {
            found.push(text[i..i + 7].to_string());
        }
    }
    found
}

/// Turns whose first step reached the model more than once, and how many first steps there
/// were. A first step is a request whose last user message carries the turn's mark with no
/// assistant or tool message after it. The model client's own retries (a connection lost before
/// the first byte, a 5xx) send the same body again, so identical bodies count once: a turn run
/// twice sends a different one (its first run is in the history).
pub fn turns_run_twice(requests: &[Value]) -> (Vec<String>, usize) {
    let mut bodies: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut first_steps = 0;
    for request in requests {
        let Some(messages) = request["messages"].as_array() else {
            continue;
        };
        let Some(last_user) = messages.iter().rposition(|m| m["role"] == "user") else {
            continue;
        };
        if messages[last_user + 1..]
            .iter()
            .any(|m| m["role"] == "assistant" || m["role"] == "tool")
        {
            continue;
        }
        let text = messages[last_user]["content"].to_string();
        for mark in marks(&text) {
            first_steps += 1;
            bodies.entry(mark).or_default().insert(request.to_string());
        }
    }
    let twice = bodies
        .into_iter()
        .filter(|(_, b)| b.len() > 1)
        .map(|(mark, b)| format!("{mark} ×{}", b.len()))
        .collect();
    (twice, first_steps)
}

fn tenths<T: Copy + Ord>(values: &[T]) -> Option<(T, T)> {
    if values.len() < 2 {
        return None;
    }
    let w = (values.len() / 10).max(1);
    let median = |s: &[T]| {
        let mut v = s.to_vec();
        v.sort();
        v[v.len() / 2]
    };
    Some((median(&values[..w]), median(&values[values.len() - w..])))
}

fn flatness(samples: &[Sample]) -> Row {
    let rss: Vec<u64> = samples.iter().map(|s| s.rss_kb).collect();
    let Some((first, last)) = tenths(&rss) else {
        return row("RSS flat", false, "?", "too few samples");
    };
    let allowed = first + (first as f64 * RSS_GROWTH_SHARE) as u64 + RSS_GROWTH_KB;
    let peak = rss.iter().max().copied().unwrap_or(0);
    row(
        "RSS flat",
        last <= allowed,
        format!("{:+} KiB", last as i64 - first as i64),
        format!(
            "median of first 10 % {first} KiB, of last 10 % {last} KiB (allowed ≤ first + 10 % + 2 MiB = {allowed}); peak {peak} KiB; {} samples",
            rss.len()
        ),
    )
}

fn fds_flat(samples: &[Sample]) -> Row {
    let fds: Vec<usize> = samples.iter().map(|s| s.fds).collect();
    let Some((first, last)) = tenths(&fds) else {
        return row("open fds flat", false, "?", "too few samples");
    };
    let peak = fds.iter().max().copied().unwrap_or(0);
    row(
        "open fds flat",
        last <= first + FD_GROWTH,
        format!("{:+}", last as i64 - first as i64),
        format!(
            "median of first 10 % {first}, of last 10 % {last} (allowed ≤ first + {FD_GROWTH}); peak {peak}"
        ),
    )
}

/// The decided link timings, read from the project's decisions file (not from the device's
/// code, which is what is being checked).
struct Decided {
    first_ms: u64,
    max_ms: u64,
    jitter: f64,
    stable_after_ms: u64,
}

fn decided() -> Decided {
    let text = include_str!("../../device/decisions.json");
    let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    let link = &v["link"];
    Decided {
        first_ms: link["backoff_ms"]["first"].as_u64().unwrap_or(500),
        max_ms: link["backoff_ms"]["max"].as_u64().unwrap_or(30_000),
        jitter: link["backoff_ms"]["jitter"].as_f64().unwrap_or(0.2),
        stable_after_ms: link["stable_after_ms"].as_u64().unwrap_or(60_000),
    }
}

/// The least wait the decisions allow before redial number `attempt` (0-based): doubling from
/// `first`, capped at `max`, less the jitter.
pub fn least_wait(first_ms: u64, max_ms: u64, jitter: f64, attempt: u32) -> Duration {
    let base = first_ms.saturating_mul(1u64 << attempt.min(20)).min(max_ms);
    Duration::from_millis(base).mul_f64((1.0 - jitter).max(0.0))
}

/// Each redial's delay (from the link's end at the proxy to the next link's first byte there)
/// against the least the decisions allow for its attempt. The attempt counts the link ends
/// since the last link that lived the stable period (less two seconds, so a doubtful one resets
/// the count: the bound only gets lower). Dials that failed while the peer was down add waits
/// the count does not see, which only make the real delay longer than the bound.
fn backoff(spans: &[LinkSpan], timings: Timings) -> Row {
    let d = decided();
    let (first_ms, max_ms) = match timings {
        Timings::Decided => (d.first_ms, d.max_ms),
        Timings::Short => (SHORT_BACKOFF_FIRST_MS, SHORT_BACKOFF_MAX_MS),
    };
    let stable = Duration::from_millis(d.stable_after_ms).saturating_sub(Duration::from_secs(2));
    let mut attempt: u32 = 0;
    let mut checked = 0;
    let mut too_fast = Vec::new();
    let mut tightest: Option<(f64, Duration, Duration, u32)> = None;
    for pair in spans.windows(2) {
        let (this, next) = (&pair[0], &pair[1]);
        let Some(ended) = this.ended else { continue };
        if ended - this.opened >= stable {
            attempt = 0;
        }
        let least = least_wait(first_ms, max_ms, d.jitter, attempt);
        let delay = next.opened.saturating_duration_since(ended);
        checked += 1;
        if delay + CLOCK_SLACK < least {
            too_fast.push(format!(
                "attempt {attempt}: {} ms < {} ms",
                delay.as_millis(),
                least.as_millis()
            ));
        }
        let ratio = delay.as_secs_f64() / least.as_secs_f64().max(1e-9);
        if tightest.is_none_or(|t| ratio < t.0) {
            tightest = Some((ratio, delay, least, attempt));
        }
        attempt = attempt.saturating_add(1);
    }
    let tight = tightest
        .map(|(r, delay, least, a)| {
            format!(
                "; closest: attempt {a} after {} ms (least {} ms, ×{r:.2})",
                delay.as_millis(),
                least.as_millis()
            )
        })
        .unwrap_or_default();
    row(
        "backoff never too fast",
        too_fast.is_empty() && checked > 0,
        too_fast.len(),
        format!(
            "{checked} redials checked against first {first_ms} ms doubling to {max_ms} ms, jitter ±{:.0} %{tight}{}",
            d.jitter * 100.0,
            list(&too_fast)
        ),
    )
}

/// The table, as printed.
pub fn table(rows: &[Row]) -> String {
    let wc = rows.iter().map(|r| r.check.len()).max().unwrap_or(5).max(5);
    let wv = rows
        .iter()
        .map(|r| r.value.chars().count())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut out = format!("{:<wc$}  {:<4}  {:<wv$}  detail\n", "check", "ok", "value");
    for r in rows {
        out.push_str(&format!(
            "{:<wc$}  {:<4}  {:<wv$}  {}\n",
            r.check,
            if r.pass { "ok" } else { "FAIL" },
            r.value,
            r.detail
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marks_are_whole_words() {
        assert_eq!(marks("say T000012 hello"), ["T000012"]);
        assert_eq!(marks("run touch T000003.txt"), ["T000003"]);
        assert!(marks("xT000012 T00001 T0000123").is_empty());
    }

    #[test]
    fn a_retried_body_counts_once_and_a_second_run_twice() {
        let first = json!({ "messages": [{ "role": "user", "content": "say T000001 hi" }] });
        let step2 = json!({ "messages": [
            { "role": "user", "content": "say T000001 hi" },
            { "role": "assistant", "content": "x" }, { "role": "tool", "content": "y" }] });
        let (twice, steps) = turns_run_twice(&[first.clone(), first.clone(), step2]);
        assert!(twice.is_empty());
        assert_eq!(steps, 2);
        let again = json!({ "messages": [
            { "role": "user", "content": "say T000001 hi" },
            { "role": "assistant", "content": "You said" },
            { "role": "user", "content": "say T000001 hi" }] });
        let (twice, _) = turns_run_twice(&[first, again]);
        assert_eq!(twice, ["T000001 ×2"]);
    }

    fn spans(gaps_ms: &[u64]) -> Vec<LinkSpan> {
        let mut at = tokio::time::Instant::now();
        let mut out = Vec::new();
        for gap in gaps_ms {
            let opened = at;
            at += Duration::from_millis(50);
            out.push(LinkSpan {
                opened,
                ended: Some(at),
                cut: true,
            });
            at += Duration::from_millis(*gap);
        }
        out.push(LinkSpan {
            opened: at,
            ended: None,
            cut: false,
        });
        out
    }

    #[test]
    fn a_redial_faster_than_its_attempt_allows_fails_the_backoff() {
        // Short timings: 100, 200, 400, 400 ms less 20 %.
        let ok = backoff(&spans(&[80, 160, 320, 320]), Timings::Short);
        assert!(ok.pass, "{}", ok.detail);
        let fast = backoff(&spans(&[80, 160, 200]), Timings::Short);
        assert!(!fast.pass);
        assert_eq!(fast.value, "1");
    }

    #[test]
    fn growth_beyond_the_tolerance_is_not_flat() {
        let samples = |rss: &[u64]| {
            rss.iter()
                .map(|&rss_kb| Sample { rss_kb, fds: 20 })
                .collect::<Vec<_>>()
        };
        assert!(flatness(&samples(&[30_000; 20])).pass);
        let mut growing = vec![30_000; 10];
        growing.extend([36_000; 10]);
        assert!(!flatness(&samples(&growing)).pass);
    }

    #[test]
    fn least_waits_follow_the_decisions() {
        let ms = |a| least_wait(500, 30_000, 0.2, a).as_millis();
        assert_eq!(ms(0), 400);
        assert_eq!(ms(1), 800);
        assert_eq!(ms(6), 24_000);
        assert_eq!(ms(30), 24_000);
    }
}
