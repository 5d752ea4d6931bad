//! Capability `files`. `_lembas/files/search` over the link on a generated tree (the grep
//! benchmark's: nested folders of small files), its index warm, against `rg --files | fzf --filter`
//! on the same tree, alternating, queries taking turns; the index's first build against
//! `rg --files` alone, with the device's memory before and after. And a prompt's `@path` mention of
//! a 1 MB file expanded in process, as the engine does it, against reading that file whole.

use lembas_protocol::LinkMethod;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use lembas_device::files::mention::{Scope, attach};
use serde_json::json;

use crate::agent::{self, REQUEST_WAIT};
use crate::instance::LeanInstance;
use crate::procfs::rss;
use crate::report::{Row, mb, ms};
use crate::stats::percentile;

pub const ROWS: [&str; 4] = [
    "File search p50",
    "File search p99",
    "File index build",
    "@path expansion, 1 MB file",
];
/// What a person types in the picker: a name's digits, a folder and a name, a fragment, nothing
/// that matches.
const QUERIES: [&str; 6] = ["file0042", "sub3 file9", "top00/sub2", "f1234", "rs", "zzqx"];
const GOAL_P99: Duration = Duration::from_millis(30);
const GOAL_EXPANSION: Duration = Duration::from_millis(5);
const EXPANSIONS: usize = 20;

pub async fn run(instance: &mut LeanInstance, files: usize, rounds: usize) -> anyhow::Result<Vec<Row>> {
    let home = agent::home(&instance.url())?;
    let tree = home.work().join("tree");
    let written = tree.clone();
    tokio::task::spawn_blocking(move || crate::grep_tool::write_tree(&written, files))
        .await
        .map_err(|e| anyhow!("writing the tree stopped: {e}"))??;
    let tree = std::fs::canonicalize(&tree)?;
    let (device, mut link) = home.link(instance).await?;
    let before = rss(device.pid()).unwrap_or_default();

    // The first search builds the index.
    let (build, answer) = search(&mut link, &tree, QUERIES[0]).await?;
    let after = rss(device.pid()).unwrap_or_default();
    let rg_took = rg_files(&tree)?;

    let (mut ours, mut theirs) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for round in 0..rounds {
        let query = QUERIES[round % QUERIES.len()];
        let (took, answer) = search(&mut link, &tree, query).await?;
        let found = answer["result"]["files"].as_array().map_or(0, Vec::len);
        let (fzf_took, fzf_found) = fzf(&tree, query)?;
        if found == 0 && fzf_found > 0 {
            bail!("the search for {query:?} found nothing, fzf {fzf_found} files: {answer}");
        }
        ours.push(took);
        theirs.push(fzf_took);
    }
    let end_rss = rss(device.pid()).unwrap_or_default();
    drop(answer);

    let (expansion, read_whole, shown) = tokio::task::spawn_blocking(expansion)
        .await
        .map_err(|e| anyhow!("the expansion benchmark stopped: {e}"))??;

    let row = |name: &str, q: f64, goal: Option<Duration>| {
        let (figure, baseline) = (percentile(&ours, q), percentile(&theirs, q));
        let ratio = baseline.as_secs_f64() / figure.as_secs_f64().max(1e-9);
        let row = Row::new(name, ms(figure), format!("rg|fzf {}", ms(baseline)))
            .ratio(ratio)
            .note(format!(
                "{files} files, {rounds} searches of {} queries, index warm; ratio = rg|fzf / ours",
                QUERIES.len()
            ));
        match goal {
            Some(goal) => row.goal(format!("<= {}", ms(goal)), figure <= goal),
            None => row,
        }
    };
    Ok(vec![
        row(ROWS[0], 50.0, None),
        row(ROWS[1], 99.0, Some(GOAL_P99)),
        Row::new(ROWS[2], ms(build), format!("rg --files {}", ms(rg_took)))
            .ratio(build.as_secs_f64() / rg_took.as_secs_f64().max(1e-9))
            .note(format!(
                "first search, walk included; device RSS {} before, {} after, {} at the end",
                mb(before),
                mb(after),
                mb(end_rss)
            )),
        Row::new(ROWS[3], ms(expansion), format!("read whole {}", ms(read_whole)))
            .ratio(expansion.as_secs_f64() / read_whole.as_secs_f64().max(1e-9))
            .goal(format!("<= {}", ms(GOAL_EXPANSION)), expansion <= GOAL_EXPANSION)
            .note(format!("median of {EXPANSIONS}, in process; {shown}")),
    ])
}

