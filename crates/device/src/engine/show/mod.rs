//! The `show` tool (docs/protocol.md "Tools", docs/protocol.md `_lembas/show`): a file of the session sent to the
//! client's viewer, since the client cannot reach this disk. Offered only where someone looks: a
//! client that said `show: true`, never a scheduled turn. The path is planned and judged by the
//! `read` tool's own planner and judge (roots, protected paths, symlinks resolved); the kind comes
//! from the name; a file past `show.max_bytes` or not text is refused before anything is sent.
//! Every file sent is also kept on the engine's [`Shelf`] and announced as a
//! [`DeviceEvent::Shown`], so the desktop's viewer opens it too.

mod kind;
mod shelf;

pub use kind::ShownKind;
pub use shelf::{Shelf, ShownFile};

use lembas_protocol::LinkMethod;
use lembas_protocol::show::{ShowAnswer, ShowRequest};
use serde_json::{Value, json};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use super::Engine;
use super::session::Session;
use crate::decisions::{Decisions, ShowNumbers};
use crate::events::DeviceEvent;
use crate::tools::arguments::{self, lenient};
use crate::tools::read_gate::Refusal;
use crate::tools::{self, FileTool, Planned, ToolContext, ToolDefinition, ToolName, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

/// Said to a model that calls `show` where it is not offered.
pub const NOT_OFFERED: &str = "There is no tool named `show` here: nobody is looking at a viewer for this session. Say where the file is instead.";

/// Whether this session's turn is offered the tool now: its client said `show: true`, the link
/// sees the session (not a chat held here and not shared), and the turn is not a scheduled run
/// (nobody is looking).
pub fn offered(engine: &Engine, session: &Session) -> bool {
    engine.client().is_some_and(|c| c.show) && engine.link_sees(&session.id) && !session.is_scheduled()
}

/// `show`'s arguments as the model writes them.
#[derive(Debug, Deserialize, JsonSchema)]
struct ShowArguments {
    /// The file: relative to the session's folder, or absolute.
    #[serde(deserialize_with = "lenient::path")]
    path: String,
    /// A line to scroll to (1-based).
    #[serde(default, deserialize_with = "lenient::count")]
    #[schemars(with = "u64", range(min = 1))]
    line: Option<usize>,
}

/// What the model is told of `show`.
pub fn definition(numbers: &ShowNumbers) -> ToolDefinition {
    let most = numbers.max_bytes;
    ToolDefinition::of::<ShowArguments>(
        ToolName::Show,
        &format!(
            "Show a file to the person in their viewer beside the chat: markdown rendered, code \
             highlighted, HTML as a page. Use it when the person should see a file (a report, a \
             page you made, the code you mean) rather than read about it. Text files of at most \
             {most} bytes only."
        ),
    )
}

/// A `show` call's arguments read and its path planned as a `read` of it would be.
pub fn plan(arguments: &str, ctx: &ToolContext) -> Result<(Planned, Option<u64>, Value), String> {
    let (args, raw) = arguments::read::<ShowArguments>("show", arguments).map_err(|e| e.to_string())?;
    if args.path.trim().is_empty() {
        return Err("show needs `path` (a string): the file to show.".into());
    }
    if args.line == Some(0) {
        return Err("show's `line` must be a whole number, at least 1.".into());
    }
    let read = json!({ "path": args.path }).to_string();
    let (mut planned, _) = tools::plan(FileTool::Read, &read, ctx).map_err(|e| e.to_string())?;
    planned.name = ToolName::Show;
    planned.title = format!("Show {}", relative(&planned.path, &ctx.project));
    Ok((planned, args.line.map(|n| n as u64), raw))
}

/// Sends the planned file to the client (judged allowed before) and says what came of it.
pub async fn run(
    engine: &Engine,
    session: &Session,
    tool_call_id: &str,
    planned: &Planned,
    line: Option<u64>,
    ctx: &ToolContext,
) -> ToolOutput {
    let path = planned.path.clone();
    let shown = relative(&path, &ctx.project);
    if let Err(Refusal::Protected { what, .. } | Refusal::HardLink { what, .. }) =
        crate::tools::read_gate::check_path(&path, &ctx.protected)
    {
        return failed(format!(
            "{shown} is a protected path ({what}): remote work never shows it."
        ));
    }
    let named = shown.clone();
    let decisions = engine.setup().decisions;
    let text = match tokio::task::spawn_blocking(move || read_text(&path, &named, decisions)).await {
        Ok(Ok(text)) => text,
        Ok(Err(sentence)) => return failed(sentence),
        Err(e) => return failed(format!("{shown} could not be read: {e}.")),
    };
    let Some(client) = engine
        .client()
        .filter(|c| c.show && engine.link_sees(&session.id))
    else {
        return failed(NOT_OFFERED.to_string());
    };
    let (kind, language) = kind::of(&planned.path);
    let numbers = &decisions.show;
    let kept = engine.shelf().keep(
        ShownFile {
            id: String::new(),
            session_id: session.id.to_string(),
            path: shown.clone(),
            kind,
            language: language.map(str::to_string),
            line,
            size: text.len() as u64,
            shown_ms: crate::status::now_ms(),
        },
        text.clone(),
        shelf::Bounds {
            per_session: numbers.kept_per_session,
            total_bytes: numbers.kept_total_bytes,
        },
    );
    engine.device_event(DeviceEvent::Shown {
        session_id: kept.session_id.as_str().into(),
        id: kept.id.clone(),
        path: kept.path.clone(),
        file_kind: kept.kind,
        language: kept.language.clone(),
        line,
        size: kept.size,
    });
    let params = ShowRequest {
        session_id: session.id.clone(),
        tool_call_id: tool_call_id.to_string(),
        path: shown.clone(),
        kind,
        language: language.map(str::to_string),
        line,
        text: text.to_string(),
    };
    let wait = Duration::from_secs(numbers.client_wait_seconds);
    match tokio::time::timeout(wait, client.request(LinkMethod::Show, json!(params))).await {
        Ok(Ok(Ok(result))) => answered(result, &shown),
        Ok(Ok(Err(error))) => failed(format!(
            "{shown} was not shown: the client answered with an error ({}).",
            error.message
        )),
        Ok(Err(_closed)) => failed(format!(
            "{shown} was not shown: the link to the client ended before it answered."
        )),
        Err(_) => failed(format!(
            "{shown} was not shown: the client did not answer within {} seconds.",
            wait.as_secs()
        )),
    }
}

/// The client's `{ shown, reason }` as the model reads it; an answer of another shape is not shown.
fn answered(result: Value, shown: &str) -> ToolOutput {
    let answer = serde_json::from_value::<ShowAnswer>(result).ok();
    if answer.as_ref().is_some_and(|a| a.shown) {
        return ToolOutput {
            text: format!("{shown} is shown to the person in their viewer."),
            is_error: false,
            diff: None,
        };
    }
    let reason = answer
        .and_then(|a| a.reason)
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "the client gave no reason".to_string());
    failed(format!("{shown} was not shown: {reason}"))
}

