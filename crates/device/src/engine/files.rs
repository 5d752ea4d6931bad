//! Capability `files` on the link: `_lembas/files/search` (the web composer's @ picker) and the
//! `@path` mentions in a prompt's text, both over the session's folder (`crate::files`).

use std::path::{Path, PathBuf};

use super::Engine;
use super::session::Session;
use super::session_access::{held, judge_cwd};
use crate::files::mention::{self, Attached, Scope};
use crate::rpc::RpcError;
use lembas_protocol::SessionId;
use lembas_protocol::composer::{FilesFound, FilesSearchParams, FoundFile};

/// `_lembas/files/search`: the files of a session's folder (or a folder's) whose paths match what
/// was typed after `@`.
pub async fn search(engine: &Engine, params: FilesSearchParams) -> Result<FilesFound, RpcError> {
    let FilesSearchParams {
        session_id,
        cwd,
        query,
        limit,
    } = params;
    let (root, session) = searched(engine, session_id, cwd)?;
    search_under(engine, root, session, query, limit).await
}

/// The search of `root` (a session's folder, judged by the caller), the session's recent files
/// first when there is one.
pub(crate) async fn search_under(
    engine: &Engine,
    root: PathBuf,
    session: Option<SessionId>,
    query: String,
    limit: Option<u64>,
) -> Result<FilesFound, RpcError> {
    let numbers = &engine.setup().decisions.files;
    let limit = match limit {
        None => numbers.search_default_limit,
        Some(0) => {
            return Err(RpcError::invalid_params(format!(
                "limit must be a whole number from 1 to {} (default {}).",
                numbers.search_max_limit, numbers.search_default_limit
            )));
        }
        Some(n) => usize::try_from(n)
            .unwrap_or(usize::MAX)
            .min(numbers.search_max_limit),
    };
    let protected = engine.setup().dirs.protected_places();
    let engine2 = engine.clone();
    let (root2, session2) = (root.clone(), session.clone());
    let found = tokio::task::spawn_blocking(move || {
        engine2
            .files()
            .search(&root2, &protected, session2.as_deref(), &query, limit)
    })
    .await
    .map_err(|e| RpcError::internal(format!("The file search stopped unexpectedly: {e}.")))?;
    Ok(FilesFound {
        root: root.display().to_string(),
        files: found
            .iter()
            .map(|e| FoundFile {
                path: e.path.clone(),
                kind: e.kind.as_str().to_string(),
            })
            .collect(),
    })
}

/// The folder searched: the session's (judged again, as a prompt would be), or `cwd` under
/// session/new's rules; with the session's id when there is one.
fn searched(
    engine: &Engine,
    session_id: Option<SessionId>,
    cwd: Option<String>,
) -> Result<(PathBuf, Option<SessionId>), RpcError> {
    match (session_id, cwd) {
        (Some(id), _) => {
            let session = held(engine, &id)?;
            Ok((session.cwd.clone(), Some(id)))
        }
        (None, Some(cwd)) => Ok((judge_cwd(engine, Path::new(&cwd))?, None)),
        _ => Err(RpcError::invalid_params(
            "Name the folder to search: sessionId (a session of this device) or cwd (an absolute folder).",
        )),
    }
}

/// The `@path` mentions in `typed` (the person's own text blocks, never a command's text)
/// attached from the session's folder; each file attached counts as used by the session.
pub async fn attach(engine: &Engine, session: &Session, typed: Vec<String>) -> Vec<Attached> {
    if !typed.iter().any(|t| t.contains('@')) {
        return Vec::new();
    }
    let ctx = engine.tool_context(session);
    let decisions = engine.setup().decisions;
    let attached = tokio::task::spawn_blocking(move || {
        let texts: Vec<&str> = typed.iter().map(String::as_str).collect();
        let scope = Scope {
            root: &ctx.project,
            roots: &ctx.roots,
            protected: &ctx.protected,
            decisions,
        };
        mention::attach(&texts, &scope)
    })
    .await
    .unwrap_or_default();
    for a in &attached {
        engine.files().used(&session.id, &a.resolved);
    }
    attached
}
