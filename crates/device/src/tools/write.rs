//! `write`: a whole file, created with its folders when missing, replaced atomically when present.

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

/// What the model is told of `write`.
pub fn definition() -> ToolDefinition {
    ToolDefinition::of::<WriteArgs>(
        ToolName::Write,
        "Write a file whole, creating it and its folders when missing, replacing it when \
         present. To change part of a file, use edit.",
    )
}

/// `write`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WriteArgs {
    /// The file: relative to the session's folder, or absolute.
    #[serde(deserialize_with = "lenient::path")]
    path: String,
    /// The file's whole new content.
    #[serde(deserialize_with = "lenient::text")]
    content: String,
}

impl WriteArgs {
    pub fn parse(args: WriteArgs) -> Result<Self, ToolError> {
        Ok(args)
    }

    pub fn plan(&self, ctx: &ToolContext) -> Planned {
        let path = resolve(&self.path, ctx);
        Planned {
            name: ToolName::Write,
            kind: ToolKind::Edit,
            access: Access::Write,
            title: format!("Write {}", shown(&path, ctx)),
            path,
        }
    }

    pub fn run(&self, planned: &Planned, ctx: &ToolContext) -> ToolOutput {
        let path = &planned.path;
        let name = shown(path, ctx);
        if path.is_dir() {
            return ToolOutput::error(format!("{name} is a folder: write needs a file's path."));
        }
        let old_text = match opened::read(path) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return io_error(&e, path, ctx, "written"),
        };
        if let Err(e) = keep_before_write(ctx.copies.as_deref(), path) {
            return kept_error(&e, &name);
        }
        if let Some(folder) = path.parent()
            && let Err(e) = std::fs::create_dir_all(folder)
        {
            return io_error(&e, folder, ctx, "created");
        }
        if let Err(e) = replace_planned(path, self.content.as_bytes()) {
            return io_error(&e, path, ctx, "written");
        }
        let lines = self.content.lines().count();
        let done = if old_text.is_some() { "Wrote" } else { "Created" };
        ToolOutput {
            text: format!("{done} {name} ({lines} lines)."),
            is_error: false,
            diff: Some(Diff {
                path: path.display().to_string(),
                old_text,
                new_text: self.content.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::test_support::Fixture;

    #[test]
    fn a_new_file_gets_its_folders_and_a_diff_without_old_text() {
        let f = Fixture::new();
        let output = f.call(
            "write",
            json!({ "path": "docs/guide/intro.md", "content": "# Hi\nthere\n" }),
        );
        assert!(!output.is_error, "{}", output.text);
        assert_eq!(output.text, "Created docs/guide/intro.md (2 lines).");
        assert_eq!(f.read("docs/guide/intro.md"), "# Hi\nthere\n");
        let diff = output.diff.expect("a diff");
        assert_eq!(diff.path, f.path("docs/guide/intro.md").display().to_string());
        assert_eq!(diff.old_text, None);
        assert_eq!(diff.new_text, "# Hi\nthere\n");
    }

    #[test]
    fn an_existing_file_is_replaced_with_its_old_text_in_the_diff() {
        let f = Fixture::new();
        f.file("a.txt", "old\n");
        let output = f.call("write", json!({ "path": "a.txt", "content": "new\n" }));
        assert_eq!(output.text, "Wrote a.txt (1 lines).");
        assert_eq!(f.read("a.txt"), "new\n");
        assert_eq!(output.diff.and_then(|d| d.old_text).as_deref(), Some("old\n"));
    }

    #[test]
    fn a_folder_is_not_a_file() {
        let f = Fixture::new();
        f.folder("src");
        assert_eq!(
            f.err("write", json!({ "path": "src", "content": "x" })),
            "src is a folder: write needs a file's path."
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_is_written_where_it_points_and_stays_a_link() {
        let f = Fixture::new();
        let target = f.file("real/config.toml", "a = 1\n");
        f.symlink(&target, "config.toml");
        let planned = f.planned("write", json!({ "path": "config.toml", "content": "" }));
        assert_eq!(planned.path, target);
        f.ok("write", json!({ "path": "config.toml", "content": "a = 2\n" }));
        assert_eq!(f.read("real/config.toml"), "a = 2\n");
        let link = std::fs::symlink_metadata(f.path("config.toml")).expect("the link");
        assert!(link.file_type().is_symlink());
    }

    #[test]
    fn a_write_whose_copy_cannot_be_kept_is_not_made() {
        let mut f = Fixture::new();
        f.file("a.txt", "old\n");
        let blocker = f.file("blocker", "a file where the copies' folder would go");
        f.ctx.copies = Some(blocker.join("turn"));
        let err = f.err("write", json!({ "path": "a.txt", "content": "new\n" }));
        assert!(
            err.starts_with("a.txt was not changed: the copy /undo needs"),
            "{err}"
        );
        assert_eq!(f.read("a.txt"), "old\n");

        f.ctx.copies = Some(f.path("copies/turn"));
        f.ok("write", json!({ "path": "a.txt", "content": "new\n" }));
        let kept = crate::tools::copies::kept_in(&f.path("copies/turn")).unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].path, f.path("a.txt"));
    }

    #[test]
    fn content_is_required() {
        let f = Fixture::new();
        let err = crate::tools::plan(crate::tools::FileTool::Write, r#"{"path":"a.txt"}"#, &f.ctx)
            .err()
            .map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("write needs `content` (a string)."));
    }
}
