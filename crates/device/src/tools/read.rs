//! `read`: a text file's lines, numbered like `cat -n`, from `offset` on, at most `limit` of them.
//! The file is streamed line by line, so a huge log costs only the lines shown.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::Deserialize;

use super::arguments::lenient;
use super::read_gate::{ReadGate, Refusal};
use super::resolve::resolve;
use super::{
    Access, Planned, ToolContext, ToolDefinition, ToolError, ToolKind, ToolName, ToolOutput, io_error, shown,
};
use crate::decisions::Tools;

/// What the model is told of `read`.
pub fn definition(numbers: &Tools) -> ToolDefinition {
    let lines = numbers.read_default_lines;
    ToolDefinition::of::<ReadArguments>(
        ToolName::Read,
        &format!(
            "Read a text file. Lines come numbered like `cat -n`; at most {lines} lines unless \
             `limit` says otherwise. Use `offset` to read on from a later line."
        ),
    )
    .with(
        "/properties/limit/description",
        format!("How many lines to show (default {lines})."),
    )
}

/// `read`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadArguments {
    /// The file: relative to the session's folder, or absolute.
    #[serde(deserialize_with = "lenient::path")]
    path: String,
    /// The first line to show (1-based).
    #[serde(default, deserialize_with = "lenient::count")]
    #[schemars(with = "u64", range(min = 1))]
    offset: Option<usize>,
    /// How many lines to show (default: the read's line count, said in the tool's description).
    #[serde(default, deserialize_with = "lenient::count")]
    #[schemars(with = "u64", range(min = 1))]
    limit: Option<usize>,
}

pub struct ReadArgs {
    path: String,
    /// 1-based; a 0 from the model is read as 1.
    offset: usize,
    limit: usize,
}

impl ReadArgs {
    pub fn parse(args: ReadArguments, numbers: &Tools) -> Result<Self, ToolError> {
        let limit = args.limit.unwrap_or(numbers.read_default_lines);
        if limit == 0 {
            return Err(ToolError::BadArguments(
                "read's `limit` must be at least 1.".into(),
            ));
        }
        Ok(Self {
            path: args.path,
            offset: args.offset.unwrap_or(1).max(1),
            limit,
        })
    }

    pub fn plan(&self, ctx: &ToolContext) -> Planned {
        let path = resolve(&self.path, ctx);
        Planned {
            name: ToolName::Read,
            kind: ToolKind::Read,
            access: Access::Read,
            title: format!("Read {}", shown(&path, ctx)),
            path,
        }
    }

    pub fn run(&self, planned: &Planned, ctx: &ToolContext) -> ToolOutput {
        let path = &planned.path;
        let name = shown(path, ctx);
        let metadata = match std::fs::metadata(path) {
            Ok(metadata) => metadata,
            Err(e) => return io_error(&e, path, ctx, "read"),
        };
        if metadata.is_dir() {
            return ToolOutput::error(format!("{name} is a folder: use ls to list it."));
        }
        // Through the gate every read for the model takes: the check again on what was opened.
        let mut file = match ReadGate::new(&ctx.roots, &ctx.protected).open(path) {
            Ok(opened) => opened.file,
            Err(Refusal::Unreadable { error, .. }) => return io_error(&error, path, ctx, "read"),
            Err(refusal) => return ToolOutput::error(refusal.sentence(&name)),
        };
        let mut head = Vec::new();
        let probe = ctx.numbers.binary_check_bytes as u64;
        if let Err(e) = (&mut file).take(probe).read_to_end(&mut head) {
            return io_error(&e, path, ctx, "read");
        }
        if head.contains(&0) {
            return ToolOutput::ok(format!("(binary file, {} bytes)", metadata.len()));
        }
        let reader = BufReader::new(std::io::Cursor::new(head).chain(file));
        match self.numbered_lines(reader, &name) {
            Ok(text) => ToolOutput::ok(text),
            Err(Failure::Io(e)) => io_error(&e, path, ctx, "read"),
            Err(Failure::Said(sentence)) => ToolOutput::error(sentence),
        }
    }

    fn numbered_lines(&self, mut reader: impl BufRead, name: &str) -> Result<String, Failure> {
        let mut out = String::new();
        let mut line = Vec::new();
        let (mut number, mut last_shown) = (0, 0);
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).map_err(Failure::Io)? == 0 {
                break;
            }
            number += 1;
            // Lines past the window are still counted, to say how many follow.
            if number < self.offset || number >= self.offset + self.limit {
                continue;
            }
            let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = std::str::from_utf8(bytes).map_err(|_| {
                Failure::Said(format!(
                    "{name} is not UTF-8 text (line {number}), so read cannot show it."
                ))
            })?;
            if last_shown > 0 {
                out.push('\n');
            }
            let _ = write!(out, "{number:>6}\t{text}");
            last_shown = number;
        }
        let total = number;
        if total == 0 {
            return Ok("(empty file)".into());
        }
        if self.offset > total {
            return Err(Failure::Said(format!(
                "{name} has {total} lines: offset {} is past its end.",
                self.offset
            )));
        }
        if last_shown < total {
            let _ = write!(
                out,
                "\n\n(Lines {}–{last_shown} of {total} shown. Read on with offset {}.)",
                self.offset,
                last_shown + 1
            );
        }
        Ok(out)
    }
}

