//! The box under every command (docs/protocol.md): the bash tool's runner (`monitor::run_command`)
//! running `true` in the box against the same runner without one, interleaved so load hits both
//! alike. Each run makes its box from the limits then, as the product does, so the figure includes
//! walking the root (a project of [`PROJECT_FILES`] files with a `.git` and a `.env`), the
//! namespaces, the mounts, Landlock's scopes and seccomp. The protected places follow `HOME`, which the bench does not change in its own
//! process: the runs happen in a child of the bench with a made-up home.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use lembas_device::monitor::run_command;
use lembas_device::policy::Mode;
use lembas_device::sandbox::{Kernel, Sandbox};
use lembas_device::settings::Remote;
use serde_json::{Value, json};

use crate::child;
use crate::report::{Row, ms, ms_added};
use crate::stats::percentile;

pub const ROWS: [&str; 1] = ["The box, the bash tool's `true`"];
/// The hidden command line that runs the timed commands in a child (see [`measure_in_process`]).
pub const IN_PROCESS_FLAG: &str = "--sandbox-in-process";
/// What the box may add to a command's start (issue: 5 ms at p50, 10 ms at p99).
const GOAL_P50: Duration = Duration::from_millis(5);
const GOAL_P99: Duration = Duration::from_millis(10);
/// The root's project: files in folders of 20.
const PROJECT_FILES: usize = 2000;
const HOME_ENTRIES: usize = 200;
const SETTLE: Duration = Duration::from_secs(3);

