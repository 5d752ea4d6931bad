//! `edit`: replaces `old_string` with `new_string` in a file; `old_string` must occur exactly once
//! unless `replace_all`, so a model that misremembers the file changes nothing by accident.

use schemars::JsonSchema;
use serde::Deserialize;

use super::arguments::lenient;
use super::atomic::replace_planned;
use super::copies::keep_before_write;
use super::opened;
use super::resolve::resolve;
use super::{
    Access, Diff, Planned, ToolContext, ToolDefinition, ToolError, ToolKind, ToolName, ToolOutput, io_error,
    kept_error, shown,
};

/// What the model is told of `edit`.
pub fn definition() -> ToolDefinition {
    ToolDefinition::of::<EditArgs>(
        ToolName::Edit,
        "Replace text in a file. `old_string` must occur exactly once (include enough of the \
         surrounding lines to make it unique) unless `replace_all` is true. Read the file first \
         and copy the text exactly, indentation included.",
    )
}

/// `edit`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EditArgs {
    /// The file: relative to the session's folder, or absolute.
    #[serde(deserialize_with = "lenient::path")]
    path: String,
    /// The exact text to replace.
    #[serde(deserialize_with = "lenient::text")]
    old_string: String,
    /// The text to put in its place.
    #[serde(deserialize_with = "lenient::text")]
    new_string: String,
    /// Replace every occurrence (default false).
    #[serde(default, deserialize_with = "lenient::flag")]
    #[schemars(with = "bool")]
    replace_all: Option<bool>,
}

impl EditArgs {
    pub fn parse(parsed: EditArgs) -> Result<Self, ToolError> {
        // Both are refused before any approval is asked: there is nothing to approve.
        if parsed.old_string.is_empty() {
            return Err(ToolError::BadArguments(
                "edit's `old_string` is empty: to create a file or replace all of it, use write.".into(),
            ));
        }
        if parsed.old_string == parsed.new_string {
            return Err(ToolError::BadArguments(
                "edit's `old_string` and `new_string` are the same, so there is nothing to change.".into(),
            ));
        }
        Ok(parsed)
    }

    pub fn plan(&self, ctx: &ToolContext) -> Planned {
        let path = resolve(&self.path, ctx);
        Planned {
            name: ToolName::Edit,
            kind: ToolKind::Edit,
            access: Access::Write,
            title: format!("Edit {}", shown(&path, ctx)),
            path,
        }
    }