enum Failure {
    Io(std::io::Error),
    Said(String),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::test_support::Fixture;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn lines_are_numbered_like_cat_n() {
        let f = Fixture::new();
        f.file("a.txt", "first\n\tsecond\nthird");
        let text = f.ok("read", json!({ "path": "a.txt" }));
        assert_eq!(text, "     1\tfirst\n     2\t\tsecond\n     3\tthird");
    }

    #[test]
    fn offset_and_limit_pick_a_window_and_say_how_to_read_on() {
        let f = Fixture::new();
        f.file("a.txt", &lines(10));
        let text = f.ok("read", json!({ "path": "a.txt", "offset": 3, "limit": 2 }));
        assert_eq!(
            text,
            "     3\tline 3\n     4\tline 4\n\n(Lines 3–4 of 10 shown. Read on with offset 5.)"
        );
        let end = f.ok("read", json!({ "path": "a.txt", "offset": "9" }));
        assert_eq!(end, "     9\tline 9\n    10\tline 10");
        let err = f.err("read", json!({ "path": "a.txt", "offset": 11 }));
        assert_eq!(err, "a.txt has 10 lines: offset 11 is past its end.");
    }

    #[test]
    fn the_default_limit_is_the_decisions() {
        let f = Fixture::new();
        f.file("big.txt", &lines(2500));
        let text = f.ok("read", json!({ "path": "big.txt" }));
        assert!(text.contains("  2000\tline 2000\n"), "the last line shown");
        assert!(!text.contains("\tline 2001"));
        assert!(text.ends_with("(Lines 1–2000 of 2500 shown. Read on with offset 2001.)"));
    }

    #[test]
    fn binary_empty_and_folders() {
        let f = Fixture::new();
        f.bytes("blob.bin", b"\x7fELF\x00\x01\x02rest");
        assert_eq!(
            f.ok("read", json!({ "path": "blob.bin" })),
            "(binary file, 11 bytes)"
        );
        f.file("empty.txt", "");
        assert_eq!(f.ok("read", json!({ "path": "empty.txt" })), "(empty file)");
        f.folder("src");
        assert_eq!(
            f.err("read", json!({ "path": "src" })),
            "src is a folder: use ls to list it."
        );
    }

    #[test]
    fn missing_and_not_utf8_files_are_errors() {
        let f = Fixture::new();
        assert_eq!(
            f.err("read", json!({ "path": "nope.txt" })),
            "nope.txt does not exist."
        );
        f.bytes("latin1.txt", b"ok\ncaf\xe9\n");
        let err = f.err("read", json!({ "path": "latin1.txt" }));
        assert_eq!(
            err,
            "latin1.txt is not UTF-8 text (line 2), so read cannot show it."
        );
    }

    #[test]
    fn a_nul_after_the_probe_is_not_binary() {
        let f = Fixture::new();
        let mut bytes = "x".repeat(9000).into_bytes();
        bytes.extend_from_slice(b"\n\0\n");
        f.bytes("late.txt", &bytes);
        let text = f.ok("read", json!({ "path": "late.txt", "limit": 1 }));
        assert!(text.starts_with("     1\txxx"));
        assert!(
            text.ends_with("(Lines 1–1 of 2 shown. Read on with offset 2.)"),
            "{text}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn permission_denied_is_a_sentence() {
        use std::os::unix::fs::PermissionsExt;
        let f = Fixture::new();
        let path = f.file("locked.txt", "x");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        // Root reads anything; the check only means something for an ordinary user.
        if std::fs::read(&path).is_err() {
            let err = f.err("read", json!({ "path": "locked.txt" }));
            assert_eq!(err, "locked.txt cannot be read: permission denied.");
        }
    }

    #[test]
    fn bad_arguments_name_the_tool() {
        let f = Fixture::new();
        let ctx = &f.ctx;
        let err = |args: &str| {
            crate::tools::plan(crate::tools::FileTool::Read, args, ctx)
                .err()
                .map(|e| e.to_string())
        };
        assert_eq!(err("{}").as_deref(), Some("read needs `path` (a string)."));
        assert_eq!(
            err(r#"{"path":"a","limit":0}"#).as_deref(),
            Some("read's `limit` must be at least 1.")
        );
        assert_eq!(
            err(r#"{"path":"a","offset":-1}"#).as_deref(),
            Some("read's `offset` must be a whole number of 0 or more.")
        );
    }
}
