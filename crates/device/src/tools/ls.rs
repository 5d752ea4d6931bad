//! `ls`: one folder's entries, sorted by name, folders with a trailing `/`; what `.gitignore` hides
//! and protected entries left out.

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use super::arguments::lenient;
use super::opened;
use super::resolve::resolve;
use super::walk::walker;
use super::{
    Access, Planned, ToolContext, ToolDefinition, ToolError, ToolKind, ToolName, ToolOutput, io_error, named,
    shown,
};

/// What the model is told of `ls`.
pub fn definition() -> ToolDefinition {
    ToolDefinition::of::<LsArguments>(
        ToolName::Ls,
        "List a folder: its entries sorted by name, folders with a trailing `/`. Entries \
         .gitignore hides are left out.",
    )
}

/// `ls`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LsArguments {
    /// The folder (default: the session's folder).
    #[serde(default, deserialize_with = "lenient::optional_path")]
    #[schemars(with = "String")]
    path: Option<String>,
}

pub struct LsArgs {
    path: String,
}

impl LsArgs {
    pub fn parse(args: LsArguments) -> Result<Self, ToolError> {
        Ok(Self {
            path: args.path.unwrap_or_default(),
        })
    }

    pub fn plan(&self, ctx: &ToolContext) -> Planned {
        let path = resolve(&self.path, ctx);
        Planned {
            name: ToolName::Ls,
            kind: ToolKind::Read,
            access: Access::Read,
            title: format!("List {}", shown(&path, ctx)),
            path,
        }
    }

    pub fn run(&self, planned: &Planned, ctx: &ToolContext) -> ToolOutput {
        let folder = &planned.path;
        let name = named(folder, ctx);
        match std::fs::metadata(folder) {
            Err(e) => return io_error(&e, folder, ctx, "listed"),
            Ok(m) if !m.is_dir() => {
                return ToolOutput::error(format!("{name} is a file: use read to read it."));
            }
            Ok(_) => {}
        }
        let pinned = match opened::Pinned::open(folder) {
            Ok(pinned) => pinned,
            Err(e) => return io_error(&e, folder, ctx, "listed"),
        };
        let mut entries: Vec<String> = walker(folder, &ctx.protected)
            .max_depth(Some(1))
            .build()
            .filter_map(Result::ok)
            .filter(|entry| entry.depth() == 1 && pinned.holds(Path::new(entry.file_name())))
            .map(|entry| {
                let mut text = entry.file_name().to_string_lossy().into_owned();
                // A symlink to a folder is shown as a folder: that is how it is used.
                if entry.path().is_dir() {
                    text.push('/');
                }
                text
            })
            .collect();
        if entries.is_empty() {
            return ToolOutput::ok(if *folder == ctx.project {
                "The session's folder is empty.".into()
            } else {
                format!("{name} is empty.")
            });
        }
        entries.sort_unstable();
        let most = ctx.numbers.list_max_entries;
        let total = entries.len();
        entries.truncate(most);
        let mut text = entries.join("\n");
        if total > most {
            text.push_str(&format!(
                "\n\n({} more entries left out: {most} of {total} shown. Use glob to find what you need.)",
                total - most
            ));
        }
        ToolOutput::ok(text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::tools::test_support::Fixture;

    #[test]
    fn entries_are_sorted_with_folders_marked() {
        let f = Fixture::new();
        f.file("b.txt", "");
        f.file("a.txt", "");
        f.file("src/main.rs", "");
        f.file(".hidden", "");
        assert_eq!(f.ok("ls", json!({})), ".hidden\na.txt\nb.txt\nsrc/");
        assert_eq!(f.ok("ls", json!({ "path": "src" })), "main.rs");
        // Some models send no arguments at all.
        let (planned, args) = crate::tools::plan(crate::tools::FileTool::Ls, "", &f.ctx).expect("plans");
        assert_eq!(planned.title, "List .");
        assert!(!crate::tools::run(&planned, &args, &f.ctx).is_error);
    }

    #[test]
    fn gitignored_and_protected_entries_are_left_out() {
        let f = Fixture::new();
        f.file(".gitignore", "target/\n*.log\n");
        f.file("target/debug/app", "");
        f.file("build.log", "");
        f.file(".env", "SECRET=1");
        f.file(".env.local", "SECRET=1");
        f.file(".git/config", "[core]");
        f.file("server.pem", "");
        f.file("keep.rs", "");
        assert_eq!(f.ok("ls", json!({})), ".gitignore\nkeep.rs");
    }

    #[test]
    fn a_file_or_a_missing_folder_is_an_error() {
        let f = Fixture::new();
        f.file("a.txt", "");
        assert_eq!(
            f.err("ls", json!({ "path": "a.txt" })),
            "a.txt is a file: use read to read it."
        );
        assert_eq!(f.err("ls", json!({ "path": "gone" })), "gone does not exist.");
        f.folder("empty");
        assert_eq!(f.ok("ls", json!({ "path": "empty" })), "empty is empty.");
        std::fs::remove_dir_all(&f.ctx.project).expect("remove");
        std::fs::create_dir(&f.ctx.project).expect("an empty project");
        assert_eq!(f.ok("ls", json!({})), "The session's folder is empty.");
    }
}
