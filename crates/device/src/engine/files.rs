//! Capability `files` on the link: `_lembas/files/search` (the web composer's @ picker) and the
//! `@path` mentions in a prompt's text, both over the session's folder (`crate::files`).

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use super::Engine;
use super::access::{held, judge_cwd};
use super::session::Session;
use crate::decisions::decisions;
use crate::files::mention::{self, Attached, Scope};
use crate::rpc::RpcError;

/// `_lembas/files/search`: { sessionId?, cwd?, query, limit? } → { root, files: [{ path, kind }] }.
pub async fn search(engine: &Engine, params: Value) -> Result<Value, RpcError> {
    let numbers = &decisions().files;
    let query = params
        .get("query")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            RpcError::invalid_params(
                "query is missing: the text typed after @ (a string; empty for the recent files).",
            )
        })?
        .to_string();
    let limit = match params.get("limit") {
        None | Some(Value::Null) => numbers.search_default_limit,
        Some(v) => v
            .as_u64()
            .filter(|n| *n >= 1)
            .map(|n| (n as usize).min(numbers.search_max_limit))
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "limit must be a whole number from 1 to {} (default {}).",
                    numbers.search_max_limit, numbers.search_default_limit
                ))
            })?,
    };
    let (root, session) = folder(engine, &params)?;
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
    let files: Vec<Value> = found
        .iter()
        .map(|e| json!({ "path": e.path, "kind": e.kind.as_str() }))
        .collect();
    Ok(json!({ "root": root.display().to_string(), "files": files }))
}

/// The folder searched: the session's (judged again, as a prompt would be), or `cwd` under
/// session/new's rules; with the session's id when there is one.
fn folder(engine: &Engine, params: &Value) -> Result<(PathBuf, Option<String>), RpcError> {
    match (params.get("sessionId"), params.get("cwd")) {
        (Some(id), _) if !id.is_null() => {
            let id = id.as_str().ok_or_else(|| {
                RpcError::invalid_params("sessionId must be a string: a session of this device (ses_…).")
            })?;
            let session = held(engine, id)?;
            Ok((session.cwd.clone(), Some(id.to_string())))
        }
        (_, Some(cwd)) if !cwd.is_null() => {
            let cwd = cwd.as_str().ok_or_else(|| {
                RpcError::invalid_params("cwd must be a string: an absolute folder on this computer.")
            })?;
            Ok((judge_cwd(engine, Path::new(cwd))?, None))
        }
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
    let attached = tokio::task::spawn_blocking(move || {
        let texts: Vec<&str> = typed.iter().map(String::as_str).collect();
        let scope = Scope {
            root: &ctx.project,
            roots: &ctx.roots,
            protected: &ctx.protected,
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
