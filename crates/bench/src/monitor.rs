//! Row 5 (issue 5): `_lembas/monitor` hashing a large output, against `head | sha256sum` in the
//! same run, and the device's peak memory during the watch. While the bash judge is a placeholder
//! that asks about everything, the device refuses the watch ("permission"); then the device's own
//! monitor runner is timed in a child process of the bench, and the rows say so.

use lembas_protocol::LinkMethod;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use serde_json::{Value, json};

use crate::child;
use crate::device::DeviceHome;
use crate::instance::LeanInstance;
use crate::procfs::peak_rss;
use crate::report::{Row, mb};
use crate::stats::mib_per_s;

pub const ROWS: [&str; 2] = ["Monitor hash throughput", "Monitor peak RSS"];
/// The hidden command line that runs one watch in a process of its own (see [`watch_in_process`]).
pub const IN_PROCESS_FLAG: &str = "--watch-in-process";
const WATCH_TIMEOUT_S: u64 = 300;
const GOAL_RATIO: f64 = 0.9;
const GOAL_PEAK_RSS: u64 = 30_000_000;

/// What the rows need from a watch.
struct Watched {
    bytes: u64,
    took: Duration,
    peak_rss: u64,
}

pub async fn run(instance: &mut LeanInstance, bytes: u64) -> anyhow::Result<Vec<Row>> {
    let home = DeviceHome::new(&instance.url(), |work| {
        format!(
            "remote:\n  enabled: true\n  scheduled: true\n  max_mode: auto\n  require_trust: false\n  roots:\n    - {}\n",
            work.display()
        )
    })?;
    let (device, mut link) = home.link(instance).await?;
    let work = home.work();
    let command = format!("head -c {bytes} /dev/zero");
    let params = json!({ "cwd": work, "command": command, "mode": "auto", "timeout_s": WATCH_TIMEOUT_S });
    let answer = link
        .request(
            LinkMethod::Monitor.name(),
            params,
            Duration::from_secs(WATCH_TIMEOUT_S + 10),
        )
        .await?;
    let (watched, how) = if let Some(result) = answer.get("result") {
        let peak = peak_rss(device.pid()).ok_or_else(|| anyhow!("the device went away"))?;
        (watched_from(result, peak)?, "over the link")
    } else if answer["error"]["data"]["reason"] == "permission" {
        (
            in_child_process(&work, &command).await?,
            "(in-process: judge pending)",
        )
    } else {
        bail!("the device refused the watch: {answer}");
    };
    drop(device);
    if watched.bytes != bytes {
        bail!("the watch saw {} of {bytes} bytes", watched.bytes);
    }
    let (baseline_took, baseline_peak) = tokio::task::spawn_blocking(move || sha256sum(bytes))
        .await
        .map_err(|e| anyhow!("{e}"))??;
    let (rate, baseline_rate) = (mib_per_s(bytes, watched.took), mib_per_s(bytes, baseline_took));
    let ratio = rate / baseline_rate.max(1e-9);
    let size = format!("{} MiB", bytes >> 20);
    Ok(vec![
        Row::new(
            ROWS[0],
            format!("{rate:.0} MiB/s"),
            format!("sha256sum {baseline_rate:.0} MiB/s"),
        )
        .ratio(ratio)
        .goal(format!(">= {GOAL_RATIO}x"), ratio >= GOAL_RATIO)
        .note(format!("{size} {how}")),
        Row::new(
            ROWS[1],
            mb(watched.peak_rss),
            format!("sha256sum {}", mb(baseline_peak)),
        )
        .ratio(watched.peak_rss as f64 / baseline_peak.max(1) as f64)
        .goal("< 30 MB", watched.peak_rss < GOAL_PEAK_RSS)
        .note(format!("{size} watch {how}")),
    ])
}

fn watched_from(result: &Value, peak_rss: u64) -> anyhow::Result<Watched> {
    if result["hash"].as_str().is_none() {
        bail!("the watch gave no hash: {result}");
    }
    let number = |key: &str| {
        result[key]
            .as_u64()
            .ok_or_else(|| anyhow!("the watch's {key} is missing: {result}"))
    };
    Ok(Watched {
        bytes: number("bytes")?,
        took: Duration::from_millis(number("duration_ms")?),
        peak_rss,
    })
}

/// Runs the watch with the device's monitor runner in a fresh bench process, so its peak memory
/// is the runner's and not the rest of the bench's.
async fn in_child_process(cwd: &Path, command: &str) -> anyhow::Result<Watched> {
    let mut child = child::command(IN_PROCESS_FLAG)?;
    child.arg(cwd).arg(command);
    let result: Value = child::answer(child, "the in-process watch").await?;
    let peak = result["peak_rss"]
        .as_u64()
        .ok_or_else(|| anyhow!("no peak_rss in {result}"))?;
    watched_from(&result, peak)
}

/// The child side of [`in_child_process`]: `<flag> <cwd> <command>`; prints the outcome as JSON
/// with this process's peak resident memory.
pub fn watch_in_process(args: &[String]) -> anyhow::Result<()> {
    let [cwd, command] = args else {
        bail!("usage: lembas-bench {IN_PROCESS_FLAG} <cwd> <command>");
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // In the sandbox the device gives every watch, the folder its root.
    let roots = [std::fs::canonicalize(cwd)?];
    let sandbox = lembas_device::sandbox::Sandbox::for_remote(
        &Default::default(),
        &roots,
        &[],
        lembas_device::policy::Mode::Auto,
        &lembas_device::paths::Dirs::from_env(),
    );
    let outcome = runtime.block_on(lembas_device::monitor::run_watch(
        Path::new(cwd),
        command,
        Duration::from_secs(WATCH_TIMEOUT_S),
        &sandbox,
        &lembas_device::decisions::Decisions::built_in().scheduled.monitor,
    ))?;
    let mut result = serde_json::to_value(&outcome.watched)?;
    result["peak_rss"] = json!(peak_rss(std::process::id()));
    println!("{result}");
    Ok(())
}

/// `head -c bytes /dev/zero | sha256sum`: the time until sha256sum is done, and its peak memory.
fn sha256sum(bytes: u64) -> anyhow::Result<(Duration, u64)> {
    let started = Instant::now();
    let mut head = Command::new("head")
        .args(["-c", &bytes.to_string(), "/dev/zero"])
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run head")?;
    let pipe = head
        .stdout
        .take()
        .ok_or_else(|| anyhow!("head has no output pipe"))?;
    let hasher = Command::new("sha256sum")
        .stdin(pipe)
        .stdout(Stdio::null())
        .spawn()
        .context("cannot run sha256sum")?;
    // wait4 rather than Child::wait, for sha256sum's peak memory.
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; the pid is our own unreaped child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(hasher.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let took = started.elapsed();
    let _ = head.wait();
    if waited < 0 || !std::process::ExitStatus::from_raw(status).success() {
        bail!("sha256sum failed");
    }
    // ru_maxrss is in KiB on Linux.
    Ok((took, usage.ru_maxrss as u64 * 1024))
}
