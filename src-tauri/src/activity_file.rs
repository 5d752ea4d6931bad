//! The activity log (`$XDG_STATE_HOME/lembas/activity.jsonl`, written by whichever process runs the
//! device) read back for the window's Activity view: the newest lines first, each with its kind
//! and the sentence `lembas activity` prints.

use std::path::Path;

use lembas_device::activity_log::{self, Limits};
use serde::Serialize;

/// How many lines the view reads at most (the log keeps far more; `lembas activity -n` reads them).
pub const MOST: usize = 1000;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    pub at_ms: u64,
    pub kind: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Page {
    /// Newest first.
    pub lines: Vec<Line>,
    /// Lines that could not be read (cut short, or not the log's).
    pub unreadable: usize,
    pub path: String,
}

/// The newest `n` lines of the log at `path` and its old files.
pub fn read(path: &Path, n: usize) -> std::io::Result<Page> {
    let newest = activity_log::newest(path, Limits::decided().kept_files, n.min(MOST))?;
    let lines = newest
        .lines
        .iter()
        .map(|line| Line {
            at_ms: line["at_ms"].as_u64().unwrap_or_default(),
            kind: line["kind"].as_str().unwrap_or_default().to_string(),
            text: activity_log::describe(line),
        })
        .collect();
    Ok(Page {
        lines,
        unreadable: newest.unreadable,
        path: path.display().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let page = read(&path, 10).unwrap();
        let kinds: Vec<_> = page.lines.iter().map(|l| l.kind.as_str()).collect();
        assert_eq!(kinds, ["refused", "terminal_opened"]);
        assert!(
            page.lines[0].text.contains("outside the roots"),
            "{:?}",
            page.lines[0]
        );
        assert_eq!(page.unreadable, 1);
        assert_eq!(read(&path, 1).unwrap().lines.len(), 1);
        // No log yet is an empty page, not an error.
        assert!(read(&dir.path().join("none.jsonl"), 10).unwrap().lines.is_empty());
    }
}
