//! The engine's `grep` tool on a generated tree (nested folders of small text files, a few of them
//! matching), called in process as the engine calls it (`tools::plan` then `tools::run`), against
//! `rg --hidden -n` on the same tree. Warm cache: one run of each first; then alternating runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use lembas_device::tools::{self, FileTool, ToolContext};
use serde_json::json;

use crate::report::{Row, ms};
use crate::stats::percentile;

pub const ROWS: [&str; 1] = ["grep tool (in process) vs rg"];
/// A regular expression with a literal start, as a person's search usually is.
const PATTERN: &str = "lembas_needle_[0-9]+";
/// How many files hold a match.
const MATCHING_FILES: usize = 10;
const FILES_PER_FOLDER: usize = 100;
const FOLDERS_PER_TOP: usize = 10;
const RUNS: usize = 5;
const GOAL_RATIO: f64 = 0.8;

pub async fn run(files: usize) -> anyhow::Result<Vec<Row>> {
    tokio::task::spawn_blocking(move || measure(files))
        .await
        .map_err(|e| anyhow!("the grep benchmark stopped: {e}"))?
}

fn measure(files: usize) -> anyhow::Result<Vec<Row>> {
    let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
    let tree = dir.path().join("tree");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    write_tree(&tree, files)?;
    let tree = std::fs::canonicalize(&tree)?;
    let ctx = ToolContext {
        project: tree.clone(),
        roots: vec![tree.clone()],
        protected: lembas_device::policy::protected::Protected::under_home(&std::fs::canonicalize(&home)?),
        copies: None,
        additional: Vec::new(),
        numbers: &lembas_device::decisions::Decisions::built_in().tools,
    };
    let arguments = json!({ "pattern": PATTERN }).to_string();
    let expected = MATCHING_FILES.min(files);
    let (mut ours, mut theirs) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for run in 0..=RUNS {
        let (took, found) = grep_tool(&ctx, &arguments)?;
        let (rg_took, rg_found) = ripgrep(&tree)?;
        if found != expected || rg_found != expected {
            bail!("{expected} matching lines were written; the grep tool found {found}, rg {rg_found}");
        }
        // The first run of each only warms the cache.
        if run > 0 {
            ours.push(took);
            theirs.push(rg_took);
        }
    }
    let (figure, baseline) = (percentile(&ours, 50.0), percentile(&theirs, 50.0));
    let ratio = baseline.as_secs_f64() / figure.as_secs_f64().max(1e-9);
    Ok(vec![
        Row::new(ROWS[0], ms(figure), format!("rg {}", ms(baseline)))
            .ratio(ratio)
            .goal(format!(">= {GOAL_RATIO}x rg"), ratio >= GOAL_RATIO)
            .note(format!(
                "{files} files, median of {RUNS}, warm cache; ratio = rg / ours"
            )),
    ])
}

/// One call of the tool as the engine makes it; its time and the matching lines it listed.
fn grep_tool(ctx: &ToolContext, arguments: &str) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let (planned, args) = tools::plan(FileTool::Grep, arguments, ctx).map_err(|e| anyhow!("{e}"))?;
    let output = tools::run(&planned, &args, ctx);
    let took = started.elapsed();
    if output.is_error {
        bail!("the grep tool failed: {}", output.text);
    }
    Ok((took, matching_lines(&output.text)))
}

fn ripgrep(tree: &Path) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let output = Command::new("rg")
        .args(["--hidden", "-n", PATTERN])
        .arg(tree)
        .stdin(Stdio::null())
        .output()
        .context("cannot run rg (ripgrep): scripts/setup installs it")?;
    let took = started.elapsed();
    if !output.status.success() {
        bail!(
            "rg failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok((took, matching_lines(&String::from_utf8_lossy(&output.stdout))))
}

fn matching_lines(text: &str) -> usize {
    text.lines()
        .filter(|line| line.contains("lembas_needle_"))
        .count()
}

/// `files` small text files, 100 to a folder, ten folders under each top folder; every
/// `files / 10`th file holds one matching line.
pub(crate) fn write_tree(tree: &Path, files: usize) -> anyhow::Result<()> {
    let every = (files / MATCHING_FILES).max(1);
    let mut folder = PathBuf::new();
    for index in 0..files {
        if index % FILES_PER_FOLDER == 0 {
            let per_top = FILES_PER_FOLDER * FOLDERS_PER_TOP;
            folder = tree
                .join(format!("top{:03}", index / per_top))
                .join(format!("sub{}", (index / FILES_PER_FOLDER) % FOLDERS_PER_TOP));
            std::fs::create_dir_all(&folder).with_context(|| format!("cannot make {}", folder.display()))?;
        }
        let mut text = format!(
            "// file {index}\nfn item_{index}() -> usize {{\n    {index}\n}}\n\nThe quick brown fox jumps over the lazy dog, {index} times.\nlet total = items.iter().map(|item| item.size).sum::<usize>();\n"
        );
        if index % every == every / 2 && index / every < MATCHING_FILES {
            text.push_str(&format!("const MARK: &str = \"lembas_needle_{index}\";\n"));
        }
        std::fs::write(folder.join(format!("file{index:06}.rs")), text)?;
    }
    Ok(())
}