fn failed(text: String) -> ToolOutput {
    ToolOutput {
        text,
        is_error: true,
        diff: None,
    }
}

/// The file's text, or a sentence saying why it is not shown: a folder, past the limit (read no
/// further than one byte beyond it, so a file growing meanwhile cannot slip through), binary.
fn read_text(path: &Path, shown: &str, decisions: &Decisions) -> Result<String, String> {
    let most = decisions.show.max_bytes;
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{shown} does not exist."),
        std::io::ErrorKind::PermissionDenied => {
            format!("{shown} cannot be shown: permission denied.")
        }
        _ => format!("{shown} cannot be shown: {e}."),
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if metadata.is_dir() {
        return Err(format!("{shown} is a folder: show takes a file."));
    }
    let too_big = |size: u64| {
        format!(
            "{shown} is {size} bytes; show sends at most {most} bytes (1 MB), so it was not shown. \
             Say where the file is, or show a smaller part of it written to a file of its own."
        )
    };
    if metadata.len() > most {
        return Err(too_big(metadata.len()));
    }
    let mut bytes = Vec::new();
    // Opened as the tools open files: only a regular file, checked to be where it was planned.
    crate::tools::opened::open_file(path)
        .and_then(|file| file.take(most + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() as u64 > most {
        return Err(too_big(bytes.len() as u64));
    }
    let probe = decisions.tools.binary_check_bytes.min(bytes.len());
    let binary = format!("{shown} is a binary file: show only shows text.");
    if bytes[..probe].contains(&0) {
        return Err(binary);
    }
    String::from_utf8(bytes).map_err(|_| binary)
}

/// A path as the client is sent it: relative to the session's folder when inside it.
fn relative(path: &Path, project: &Path) -> String {
    match path.strip_prefix(project) {
        Ok(rest) if !rest.as_os_str().is_empty() => rest.to_string_lossy().replace('\\', "/"),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_or_refused_with_a_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let most = Decisions::built_in().show.max_bytes as usize;
        let exact = dir.path().join("exact.txt");
        std::fs::write(&exact, "a".repeat(most)).unwrap();
        assert_eq!(
            read_text(&exact, "exact.txt", Decisions::built_in()).map(|t| t.len()),
            Ok(most)
        );
        let over = dir.path().join("over.txt");
        std::fs::write(&over, "a".repeat(most + 1)).unwrap();
        let said = read_text(&over, "over.txt", Decisions::built_in()).unwrap_err();
        assert!(
            said.contains("1048577 bytes") && said.contains("at most 1048576"),
            "{said}"
        );
        let binary = dir.path().join("b.bin");
        std::fs::write(&binary, [0x50u8, 0x4b, 0, 1]).unwrap();
        assert!(
            read_text(&binary, "b.bin", Decisions::built_in())
                .unwrap_err()
                .contains("binary")
        );
        let latin1 = dir.path().join("l.txt");
        std::fs::write(&latin1, [b'c', b'a', b'f', 0xe9]).unwrap();
        assert!(
            read_text(&latin1, "l.txt", Decisions::built_in())
                .unwrap_err()
                .contains("binary")
        );
        assert!(
            read_text(dir.path(), "d", Decisions::built_in())
                .unwrap_err()
                .contains("folder")
        );
        let missing = dir.path().join("none.md");
        assert!(
            read_text(&missing, "none.md", Decisions::built_in())
                .unwrap_err()
                .contains("does not exist")
        );
    }

    #[test]
    fn line_must_be_positive() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap();
        let ctx = ToolContext {
            project: project.clone(),
            roots: vec![project.clone()],
            protected: crate::policy::protected::Protected::under_home(&project.join("home")),
            copies: None,
            additional: Vec::new(),
            numbers: &crate::decisions::Decisions::built_in().tools,
        };
        let (planned, line, _) = plan(r#"{"path":"a.md","line":3}"#, &ctx).unwrap();
        assert_eq!((planned.title.as_str(), line), ("Show a.md", Some(3)));
        assert_eq!(planned.path, project.join("a.md"));
        for bad in [
            r#"{"path":"a.md","line":0}"#,
            r#"{"path":"a.md","line":"x"}"#,
            r#"{"line":1}"#,
            "nope",
        ] {
            assert!(plan(bad, &ctx).is_err(), "{bad}");
        }
    }
}
