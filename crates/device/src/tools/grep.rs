//! `grep`: matching lines as `path:line:text`, searched with ripgrep's own crates (grep-searcher and
//! grep-regex) over a parallel `ignore` walk, so it keeps up with `rg`. Every file is searched (to
//! count the matches), but only the lines that can still be among the first `list_max_entries` in
//! path order are kept, so the output is the same whatever order the threads finish in.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use globset::GlobMatcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::WalkState;

use schemars::JsonSchema;
use serde::Deserialize;

use super::arguments::lenient;
use super::glob::path_glob;
use super::resolve::resolve;
use super::walk::{relative_text, walker};
use super::{
    Access, Planned, ToolContext, ToolDefinition, ToolError, ToolKind, ToolName, ToolOutput, io_error, named,
    shown,
};
use crate::decisions::Tools;
use crate::poison::Recover;

/// What the model is told of `grep`.
pub fn definition(numbers: &Tools) -> ToolDefinition {
    let most = numbers.list_max_entries;
    ToolDefinition::of::<GrepArguments>(
        ToolName::Grep,
        &format!(
            "Search file contents with a regular expression (Rust regex syntax, like ripgrep). \
             Prints `path:line:text` for each matching line, sorted by path, at most {most} lines; \
             binary files and files .gitignore hides are skipped."
        ),
    )
}

/// `grep`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GrepArguments {
    /// The regular expression.
    #[serde(deserialize_with = "lenient::text")]
    pattern: String,
    /// The file or folder to search (default: the session's folder).
    #[serde(default, deserialize_with = "lenient::optional_path")]
    #[schemars(with = "String")]
    path: Option<String>,
    /// Only files matching this glob, like `*.rs` (matched against the name) or `src/**/*.ts` (against the path).
    #[serde(default, deserialize_with = "lenient::optional_text")]
    #[schemars(with = "String")]
    glob: Option<String>,
    /// Match letters in any case (default false).
    #[serde(default, deserialize_with = "lenient::flag")]
    #[schemars(with = "bool")]
    ignore_case: Option<bool>,
}

pub struct GrepArgs {
    pattern: String,
    matcher: RegexMatcher,
    path: String,
    glob: Option<(String, FileFilter)>,
}

/// `glob`, like ripgrep's `-g`: without a `/` it is matched against the file's name, with one
/// against its path below the folder searched.
enum FileFilter {
    Name(GlobMatcher),
    Path(GlobMatcher),
}

impl GrepArgs {
    pub fn parse(args: GrepArguments) -> Result<Self, ToolError> {
        let pattern = args.pattern.as_str();
        let ignore_case = args.ignore_case.unwrap_or(false);
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(ignore_case)
            // Matches never span lines, which lets the searcher work line by line, as rg does.
            .line_terminator(Some(b'\n'))
            .build(pattern)
            .map_err(|e| {
                ToolError::BadArguments(format!("grep's `pattern` is not a valid regular expression: {e}"))
            })?;
        let glob = match args.glob.as_deref() {
            None => None,
            Some(glob) => {
                let matcher = path_glob(glob, "grep", "glob")?;
                let filter = if glob.contains('/') {
                    FileFilter::Path(matcher)
                } else {
                    FileFilter::Name(matcher)
                };
                Some((glob.to_owned(), filter))
            }
        };
        Ok(Self {
            pattern: pattern.to_owned(),
            matcher,
            path: args.path.unwrap_or_default(),
            glob,
        })
    }

    pub fn plan(&self, ctx: &ToolContext) -> Planned {
        let path = resolve(&self.path, ctx);
        let within = match &self.glob {
            Some((glob, _)) => format!(" ({glob})"),
            None => String::new(),
        };
        Planned {
            name: ToolName::Grep,
            kind: ToolKind::Search,
            access: Access::Read,
            title: format!("Search \"{}\" in {}{within}", self.pattern, shown(&path, ctx)),
            path,
        }
    }