    pub fn run(&self, planned: &Planned, ctx: &ToolContext) -> ToolOutput {
        let path = &planned.path;
        let name = shown(path, ctx);
        if path.is_dir() {
            return ToolOutput::error(format!("{name} is a folder: edit needs a file's path."));
        }
        let old_text = match opened::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return ToolOutput::error(format!("{name} does not exist. To create it, use write."));
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return ToolOutput::error(format!("{name} is not UTF-8 text, so edit cannot change it."));
            }
            Err(e) => return io_error(&e, path, ctx, "read"),
        };
        let found = old_text.matches(self.old_string.as_str()).count();
        if found == 0 {
            return ToolOutput::error(format!(
                "`old_string` was not found in {name}. Read the file again and copy the text exactly, \
                 indentation and line breaks included."
            ));
        }
        if found > 1 && !self.replace_all.unwrap_or(false) {
            return ToolOutput::error(format!(
                "`old_string` occurs {found} times in {name}. Add more of the surrounding lines to make \
                 it unique, or set `replace_all` to change every one."
            ));
        }
        let new_text = if self.replace_all.unwrap_or(false) {
            old_text.replace(&self.old_string, &self.new_string)
        } else {
            old_text.replacen(&self.old_string, &self.new_string, 1)
        };
        if let Err(e) = keep_before_write(ctx.copies.as_deref(), path) {
            return kept_error(&e, &name);
        }
        if let Err(e) = replace_planned(path, new_text.as_bytes()) {
            return io_error(&e, path, ctx, "written");
        }
        let occurrences = if found == 1 {
            "1 occurrence".into()
        } else {
            format!("{found} occurrences")
        };
        ToolOutput {
            text: format!("Edited {name}: replaced {occurrences}."),
            is_error: false,
            diff: Some(Diff {
                path: path.display().to_string(),
                old_text: Some(old_text),
                new_text,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::test_support::Fixture;

    #[test]
    fn a_single_occurrence_is_replaced_with_a_whole_file_diff() {
        let f = Fixture::new();
        f.file("Cargo.toml", "[package]\nname = \"a\"\nversion = \"1\"\n");
        let output = f.call(
            "edit",
            json!({ "path": "Cargo.toml", "old_string": "version = \"1\"", "new_string": "version = \"2\"" }),
        );
        assert_eq!(output.text, "Edited Cargo.toml: replaced 1 occurrence.");
        assert_eq!(f.read("Cargo.toml"), "[package]\nname = \"a\"\nversion = \"2\"\n");
        let diff = output.diff.expect("a diff");
        assert_eq!(
            diff.old_text.as_deref(),
            Some("[package]\nname = \"a\"\nversion = \"1\"\n")
        );
        assert_eq!(diff.new_text, "[package]\nname = \"a\"\nversion = \"2\"\n");
    }

    #[test]
    fn several_occurrences_need_context_or_replace_all() {
        let f = Fixture::new();
        f.file("a.rs", "let x = 1;\nlet x = 1;\nlet x = 1;\n");
        let err = f.err(
            "edit",
            json!({ "path": "a.rs", "old_string": "x = 1", "new_string": "x = 2" }),
        );
        assert_eq!(
            err,
            "`old_string` occurs 3 times in a.rs. Add more of the surrounding lines to make it unique, \
             or set `replace_all` to change every one."
        );
        assert_eq!(
            f.read("a.rs"),
            "let x = 1;\nlet x = 1;\nlet x = 1;\n",
            "nothing changed"
        );
        let text = f.ok(
            "edit",
            json!({ "path": "a.rs", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true }),
        );
        assert_eq!(text, "Edited a.rs: replaced 3 occurrences.");
        assert_eq!(f.read("a.rs"), "let x = 2;\nlet x = 2;\nlet x = 2;\n");
    }

    #[test]
    fn text_not_found_and_files_that_cannot_be_edited() {
        let f = Fixture::new();
        f.file("a.txt", "hello\n");
        let err = f.err(
            "edit",
            json!({ "path": "a.txt", "old_string": "hullo", "new_string": "x" }),
        );
        assert!(err.starts_with("`old_string` was not found in a.txt."), "{err}");
        let err = f.err(
            "edit",
            json!({ "path": "gone.txt", "old_string": "a", "new_string": "b" }),
        );
        assert_eq!(err, "gone.txt does not exist. To create it, use write.");
        f.bytes("latin1.txt", b"caf\xe9\n");
        let err = f.err(
            "edit",
            json!({ "path": "latin1.txt", "old_string": "caf", "new_string": "x" }),
        );
        assert_eq!(err, "latin1.txt is not UTF-8 text, so edit cannot change it.");
    }

    #[test]
    fn same_or_empty_strings_are_refused_before_running() {
        let f = Fixture::new();
        let err = |args: serde_json::Value| {
            crate::tools::plan(crate::tools::FileTool::Edit, &args.to_string(), &f.ctx)
                .err()
                .map(|e| e.to_string())
        };
        assert_eq!(
            err(json!({ "path": "a", "old_string": "x", "new_string": "x" })).as_deref(),
            Some("edit's `old_string` and `new_string` are the same, so there is nothing to change.")
        );
        assert_eq!(
            err(json!({ "path": "a", "old_string": "", "new_string": "x" })).as_deref(),
            Some("edit's `old_string` is empty: to create a file or replace all of it, use write.")
        );
        assert_eq!(
            err(json!({ "path": "a", "new_string": "x" })).as_deref(),
            Some("edit needs `old_string` (a string).")
        );
        assert_eq!(
            err(json!({ "path": "a", "old_string": "x", "new_string": 3 })).as_deref(),
            Some("edit's `new_string` must be a string, not a number.")
        );
    }
}