pub async fn run(rounds: usize) -> anyhow::Result<Vec<Row>> {
    // Beside the bench, not in a temp folder: the sandbox lets every command write the temp
    // folders, and a home inside one would change what it lists.
    let exe = std::env::current_exe()?;
    let beside = exe.parent().ok_or_else(|| anyhow!("the bench has no folder"))?;
    let dir = tempfile::Builder::new()
        .prefix("bench-sandbox-")
        .tempdir_in(beside)
        .context("cannot make a home for the sandbox benchmark")?;
    let home = dir.path().join("home");
    for n in 0..HOME_ENTRIES - 3 {
        std::fs::create_dir_all(home.join(format!("entry-{n:03}")))?;
    }
    std::fs::create_dir_all(home.join(".ssh"))?;
    std::fs::create_dir_all(home.join(".config/lembas"))?;
    let work = home.join("work");
    for n in 0..PROJECT_FILES {
        let folder = work.join(format!("src/m{:03}", n / 20));
        std::fs::create_dir_all(&folder)?;
        std::fs::write(folder.join(format!("f{n}.rs")), "fn f() {}\n")?;
    }
    for place in [".git/hooks", ".git/info"] {
        std::fs::create_dir_all(work.join(place))?;
    }
    std::fs::write(work.join(".git/config"), "[core]\n")?;
    std::fs::write(work.join(".env"), "SECRET=x\n")?;
    // A home as it is between commands, not changed in the last seconds: the device keeps a ruleset
    // while the folders it listed are unchanged, but never one listed from a folder changed in the
    // last 2 s (its times tick too coarsely to show the next change).
    tokio::time::sleep(SETTLE).await;
    let mut child = child::command(IN_PROCESS_FLAG)?;
    child
        .arg(&work)
        .arg(rounds.to_string())
        .env("HOME", &home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME");
    let result: Value = child::answer(child, "the sandbox benchmark's child").await?;
    let samples = |key: &str| -> anyhow::Result<Vec<Duration>> {
        let list = result[key]
            .as_array()
            .ok_or_else(|| anyhow!("no {key} in the answer"))?;
        Ok(list
            .iter()
            .filter_map(Value::as_u64)
            .map(Duration::from_nanos)
            .collect())
    };
    let (boxed, plain) = (samples("sandboxed_ns")?, samples("plain_ns")?);
    let (p99, baseline99) = (percentile(&boxed, 99.0), percentile(&plain, 99.0));
    let (p50, baseline50) = (percentile(&boxed, 50.0), percentile(&plain, 50.0));
    let (added50, added99) = (p50.saturating_sub(baseline50), p99.saturating_sub(baseline99));
    Ok(vec![
        Row::new(ROWS[0], ms_added(p50, baseline50), format!("without it p50 {}", ms(baseline50)))
            .ratio(p50.as_secs_f64() / baseline50.as_secs_f64().max(1e-9))
            .goal(
                format!("<= +{} at p50, +{} at p99", ms(GOAL_P50), ms(GOAL_P99)),
                added50 <= GOAL_P50 && added99 <= GOAL_P99,
            )
            .note(format!(
                "{}; p99 {} vs {}; p50 {} vs {}; {}, {} rules; a home of {HOME_ENTRIES} entries, a root of {PROJECT_FILES} files; {rounds} runs each, interleaved",
                result["walls"].as_str().unwrap_or("?"),
                ms(p99),
                ms(baseline99),
                ms(p50),
                ms(baseline50),
                result["abi"].as_str().unwrap_or("no Landlock"),
                result["rules"],
            )),
    ])
}

/// The child side of [`run`]: `<flag> <work> <rounds>`; prints each run's time, sandboxed and
/// not, and the Landlock ruleset's ABI and rule count, as JSON.
pub fn measure_in_process(args: &[String]) -> anyhow::Result<()> {
    let [work, rounds] = args else {
        bail!("usage: lembas-bench {IN_PROCESS_FLAG} <work> <rounds>");
    };
    let work = std::fs::canonicalize(work)?;
    let rounds: usize = rounds.parse().context("rounds")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let remote = Remote::default();
    let roots = [work.clone()];
    let dirs = lembas_device::paths::Dirs::from_env();
    let sandboxed = || Sandbox::for_remote(&remote, &roots, &[], Mode::Edit, &dirs);
    let plain = || {
        Sandbox::new(
            &remote,
            &roots,
            &[],
            Mode::Edit,
            Kernel::Lacks("the baseline".into()),
            &dirs,
        )
    };
    let walls = lembas_device::sandbox::support();
    let prepared = sandboxed().prepare()?;
    if !prepared.boxed() {
        bail!("the box cannot be made here ({walls}): nothing to measure");
    }
    let (abi, rules) = prepared.landlock_rules().map_or((None, 0), |(abi, rules)| {
        (Some(format!("Landlock ABI {abi}")), rules)
    });
    let (mut boxed, mut open) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for n in 0..rounds {
        // Alternate which goes first, so neither always follows the other.
        if n % 2 == 0 {
            boxed.push(timed(&runtime, &work, &sandboxed)?);
            open.push(timed(&runtime, &work, &plain)?);
        } else {
            open.push(timed(&runtime, &work, &plain)?);
            boxed.push(timed(&runtime, &work, &sandboxed)?);
        }
    }
    let nanos = |list: &[Duration]| list.iter().map(|d| d.as_nanos() as u64).collect::<Vec<_>>();
    println!(
        "{}",
        json!({ "sandboxed_ns": nanos(&boxed), "plain_ns": nanos(&open), "abi": abi, "rules": rules, "walls": walls })
    );
    Ok(())
}

/// One `true` through the bash tool's runner, its sandbox made inside the timing.
fn timed(
    runtime: &tokio::runtime::Runtime,
    work: &Path,
    sandbox: &dyn Fn() -> Sandbox,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let outcome = runtime.block_on(run_command(
        work,
        "true",
        Duration::from_secs(30),
        4096,
        &sandbox(),
        &lembas_device::decisions::Decisions::built_in().scheduled.monitor,
    ))?;
    let took = started.elapsed();
    if outcome.watched.exit != Some(0) {
        bail!(
            "`true` failed in the sandbox benchmark: {}",
            outcome.watched.excerpt
        );
    }
    Ok(took)
}