async fn search(
    link: &mut crate::instance::RawLink,
    tree: &Path,
    query: &str,
) -> anyhow::Result<(Duration, serde_json::Value)> {
    let (took, answer) = link
        .timed_request(
            LinkMethod::FilesSearch.name(),
            json!({ "cwd": tree, "query": query, "limit": 20 }),
            REQUEST_WAIT,
        )
        .await?;
    if answer.get("result").is_none() {
        bail!("_lembas/files/search failed: {answer}");
    }
    Ok((took, answer))
}

fn rg_files(tree: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let status = Command::new("rg")
        .arg("--files")
        .current_dir(tree)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .context("cannot run rg (ripgrep): scripts/setup installs it")?;
    if !status.success() {
        bail!("rg --files failed ({status})");
    }
    Ok(started.elapsed())
}

/// `rg --files | fzf --filter <query>` in the tree, as the TUI's picker would list and rank; its
/// time and how many files it matched.
fn fzf(tree: &Path, query: &str) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let output = Command::new("sh")
        .args(["-c", "rg --files | fzf --filter \"$1\"", "sh", query])
        .current_dir(tree)
        .stdin(Stdio::null())
        .output()
        .context("cannot run rg | fzf: scripts/setup installs both")?;
    // fzf exits 1 when nothing matched.
    if !matches!(output.status.code(), Some(0 | 1)) {
        bail!(
            "rg | fzf failed ({}): {} (scripts/setup installs fzf)",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let took = started.elapsed();
    Ok((
        took,
        output
            .stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count(),
    ))
}

/// A 1 MB text file mentioned in a prompt: the expansion's median, reading the file whole's, and
/// what was attached.
fn expansion() -> anyhow::Result<(Duration, Duration, String)> {
    let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
    let root = std::fs::canonicalize(dir.path())?;
    let project = root.join("project");
    std::fs::create_dir_all(&project)?;
    let mut text = String::with_capacity(1 << 20);
    let mut line = 0;
    while text.len() < 1 << 20 {
        line += 1;
        text.push_str(&format!(
            "{line:>7}: the quick brown fox jumps over the lazy dog; total += item.size;\n"
        ));
    }
    std::fs::write(project.join("big.txt"), &text)?;
    let home = root.join("home");
    let roots = vec![root.clone()];
    let scope = Scope {
        root: &project,
        roots: &roots,
        protected: &lembas_device::policy::protected::Protected::under_home(&home),
        decisions: lembas_device::decisions::Decisions::built_in(),
    };
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut attached_bytes = 0;
    for _ in 0..=EXPANSIONS {
        let started = Instant::now();
        let attached = attach(&["please look at @big.txt"], &scope);
        let took = started.elapsed();
        attached_bytes = attached.first().map_or(0, |a| a.text.len());
        if attached_bytes == 0 {
            bail!("the 1 MB file was not attached");
        }
        let started = Instant::now();
        let whole = std::fs::read(project.join("big.txt"))?;
        theirs.push(started.elapsed());
        std::hint::black_box(whole);
        ours.push(took);
    }
    // The first of each only warmed the cache.
    let (ours, theirs) = (&ours[1..], &theirs[1..]);
    Ok((
        percentile(ours, 50.0),
        percentile(theirs, 50.0),
        format!(
            "{} bytes, {line} lines; {attached_bytes} bytes attached (the attachment limits)",
            text.len()
        ),
    ))
}
