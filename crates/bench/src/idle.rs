//! Row 3: a linked device doing nothing: its resident memory and CPU over a window, beside a
//! `sleep` process sampled over the same window.

use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, anyhow};
use tokio::time::Instant;

use crate::instance::RawLink;
use crate::procfs::{anonymous, cpu_ticks, rss, ticks_per_second};
use crate::report::{Row, mb};

pub const ROWS: [&str; 2] = ["Idle linked RSS", "Idle linked CPU"];
const GOAL_RSS: u64 = 15_000_000;
/// "~0 %" read as at most half a percent of one core.
const GOAL_CPU_PERCENT: f64 = 0.5;
const SAMPLE_EVERY: Duration = Duration::from_millis(500);
/// Left alone before the window opens: linking's own work (config watch, status file) is not idling.
const SETTLE: Duration = Duration::from_secs(1);

/// One process's use over the window.
pub struct Usage {
    pub peak_rss: u64,
    /// Of it, the anonymous memory at the window's end (the rest is file pages: code, libraries).
    pub anonymous: u64,
    pub cpu_percent: f64,
}

pub async fn run(device_pid: u32, link: &mut RawLink, window: Duration) -> anyhow::Result<Vec<Row>> {
    let (device, baseline) = beside_sleep(device_pid, link, window).await?;
    let seconds = window.as_secs_f64();
    Ok(vec![
        Row::new(
            ROWS[0],
            mb(device.peak_rss),
            format!("sleep {}", mb(baseline.peak_rss)),
        )
        .ratio(device.peak_rss as f64 / baseline.peak_rss.max(1) as f64)
        .goal("<= 15 MB", device.peak_rss <= GOAL_RSS)
        .note(format!(
            "peak of samples over {seconds:.0} s; anonymous {} at the end, the rest file pages (the binary's code, libraries)",
            mb(device.anonymous)
        )),
        Row::new(
            ROWS[1],
            format!("{:.2} %", device.cpu_percent),
            format!("sleep {:.2} %", baseline.cpu_percent),
        )
        .goal(
            format!("~0 % (<= {GOAL_CPU_PERCENT} %)"),
            device.cpu_percent <= GOAL_CPU_PERCENT,
        )
        .note(format!(
            "of one core over {seconds:.0} s, after {SETTLE:?} to settle"
        )),
    ])
}

/// The device's use and a `sleep`'s, sampled over the same window (after settling).
pub async fn beside_sleep(
    device_pid: u32,
    link: &mut RawLink,
    window: Duration,
) -> anyhow::Result<(Usage, Usage)> {
    let mut sleeper = Command::new("sleep")
        .arg("3600")
        .stdin(Stdio::null())
        .spawn()
        .context("cannot start sleep")?;
    let measured = measure(device_pid, sleeper.id(), link, window).await;
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    measured
}

/// Samples both processes while reading the link, so the device's pings are answered as an
/// instance would.
async fn measure(
    device: u32,
    baseline: u32,
    link: &mut RawLink,
    window: Duration,
) -> anyhow::Result<(Usage, Usage)> {
    let settled = Instant::now() + SETTLE;
    while Instant::now() < settled {
        tokio::select! {
            frame = link.recv_text() => { frame?; }
            _ = tokio::time::sleep_until(settled) => {}
        }
    }
    let gone = |pid| anyhow!("process {pid} went away while idle");
    let ticks = |pid| cpu_ticks(pid).ok_or_else(|| gone(pid));
    let (device_start, baseline_start) = (ticks(device)?, ticks(baseline)?);
    let (mut device_rss, mut baseline_rss) = (0u64, 0u64);
    let started = Instant::now();
    let end = started + window;
    let mut next_sample = started;
    while Instant::now() < end {
        tokio::select! {
            frame = link.recv_text() => { frame?; }
            _ = tokio::time::sleep_until(next_sample) => {
                device_rss = device_rss.max(rss(device).ok_or_else(|| gone(device))?);
                baseline_rss = baseline_rss.max(rss(baseline).ok_or_else(|| gone(baseline))?);
                next_sample += SAMPLE_EVERY;
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64() * ticks_per_second();
    let percent = |now: u64, start: u64| (now.saturating_sub(start)) as f64 / seconds * 100.0;
    Ok((
        Usage {
            peak_rss: device_rss,
            anonymous: anonymous(device).unwrap_or_default(),
            cpu_percent: percent(ticks(device)?, device_start),
        },
        Usage {
            peak_rss: baseline_rss,
            anonymous: anonymous(baseline).unwrap_or_default(),
            cpu_percent: percent(ticks(baseline)?, baseline_start),
        },
    ))
}
