//! The file tools the model calls (docs/protocol.md "Tools"): `read`, `ls`, `glob`, `grep`, `write` and
//! `edit`. A call is first planned ([`plan`]: its arguments checked and its path resolved, so the
//! engine can decide the permission with [`judge`] and show an approval card), then run ([`run`],
//! blocking I/O). `bash` is the engine's own; only its definition is here, beside the others.

pub mod arguments;
mod atomic;
pub mod copies;
mod cut;
mod definitions;
mod edit;
mod glob;
mod grep;
pub mod identity;
mod ls;
mod name;
pub mod opened;
mod preview;
mod read;
pub mod read_gate;
mod resolve;
mod walk;
mod write;

/// Replacing a file so a reader sees the old content or the new, never half of it (the tools'
/// writes, and files the device's commands write, such as the service's unit).
pub use atomic::replace_file;

#[cfg(test)]
pub(crate) mod test_support;

use std::path::{Path, PathBuf};

use lembas_protocol::update::ToolKind;
use serde_json::Value;

use crate::policy::Mode;
use crate::policy::bash_judge::Judgement;
use crate::policy::protected::Protected;
pub use crate::policy::tools::Access;
use crate::policy::tools::decide_path;
pub use cut::{cut_result, shortened};
pub use definitions::ToolDefinition;
pub use name::ToolName;
pub use preview::{preview, unified_change};
pub(crate) use walk::{relative_text, walker};

/// What the tools need to know about the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolContext {
    /// The session's folder, resolved.
    pub project: PathBuf,
    /// `remote.roots`, resolved.
    pub roots: Vec<PathBuf>,
    /// The protected places (docs/protocol.md "Paths"), and the home folder, resolved.
    pub protected: Protected,
    /// Where `write` and `edit` keep a file's copy before the turn's first write to it (for
    /// `/undo`); `None`: no copies are kept.
    pub copies: Option<PathBuf>,
    /// Further folders worked in as the project is (an editor's `additionalDirectories`),
    /// resolved and judged when the session was opened.
    pub additional: Vec<PathBuf>,
    /// The tools' decided numbers (how much is read, listed, cut).
    pub numbers: &'static crate::decisions::Tools,
}

impl ToolContext {
    /// The folder a resolved path counts as the project of: the additional folder it is in, or
    /// the session's own.
    pub fn project_of(&self, resolved: &Path) -> &Path {
        self.additional
            .iter()
            .find(|dir| resolved.starts_with(dir))
            .unwrap_or(&self.project)
    }
}

/// What a call will touch, worked out before it runs (for the permission decision and the approval
/// card).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub name: ToolName,
    pub kind: ToolKind,
    pub access: Access,
    /// Resolved, symlinks followed; for a file that does not exist yet: its resolved parent joined
    /// with the name.
    pub path: PathBuf,
    /// What the call does, for people: "Read src/main.rs", "Search \"fn main\" in src".
    pub title: String,
}

/// A call that cannot even be planned. Its text is a sentence for the model, given back as the
/// tool's result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    BadArguments(String),
}

/// The text block of a `write`/`edit` result, as ACP's `diff` content wants it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    /// Absolute.
    pub path: String,
    /// `None` for a file that did not exist.
    pub old_text: Option<String>,
    pub new_text: String,
}

impl From<Diff> for lembas_protocol::update::ToolCallContent {
    fn from(diff: Diff) -> Self {
        lembas_protocol::update::ToolCallContent::Diff {
            path: diff.path,
            old_text: diff.old_text,
            new_text: diff.new_text,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    pub text: String,
    pub is_error: bool,
    pub diff: Option<Diff>,
}

impl ToolOutput {
    fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: false,
            diff: None,
        }
    }

    fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            diff: None,
        }
    }
}

/// A call with its arguments checked.
enum Call {
    Read(read::ReadArgs),
    Ls(ls::LsArgs),
    Glob(glob::GlobArgs),
    Grep(grep::GrepArgs),
    Write(write::WriteArgs),
    Edit(edit::EditArgs),
}

impl Call {
    fn parse(tool: FileTool, args: &Value, numbers: &crate::decisions::Tools) -> Result<Call, ToolError> {
        let name = tool.name().as_str();
        Ok(match tool {
            FileTool::Read => Call::Read(read::ReadArgs::parse(arguments::of(name, args)?, numbers)?),
            FileTool::Ls => Call::Ls(ls::LsArgs::parse(arguments::of(name, args)?)?),
            FileTool::Glob => Call::Glob(glob::GlobArgs::parse(arguments::of(name, args)?)?),
            FileTool::Grep => Call::Grep(grep::GrepArgs::parse(arguments::of(name, args)?)?),
            FileTool::Write => Call::Write(write::WriteArgs::parse(arguments::of(name, args)?)?),
            FileTool::Edit => Call::Edit(edit::EditArgs::parse(arguments::of(name, args)?)?),
        })
    }

    fn plan(&self, ctx: &ToolContext) -> Planned {
        match self {
            Call::Read(args) => args.plan(ctx),
            Call::Ls(args) => args.plan(ctx),
            Call::Glob(args) => args.plan(ctx),
            Call::Grep(args) => args.plan(ctx),
            Call::Write(args) => args.plan(ctx),
            Call::Edit(args) => args.plan(ctx),
        }
    }

