//! Benchmarks run in a child of the bench started for them (`lembas-bench <flag> <args>`), so what
//! they measure is not the bench's own process (its memory, the cost of forking it). The child
//! prints its answer as JSON.

use std::process::Stdio;

use anyhow::{Context, bail};
use serde::de::DeserializeOwned;

/// This bench program with `flag`, for the caller to add arguments and environment to.
pub fn command(flag: &str) -> anyhow::Result<tokio::process::Command> {
    let me = std::env::current_exe().context("cannot find the bench's own binary")?;
    let mut command = tokio::process::Command::new(me);
    command.arg(flag).stdin(Stdio::null());
    Ok(command)
}

/// `command` run to its end, and its answer read; `what` names it in errors.
pub async fn answer<T: DeserializeOwned>(
    mut command: tokio::process::Command,
    what: &str,
) -> anyhow::Result<T> {
    let output = command.output().await?;
    if !output.status.success() {
        bail!("{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    serde_json::from_slice(&output.stdout).with_context(|| format!("{what}'s answer"))
}
