//! `activity`: the activity log's newest lines (`$XDG_STATE_HOME/lembas/activity.jsonl` and its
//! old files), newest first. `lembas activity` takes the lines as logged; the window asks for them
//! `described`, each with its kind and the sentence `lembas activity` prints, and shows the file.

use std::path::Path;

use serde_json::Value;

use super::params::{ActivityLines, ActivityPage, ActivityParams, Line};
use super::runtime_handles::RuntimeHandles;
use crate::activity_log;
use crate::rpc::RpcError;

/// The lines `activity` gives when `n` is absent, as `lembas activity` shows.
const DEFAULT: usize = 50;
/// The most described lines one answer carries (the log keeps far more; `lembas activity -n`
/// reads them as logged).
pub const MOST: usize = 1000;

pub(super) async fn read(parts: &RuntimeHandles, asked: ActivityParams) -> Result<ActivityPage, RpcError> {
    let n = asked.n.unwrap_or(DEFAULT).max(1);
    // Described lines are for a view: a bounded page.
    let n = if asked.described { n.min(MOST) } else { n };
    let path = activity_log::path(&parts.engine.setup().dirs);
    if asked.described {
        tracing::debug!(n, "the window read the activity log");
    }
    let at = path.clone();
    let kept_files = parts.engine.setup().decisions.activity.kept_files;
    let (lines, unreadable) =
        tokio::task::spawn_blocking(move || newest(&at, n, asked.described, kept_files))
            .await
            .map_err(|e| RpcError::internal(e.to_string()))?
            .map_err(|e| RpcError::internal(format!("The activity log cannot be read: {e}")))?;
    Ok(ActivityPage {
        lines,
        unreadable,
        path: path.display().to_string(),
    })
}

/// The newest `n` lines of the log at `path` and its old files: as logged, or described.
fn newest(
    path: &Path,
    n: usize,
    described: bool,
    kept_files: u32,
) -> std::io::Result<(ActivityLines, usize)> {
    let newest = activity_log::newest(path, kept_files, n)?;
    let lines = if described {
        ActivityLines::Described(newest.lines.iter().map(describe).collect())
    } else {
        ActivityLines::Logged(newest.lines)
    };
    Ok((lines, newest.unreadable))
}

fn describe(line: &Value) -> Line {
    Line {
        at_ms: line["at_ms"].as_u64().unwrap_or_default(),
        kind: line["kind"].as_str().unwrap_or_default().to_string(),
        text: activity_log::describe(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old files read, as decided.
    fn kept() -> u32 {
        crate::decisions::Decisions::built_in().activity.kept_files
    }

    #[test]
    fn reads_newest_first_with_sentences_and_counts_the_unreadable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("activity.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"at_ms":1,"kind":"terminal_opened","terminal_id":"t1","cwd":"/w"}"#,
                "\n",
                "not json\n",
                r#"{"at_ms":2,"kind":"refused","method":"fs/read_text_file","reason":"outside the roots"}"#,
                "\n",
            ),
        )
        .unwrap();
        let described = |n| match newest(&path, n, true, kept()).unwrap() {
            (ActivityLines::Described(lines), unreadable) => (lines, unreadable),
            other => panic!("not described: {other:?}"),
        };
        let (lines, unreadable) = described(10);
        let kinds: Vec<_> = lines.iter().map(|l| l.kind.as_str()).collect();
        assert_eq!(kinds, ["refused", "terminal_opened"]);
        assert!(lines[0].text.contains("outside the roots"), "{}", lines[0].text);
        assert_eq!(unreadable, 1);
        assert_eq!(described(1).0.len(), 1);
        // As logged, the line keeps its own fields.
        let (ActivityLines::Logged(raw), _) = newest(&path, 1, false, kept()).unwrap() else {
            panic!("not as logged");
        };
        assert_eq!(raw[0]["method"], "fs/read_text_file");
        // No log yet is an empty page, not an error.
        assert_eq!(
            newest(&dir.path().join("none.jsonl"), 10, true, kept())
                .unwrap()
                .0,
            ActivityLines::Described(Vec::new())
        );
    }
}
