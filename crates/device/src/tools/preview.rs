//! What a `write` or `edit` would change, as a unified diff against the file on disk (three lines
//! of context), for the approval card: a person sees the lines that change, not the whole new file;
//! and what one did change, in the same form, for the timeline.
//! Read with the tools' own reader (regular files only, no FIFO waited on); nothing when the file
//! is protected, not text, too large, or the edit would not apply (the call then fails as it would
//! have, with its own sentence).

use serde_json::Value;
use similar::TextDiff;
use std::path::Path;

use super::{Diff, Planned, ToolContext, opened, shown};

/// The largest file previewed; a bigger one's card shows the call's text alone.
const FILE_MAX: u64 = 1 << 20;
/// The most of a diff a card carries.
const DIFF_MAX_LINES: usize = 2000;

/// What a card shows of a change: the unified diff a person reads, and the change whole, as ACP's
/// `diff` content gives it to a client that draws it.
pub struct Preview {
    pub unified: String,
    pub change: Diff,
}

pub fn preview(planned: &Planned, args: &Value, ctx: &ToolContext) -> Option<Preview> {
    if ctx.protected.protects(&planned.path) {
        return None;
    }
    let existing = match std::fs::metadata(&planned.path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return None,
        Ok(meta) if !meta.is_file() || meta.len() > FILE_MAX => return None,
        Ok(_) => Some(opened::read_to_string(&planned.path).ok()?),
    };
    let old = existing.as_deref().unwrap_or_default();
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    let new = match planned.name.as_str() {
        "write" => text("content")?.to_string(),
        "edit" => {
            let (from, to) = (text("old_string")?, text("new_string")?);
            let all = args.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
            match old.matches(from).count() {
                0 => return None,
                1 => old.replacen(from, to, 1),
                _ if all => old.replace(from, to),
                _ => return None,
            }
        }
        _ => return None,
    };
    let unified = unified(old, &new, &shown(&planned.path, ctx));
    Some(Preview {
        unified,
        change: Diff {
            path: planned.path.display().to_string(),
            old_text: existing,
            new_text: new,
        },
    })
}

/// A change a tool made, as the diff its card would have shown (the timeline keeps it).
pub fn unified_change(diff: &Diff, ctx: &ToolContext) -> String {
    let old = diff.old_text.as_deref().unwrap_or_default();
    unified(old, &diff.new_text, &shown(Path::new(&diff.path), ctx))
}

fn unified(old: &str, new: &str, name: &str) -> String {
    let diff = TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string();
    bounded(diff)
}

/// At most [`DIFF_MAX_LINES`] lines, the rest counted in a last line.
fn bounded(diff: String) -> String {
    let lines = diff.lines().count();
    if lines <= DIFF_MAX_LINES {
        return diff.trim_end_matches('\n').to_string();
    }
    let kept: Vec<&str> = diff.lines().take(DIFF_MAX_LINES).collect();
    format!("{}\n… {} more lines", kept.join("\n"), lines - DIFF_MAX_LINES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::Fixture;
    use serde_json::json;

    fn previewed(f: &Fixture, name: &str, args: Value) -> Option<String> {
        preview(&f.planned(name, args.clone()), &args, &f.ctx).map(|p| p.unified)
    }

    #[test]
    fn the_change_is_the_files_whole_before_and_after() {
        let f = Fixture::new();
        f.file(
            "a.txt", "one
two
",
        );
        let args = json!({ "path": "a.txt", "old_string": "two", "new_string": "2" });
        let change = preview(&f.planned("edit", args.clone()), &args, &f.ctx)
            .unwrap()
            .change;
        assert!(
            change.path.ends_with("/a.txt") && change.path.starts_with('/'),
            "{}",
            change.path
        );
        assert_eq!(change.old_text.as_deref(), Some("one\ntwo\n"));
        assert_eq!(change.new_text, "one\n2\n");
        let args = json!({ "path": "new.txt", "content": "fresh\n" });
        let change = preview(&f.planned("write", args.clone()), &args, &f.ctx)
            .unwrap()
            .change;
        assert_eq!(change.old_text, None, "a new file has no old text");
        assert_eq!(change.new_text, "fresh\n");
    }

    #[test]
    fn an_edit_shows_the_changed_lines_with_context_not_the_whole_file() {
        let f = Fixture::new();
        let body: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        f.file("notes.md", &body);
        let diff = previewed(
            &f,
            "edit",
            json!({ "path": "notes.md", "old_string": "line 10\n", "new_string": "line ten\n" }),
        );
        assert_eq!(
            diff.unwrap(),
            "--- a/notes.md\n+++ b/notes.md\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n line 13"
        );
    }

    #[test]
    fn a_write_is_diffed_against_the_file_on_disk_or_nothing() {
        let f = Fixture::new();
        f.file("a.txt", "one\ntwo\n");
        let diff = previewed(&f, "write", json!({ "path": "a.txt", "content": "one\n2\n" })).unwrap();
        assert!(diff.ends_with("@@ -1,2 +1,2 @@\n one\n-two\n+2"), "{diff}");
        let diff = previewed(&f, "write", json!({ "path": "b.txt", "content": "fresh\n" })).unwrap();
        assert!(diff.ends_with("@@ -0,0 +1 @@\n+fresh"), "{diff}");
    }

    #[test]
    fn nothing_is_previewed_where_the_call_would_fail_or_must_not_read() {
        let f = Fixture::new();
        f.file("twice.txt", "x x\n");
        f.file(".env", "KEY=1\n");
        f.bytes("bin", &[0xff, 0xfe, 0x00]);
        let cases = [
            (
                "edit",
                json!({ "path": "twice.txt", "old_string": "x", "new_string": "y" }),
            ),
            (
                "edit",
                json!({ "path": "twice.txt", "old_string": "z", "new_string": "y" }),
            ),
            ("write", json!({ "path": ".env", "content": "KEY=2\n" })),
            ("write", json!({ "path": "bin", "content": "text\n" })),
        ];
        for (name, args) in cases {
            assert_eq!(previewed(&f, name, args.clone()), None, "{args}");
        }
        let all = json!({ "path": "twice.txt", "old_string": "x", "new_string": "y", "replace_all": true });
        assert!(previewed(&f, "edit", all).unwrap().contains("+y y"));
    }

    #[test]
    fn a_huge_diff_is_cut_with_a_count() {
        let long: String = (0..DIFF_MAX_LINES + 10).map(|n| format!("{n}\n")).collect();
        let cut = bounded(long);
        assert_eq!(cut.lines().count(), DIFF_MAX_LINES + 1);
        assert!(cut.ends_with("… 10 more lines"));
    }
}