    fn run(&self, planned: &Planned, ctx: &ToolContext) -> ToolOutput {
        match self {
            Call::Read(args) => args.run(planned, ctx),
            Call::Ls(args) => args.run(planned, ctx),
            Call::Glob(args) => args.run(planned, ctx),
            Call::Grep(args) => args.run(planned, ctx),
            Call::Write(args) => args.run(planned, ctx),
            Call::Edit(args) => args.run(planned, ctx),
        }
    }
}

/// The file tools this module plans and runs (`bash` is the engine's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileTool {
    Read,
    Ls,
    Glob,
    Grep,
    Write,
    Edit,
}

impl FileTool {
    pub const ALL: [FileTool; 6] = [
        FileTool::Read,
        FileTool::Ls,
        FileTool::Glob,
        FileTool::Grep,
        FileTool::Write,
        FileTool::Edit,
    ];

    pub fn name(self) -> ToolName {
        match self {
            FileTool::Read => ToolName::Read,
            FileTool::Ls => ToolName::Ls,
            FileTool::Glob => ToolName::Glob,
            FileTool::Grep => ToolName::Grep,
            FileTool::Write => ToolName::Write,
            FileTool::Edit => ToolName::Edit,
        }
    }

    pub fn of(name: ToolName) -> Option<FileTool> {
        FileTool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    /// What the model is told of the tool: what it does, and its arguments' schema.
    pub fn definition(self, numbers: &crate::decisions::Tools) -> ToolDefinition {
        match self {
            FileTool::Read => read::definition(numbers),
            FileTool::Ls => ls::definition(),
            FileTool::Glob => glob::definition(numbers),
            FileTool::Grep => grep::definition(numbers),
            FileTool::Write => write::definition(),
            FileTool::Edit => edit::definition(),
        }
    }
}

/// Parses the arguments text (a JSON object as the model wrote it) and plans the call.
pub fn plan(tool: FileTool, arguments: &str, ctx: &ToolContext) -> Result<(Planned, Value), ToolError> {
    let name = tool.name().as_str();
    let args = arguments::json_object(name, arguments)?;
    let call = Call::parse(tool, &args, ctx.numbers)?;
    Ok((call.plan(ctx), args))
}

/// The permission for a planned call in `mode` (docs/protocol.md "Modes"), with a reason naming its path.
pub fn judge(planned: &Planned, mode: Mode, ctx: &ToolContext) -> Judgement {
    decide_path(
        planned.access,
        mode,
        &planned.path,
        ctx.project_of(&planned.path),
        &ctx.roots,
        &ctx.protected,
    )
}

/// Runs a planned call (blocking I/O: the engine calls it in `spawn_blocking`). The permission was
/// decided before; still, no tool touches a protected path, and listings leave out protected and
/// gitignored entries. The text is not cut here: the engine cuts every tool's result with
/// [`cut_result`], bash's included.
pub fn run(planned: &Planned, args: &Value, ctx: &ToolContext) -> ToolOutput {
    // The gate's check, by path here since a write or a listing opens no single file; `read`
    // checks again on what it opened.
    if let Err(refusal) = read_gate::check_path(&planned.path, &ctx.protected) {
        return ToolOutput::error(refusal.sentence(&shown(&planned.path, ctx)));
    }
    let Some(tool) = FileTool::of(planned.name) else {
        return ToolOutput::error(format!("{} is not a file tool.", planned.name));
    };
    match Call::parse(tool, args, ctx.numbers) {
        Ok(call) => call.run(planned, ctx),
        Err(error) => ToolOutput::error(error.to_string()),
    }
}

/// A path as the tools show it: relative to the project when inside it (`.` for the project
/// itself), else in full.
fn shown(path: &Path, ctx: &ToolContext) -> String {
    match path.strip_prefix(&ctx.project) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".into(),
        Ok(rest) => rest.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// A path as sentences name it: like [`shown`], but the project itself is "the session's folder".
fn named(path: &Path, ctx: &ToolContext) -> String {
    if path == ctx.project {
        "the session's folder".into()
    } else {
        shown(path, ctx)
    }
}

/// An I/O error as a sentence about `path`; `verb` says what was being done ("read", "written").
fn io_error(error: &std::io::Error, path: &Path, ctx: &ToolContext, verb: &str) -> ToolOutput {
    let shown = shown(path, ctx);
    ToolOutput::error(match error.kind() {
        std::io::ErrorKind::NotFound => format!("{shown} does not exist."),
        std::io::ErrorKind::PermissionDenied => format!("{shown} cannot be {verb}: permission denied."),
        std::io::ErrorKind::InvalidData => format!("{shown} is not UTF-8 text."),
        _ => format!("{shown} cannot be {verb}: {error}."),
    })
}

/// A write refused because its copy for `/undo` could not be kept.
fn kept_error(error: &std::io::Error, shown: &str) -> ToolOutput {
    ToolOutput::error(format!(
        "{shown} was not changed: the copy /undo needs could not be kept ({error})."
    ))
}

#[cfg(test)]
mod tests;