    pub fn run(&self, planned: &Planned, ctx: &ToolContext) -> ToolOutput {
        let root = &planned.path;
        if let Err(e) = std::fs::metadata(root) {
            return io_error(&e, root, ctx, "searched");
        }
        let numbers = ctx.numbers;
        let most = numbers.list_max_entries;
        let found = Mutex::new(Found::default());
        walker(root, &ctx.protected).build_parallel().run(|| {
            // One searcher and one line buffer per thread, reused for every file it searches.
            let mut searcher = SearcherBuilder::new()
                .binary_detection(BinaryDetection::quit(b'\0'))
                .line_number(true)
                .build();
            let mut lines = Vec::new();
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                // A file named as the path is searched whatever its name.
                if entry.depth() > 0 && !self.wanted(&entry, root) {
                    return WalkState::Continue;
                }
                let mut sink = FileSink {
                    lines: &mut lines,
                    matched: 0,
                    binary: false,
                    keep: most,
                    line_max_chars: numbers.grep_line_max_chars,
                };
                // Opened checked: a folder on the way swapped for a symlink is not searched, nor
                // another name of a protected file (judged on the descriptor: one stat, more
                // only for a file with several names).
                let searched = super::opened::open_file(entry.path())
                    .map_err(|e| e.to_string())
                    .and_then(|file| match file.metadata() {
                        Ok(metadata)
                            if super::identity::linked_protection_of(&metadata, &ctx.protected).is_some() =>
                        {
                            Err("another name of a protected file".to_string())
                        }
                        Ok(_) => Ok(file),
                        Err(e) => Err(e.to_string()),
                    })
                    .and_then(|file| {
                        searcher
                            .search_file(&self.matcher, &file, &mut sink)
                            .map_err(|e| e.to_string())
                    });
                let (matched, binary) = (sink.matched, sink.binary);
                if searched.is_ok()
                    && !binary
                    && matched > 0
                    && let Ok(mut found) = found.lock()
                {
                    found.add(entry.into_path(), std::mem::take(&mut lines), matched, most);
                }
                lines.clear();
                WalkState::Continue
            })
        });
        let found = found.into_inner().recover();
        self.report(found, root, most, ctx)
    }

    fn wanted(&self, entry: &ignore::DirEntry, root: &std::path::Path) -> bool {
        match &self.glob {
            None => true,
            Some((_, FileFilter::Name(glob))) => glob.is_match(entry.file_name()),
            Some((_, FileFilter::Path(glob))) => glob.is_match(relative_text(entry.path(), root)),
        }
    }

    fn report(&self, found: Found, root: &std::path::Path, most: usize, ctx: &ToolContext) -> ToolOutput {
        if found.total == 0 {
            return ToolOutput::ok(format!(
                "No matches for \"{}\" in {}.",
                self.pattern,
                named(root, ctx)
            ));
        }
        let mut out = String::new();
        let mut listed = 0;
        'files: for (path, lines) in &found.files {
            let name = shown(path, ctx);
            for (number, text) in lines {
                if listed == most {
                    break 'files;
                }
                if listed > 0 {
                    out.push('\n');
                }
                out.push_str(&format!("{name}:{number}:{text}"));
                listed += 1;
            }
        }
        if found.total > listed {
            out.push_str(&format!(
                "\n\n({} more matching lines left out: {listed} of {} shown. Narrow the pattern, the path or the glob.)",
                found.total - listed,
                found.total
            ));
        }
        ToolOutput::ok(out)
    }
}

/// The matches of all files so far: every one counted, only the first `most` lines in path order
/// kept.
#[derive(Default)]
struct Found {
    files: BTreeMap<PathBuf, Vec<(u64, String)>>,
    kept: usize,
    total: usize,
}

impl Found {
    fn add(&mut self, path: PathBuf, lines: Vec<(u64, String)>, matched: usize, most: usize) {
        self.total += matched;
        let after_all_kept = self.files.last_key_value().is_some_and(|(last, _)| path > *last);
        if self.kept >= most && after_all_kept {
            return;
        }
        self.kept += lines.len();
        self.files.insert(path, lines);
        // Drop the last files while the others still hold enough lines without them.
        while let Some((_, last)) = self.files.last_key_value() {
            if self.kept - last.len() < most {
                break;
            }
            self.kept -= last.len();
            self.files.pop_last();
        }
    }
}

/// Collects one file's matching lines.
struct FileSink<'a> {
    lines: &'a mut Vec<(u64, String)>,
    matched: usize,
    binary: bool,
    /// No file needs more lines kept than the output can show.
    keep: usize,
    line_max_chars: usize,
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matched += 1;
        if self.lines.len() < self.keep {
            let bytes = found.bytes();
            let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
            let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            let text = String::from_utf8_lossy(bytes);
            let text = super::shortened(&text, self.line_max_chars);
            self.lines.push((found.line_number().unwrap_or(0), text));
        }
        Ok(true)
    }

    /// A binary file is skipped as a whole, like rg does when searching a folder.
    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
mod tests;
