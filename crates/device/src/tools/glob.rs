//! `glob`: the files under a folder whose path (relative to that folder) matches a glob, newest
//! first, what `.gitignore` hides and protected files left out.

use std::sync::Mutex;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;

use schemars::JsonSchema;
use serde::Deserialize;

use super::arguments::lenient;
use super::resolve::resolve;
use super::walk::{relative_text, walker};
use super::{
    Access, Planned, ToolContext, ToolDefinition, ToolError, ToolKind, ToolName, ToolOutput, io_error, named,
    shown,
};
use crate::decisions::Tools;
use crate::poison::Recover;

/// What the model is told of `glob`.
pub fn definition(numbers: &Tools) -> ToolDefinition {
    let most = numbers.list_max_entries;
    ToolDefinition::of::<GlobArguments>(
        ToolName::Glob,
        &format!(
            "Find files by name with a glob pattern (`**` matches any number of folders: \
             `**/*.rs`). Paths are relative to the folder searched, newest first, at most {most}; \
             files .gitignore hides are left out."
        ),
    )
}

/// `glob`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GlobArguments {
    /// The glob, matched against paths relative to the folder searched.
    #[serde(deserialize_with = "lenient::text")]
    pattern: String,
    /// The folder to search (default: the session's folder).
    #[serde(default, deserialize_with = "lenient::optional_path")]
    #[schemars(with = "String")]
    path: Option<String>,
}

pub struct GlobArgs {
    pattern: String,
    matcher: GlobMatcher,
    path: String,
}

impl GlobArgs {
    pub fn parse(args: GlobArguments) -> Result<Self, ToolError> {
        Ok(Self {
            matcher: path_glob(&args.pattern, "glob", "pattern")?,
            pattern: args.pattern,
            path: args.path.unwrap_or_default(),
        })
    }

    pub fn plan(&self, ctx: &ToolContext) -> Planned {
        let path = resolve(&self.path, ctx);
        Planned {
            name: ToolName::Glob,
            kind: ToolKind::Search,
            access: Access::Read,
            title: format!("Find \"{}\" in {}", self.pattern, shown(&path, ctx)),
            path,
        }
    }

    pub fn run(&self, planned: &Planned, ctx: &ToolContext) -> ToolOutput {
        let folder = &planned.path;
        match std::fs::metadata(folder) {
            Err(e) => return io_error(&e, folder, ctx, "searched"),
            Ok(m) if !m.is_dir() => {
                return ToolOutput::error(format!(
                    "{} is not a folder: glob searches a folder.",
                    shown(folder, ctx)
                ));
            }
            Ok(_) => {}
        }
        let pinned = match super::opened::Pinned::open(folder) {
            Ok(pinned) => pinned,
            Err(e) => return io_error(&e, folder, ctx, "searched"),
        };
        let found: Mutex<Vec<(SystemTime, String)>> = Mutex::new(Vec::new());
        walker(folder, &ctx.protected).build_parallel().run(|| {
            let (found, pinned) = (&found, &pinned);
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let relative = relative_text(entry.path(), folder);
                // Only what is really beneath the folder judged: not a folder swapped in meanwhile.
                if self.matcher.is_match(&relative) && pinned.holds(std::path::Path::new(&relative)) {
                    let modified = entry
                        .metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .unwrap_or(SystemTime::UNIX_EPOCH);
                    if let Ok(mut found) = found.lock() {
                        found.push((modified, relative));
                    }
                }
                WalkState::Continue
            })
        });
        let mut found = found.into_inner().recover();
        if found.is_empty() {
            return ToolOutput::ok(format!(
                "No files match \"{}\" in {}.",
                self.pattern,
                named(folder, ctx)
            ));
        }
        // Newest first; the path breaks ties so the order is the same every time.
        found.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let most = ctx.numbers.list_max_entries;
        let total = found.len();
        let mut text: String = found
            .iter()
            .take(most)
            .map(|(_, path)| path.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if total > most {
            text.push_str(&format!(
                "\n\n({} more files left out: the {most} newest of {total} shown. Narrow the pattern or the folder.)",
                total - most
            ));
        }
        ToolOutput::ok(text)
    }
}

/// A glob over `/`-separated relative paths: `*` stays within one folder, `**` crosses any number.
pub fn path_glob(pattern: &str, tool: &str, key: &str) -> Result<GlobMatcher, ToolError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|e| ToolError::BadArguments(format!("{tool}'s `{key}` is not a valid glob: {e}.")))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use serde_json::json;

    use crate::tools::test_support::Fixture;

    fn touch(path: &std::path::Path, seconds_ago: u64) {
        let file = std::fs::File::options().write(true).open(path).expect("open");
        let when = SystemTime::now() - Duration::from_secs(seconds_ago);
        file.set_modified(when).expect("set the modification time");
    }

    #[test]
    fn matches_are_relative_and_newest_first() {
        let f = Fixture::new();
        touch(&f.file("src/old.rs", ""), 300);
        touch(&f.file("src/deep/new.rs", ""), 10);
        touch(&f.file("src/mid.rs", ""), 100);
        f.file("src/notes.md", "");
        assert_eq!(
            f.ok("glob", json!({ "pattern": "**/*.rs" })),
            "src/deep/new.rs\nsrc/mid.rs\nsrc/old.rs"
        );
        assert_eq!(
            f.ok("glob", json!({ "pattern": "*.rs", "path": "src" })),
            "mid.rs\nold.rs",
            "`*` stays in one folder"
        );
        assert_eq!(
            f.ok("glob", json!({ "pattern": "nothing*" })),
            "No files match \"nothing*\" in the session's folder."
        );
    }

    #[test]
    fn gitignored_and_protected_files_are_left_out_and_hidden_ones_kept() {
        let f = Fixture::new();
        f.file(".gitignore", "dist/\n");
        f.file("dist/app.js", "");
        f.file("src/app.js", "");
        f.file(".github/ci.js", "");
        f.file(".git/hooks/pre-commit.js", "");
        f.file("config/.env.js", "");
        f.file(".env", "");
        let text = f.ok("glob", json!({ "pattern": "**/*.js" }));
        let mut listed: Vec<&str> = text.lines().collect();
        listed.sort_unstable();
        assert_eq!(listed, [".github/ci.js", "src/app.js"]);
        assert_eq!(
            f.ok("glob", json!({ "pattern": "**/.env*" })),
            "No files match \"**/.env*\" in the session's folder."
        );
    }

    #[test]
    fn more_than_the_most_are_cut_with_a_line() {
        let f = Fixture::new();
        for i in 0..1003 {
            f.file(&format!("many/f{i:04}.txt"), "");
        }
        let text = f.ok("glob", json!({ "pattern": "many/*.txt" }));
        assert_eq!(text.lines().filter(|l| l.starts_with("many/")).count(), 1000);
        assert!(text.ends_with(
            "(3 more files left out: the 1000 newest of 1003 shown. Narrow the pattern or the folder.)"
        ));
    }

    #[test]
    fn bad_patterns_and_paths() {
        let f = Fixture::new();
        let err = crate::tools::plan(crate::tools::FileTool::Glob, r#"{"pattern":"a[b"}"#, &f.ctx)
            .err()
            .map(|e| e.to_string());
        assert!(
            err.as_ref()
                .is_some_and(|e| e.starts_with("glob's `pattern` is not a valid glob")),
            "{err:?}"
        );
        f.file("a.txt", "");
        assert_eq!(
            f.err("glob", json!({ "pattern": "*", "path": "a.txt" })),
            "a.txt is not a folder: glob searches a folder."
        );
    }
}
