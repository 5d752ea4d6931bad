//! The bash judge on everyday lines, as the device calls it (in a child process with a memory and
//! a time limit) against the same judge in the bench's own process: what the containment costs a
//! bash call. Interleaved, so load hits both alike. Then the lines the fuzz target found to blow
//! brush-parser up, contained: the slowest of them against an everyday line (the judge's tests
//! check only that each is read, not cut by the limits: timing belongs here). Measured in a child
//! of the bench started for it: the contained judge forks the process that calls it, and a fork
//! costs with the caller's memory, which in the bench itself has grown with every benchmark before
//! (a device's is about 11 MB).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::bail;
use lembas_device::policy::Mode;
use lembas_device::policy::bash_judge::{self, JudgeContext, Judgement};
use lembas_device::policy::protected::Protected;
use lembas_device::settings::BashRules;

use crate::child;
use crate::report::{Row, ms};
use crate::stats::percentile;

pub const ROWS: [&str; 2] = ["Bash judge, one line", "Bash judge, lines the fuzzer found"];
/// The bench run as the judge benchmark's child: `lembas-bench --judge-in-process <rounds>`.
pub const IN_PROCESS_FLAG: &str = "--judge-in-process";
const LINES: [&str; 6] = [
    "ls -la src",
    "cargo test -p lembas-device 2>&1 | tail -20",
    "git status --short && git diff --stat",
    "grep -rn 'fn main' src | head",
    "cd build && make -j4 && ./run --check",
    "cat <<'EOF' > notes.md\nhello\nEOF",
];
const GOAL: Duration = Duration::from_millis(5);
/// The slowest hostile line, contained: well under the child's one second of CPU time.
const FUZZ_GOAL: Duration = Duration::from_millis(300);

/// What the child measured, in nanoseconds: each line contained and in process, and the slowest
/// of the lines the fuzzer found, contained.
#[derive(serde::Serialize, serde::Deserialize)]
struct Samples {
    contained_ns: Vec<u64>,
    here_ns: Vec<u64>,
    slowest_ns: u64,
    slowest_line: String,
}

pub async fn run(rounds: usize) -> anyhow::Result<Vec<Row>> {
    let mut command = child::command(IN_PROCESS_FLAG)?;
    command.arg(rounds.to_string());
    let samples: Samples = child::answer(command, "the judge benchmark's child").await?;
    Ok(rows(&samples))
}

/// The child's side: measures and prints [`Samples`] as JSON.
pub fn measure_in_process(args: &[String]) -> anyhow::Result<()> {
    let [rounds] = args else {
        bail!("usage: lembas-bench {IN_PROCESS_FLAG} <rounds>");
    };
    let samples = measure(rounds.parse()?)?;
    println!("{}", serde_json::to_string(&samples)?);
    Ok(())
}

fn measure(rounds: usize) -> anyhow::Result<Samples> {
    let rules = BashRules::default();
    let roots = [PathBuf::from("/work/project")];
    let ctx = JudgeContext {
        mode: Mode::Edit,
        global: &rules,
        project: None,
        folder: Path::new("/work/project"),
        roots: &roots,
        home: Path::new("/home/person"),
        protected: &Protected::under_home(Path::new("/home/person")),
    };
    let (mut contained, mut here) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for n in 0..rounds {
        let line = LINES[n % LINES.len()];
        let (took, judged) = timed(|| bash_judge::judge(line, &ctx));
        let (took_here, judged_here) = timed(|| bash_judge::judge_in_process(line, &ctx));
        if judged.decision != judged_here.decision || judged.reason != judged_here.reason {
            bail!(
                "the contained judge said {:?} and the judge in process {:?} on {line:?}",
                judged.reason,
                judged_here.reason
            );
        }
        contained.push(took);
        here.push(took_here);
    }
    let (slowest, line) = bash_judge::fuzz_found::FUZZ_FOUND
        .iter()
        .map(|(line, _)| (timed(|| bash_judge::judge(line, &ctx)).0, *line))
        .max()
        .unwrap_or_default();
    let nanos = |d: &Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Ok(Samples {
        contained_ns: contained.iter().map(nanos).collect(),
        here_ns: here.iter().map(nanos).collect(),
        slowest_ns: nanos(&slowest),
        slowest_line: line.to_string(),
    })
}

fn rows(samples: &Samples) -> Vec<Row> {
    let rounds = samples.contained_ns.len();
    let durations = |ns: &[u64]| -> Vec<Duration> { ns.iter().copied().map(Duration::from_nanos).collect() };
    let (contained, here) = (durations(&samples.contained_ns), durations(&samples.here_ns));
    let slowest = Duration::from_nanos(samples.slowest_ns);
    let line = &samples.slowest_line;
    let (p50, p99) = (percentile(&contained, 50.0), percentile(&contained, 99.0));
    let baseline = percentile(&here, 50.0);
    let shown: String = line.chars().take(24).collect();
    vec![
        Row::new(ROWS[0], ms(p50), format!("in process {}", ms(baseline)))
            .ratio(p50.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
            .goal(format!("<= {}", ms(GOAL)), p99 <= GOAL)
            .note(format!(
                "p99 {} (in process {}); {rounds} lines, a fork each with a memory cap and 1 s of CPU",
                ms(p99),
                ms(percentile(&here, 99.0))
            )),
        Row::new(ROWS[1], ms(slowest), format!("an everyday line {}", ms(p50)))
            .ratio(slowest.as_secs_f64() / p50.as_secs_f64().max(1e-9))
            .goal(format!("<= {}", ms(FUZZ_GOAL)), slowest <= FUZZ_GOAL)
            .note(format!(
                "the slowest of {} lines, contained: {shown:?}",
                bash_judge::fuzz_found::FUZZ_FOUND.len()
            )),
    ]
}

fn timed(judge: impl FnOnce() -> Judgement) -> (Duration, Judgement) {
    let started = Instant::now();
    let judged = judge();
    (started.elapsed(), judged)
}
