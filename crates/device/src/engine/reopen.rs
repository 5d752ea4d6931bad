//! An editor's past chats (`lembas serve --stdio` only; the link keeps the spec's own methods):
//! ACP's `session/list` (the stored sessions, by folder, a page at a time), `session/load` (a
//! stored session opened and its history replayed as `session/update`s before the answer),
//! `session/resume` (opened, no history) and `session/close` (let go of here).

use std::path::Path;
use std::sync::Arc;

use super::Engine;
use super::mcp_servers::SessionServers;
use super::session::{Session, Settings};
use super::session_access::{judge_additional, modes, opened};
use crate::rpc::RpcError;
use crate::store::ids;
use crate::utc::rfc3339 as utc;
use lembas_protocol::content::ContentBlock;
use lembas_protocol::mcp::McpServer;
use lembas_protocol::session::{
    Empty, HistoryTurn, ListParams, McpReport, OpenSessionParams, OpenedSession, SessionInfo, SessionList,
    SessionRef, SessionSettings,
};
use lembas_protocol::update::{SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolKind};

/// Sessions on one page of `session/list`.
const PAGE: usize = 50;

/// `session/list { cwd?, cursor? }`: the latest first.
pub async fn list(engine: &Engine, params: ListParams) -> Result<SessionList, RpcError> {
    let start = match params.cursor.as_deref() {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("after-")
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "The cursor {cursor:?} is not one this agent gave: list from the start, without a cursor."
                ))
            })?,
    };
    let folder = params.cwd.as_deref().map(resolved);
    let store = engine.store().clone();
    let mut stored = tokio::task::spawn_blocking(move || store.list())
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
        .map_err(|e| RpcError::internal(format!("The stored sessions cannot be read: {e}.")))?;
    stored.retain(|s| folder.as_ref().is_none_or(|f| resolved(&s.cwd) == *f));
    stored.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| a.id.cmp(&b.id)));
    let sessions = stored
        .iter()
        .skip(start)
        .take(PAGE)
        .map(|s| SessionInfo {
            session_id: s.id.as_str().into(),
            cwd: s.cwd.clone(),
            title: (!s.title.is_empty()).then(|| s.title.clone()),
            updated_at: utc(s.updated_ms),
        })
        .collect();
    Ok(SessionList {
        sessions,
        next_cursor: (stored.len() > start + PAGE).then(|| format!("after-{}", start + PAGE)),
    })
}

fn resolved(folder: &str) -> std::path::PathBuf {
    crate::paths::resolved(Path::new(folder))
}

/// `session/load { sessionId, cwd, mcpServers }`: the session opened from the store (or already
/// open here), its history sent as `session/update`s, then the answer.
pub async fn load(engine: &Engine, params: OpenSessionParams) -> Result<OpenedSession, RpcError> {
    let servers = params.mcp_servers.clone().unwrap_or_default();
    let session = open_in_its_folder(engine, params)?;
    let report = with_servers(engine, &session, servers).await;
    let history = session.history();
    for update in replayed(&history.turns) {
        engine.update(&session.id, update).await;
    }
    Ok(answer(engine, &session, report).await)
}

pub async fn resume(engine: &Engine, params: OpenSessionParams) -> Result<OpenedSession, RpcError> {
    let servers = params.mcp_servers.clone().unwrap_or_default();
    let session = open_in_its_folder(engine, params)?;
    let report = with_servers(engine, &session, servers).await;
    Ok(answer(engine, &session, report).await)
}

async fn with_servers(engine: &Engine, session: &Session, servers: Vec<McpServer>) -> Option<Vec<McpReport>> {
    if !engine.serves_editor() {
        return None;
    }
    if session.has_mcp_servers() {
        return session.mcp_report();
    }
    let started = Arc::new(
        SessionServers::start(
            &engine.0.http,
            &session.cwd,
            servers,
            &engine.setup().decisions.mcp,
        )
        .await,
    );
    Some(session.keep_mcp_servers(started))
}

/// What `$/cancel_request` needs to leave nothing half done (crate::request_cancel).
impl Engine {
    /// The session `id` is open in this process.
    pub fn is_open(&self, id: &str) -> bool {
        self.sessions().contains_key(id)
    }

    /// The running turn of `id` cancelled, as `session/cancel` does.
    pub fn cancel_turn_of(&self, id: &str) {
        let session = self.sessions().get(id).cloned();
        if let Some(session) = session {
            session.cancel();
        }
    }

    /// The session `id` let go of here as `session/close` does, if it is open.
    pub fn let_go(&self, id: &str) {
        let _ = close(
            self,
            SessionRef {
                session_id: id.into(),
            },
        );
    }

    /// A session made by a `session/new` that was cancelled: removed again, with its files.
    pub async fn unmake(&self, id: &str) {
        if let Err(e) = super::delete::delete_session(self, id, super::delete::OtherHolder::Refuse).await {
            tracing::warn!(session = id, "a cancelled session/new left its session: {e}");
        }
    }
}

pub fn close(engine: &Engine, params: SessionRef) -> Result<Empty, RpcError> {
    let closed = engine.sessions().remove(&params.session_id);
    match closed {
        Some(session) => {
            session.cancel();
            session.stop_jobs();
            session.stop_mcp_servers();
            Ok(Empty {})
        }
        None => Err(RpcError::invalid_params(format!(
            "{} is not open here: nothing to close.",
            params.session_id
        ))),
    }
}

fn open_in_its_folder(engine: &Engine, params: OpenSessionParams) -> Result<Arc<Session>, RpcError> {
    // Judged before the session is opened: a folder refused leaves it as it was.
    let additional = judge_additional(engine, &params.additional_directories)?;
    let id = params.session_id;
    let known = engine.sessions().contains_key(&id);
    if !known && (!ids::is_session_id(&id) || !engine.store().exists(&id)) {
        return Err(RpcError::invalid_params(format!(
            "There is no session {id} on this computer to open (session/list says which there are)."
        )));
    }
    let session = opened(engine, &id)?;
    if resolved(&params.cwd) != session.cwd {
        return Err(RpcError::invalid_params(format!(
            "{id} belongs to {}, not {}: open it in its own folder.",
            session.cwd.display(),
            params.cwd
        )));
    }
    session.set_additional_dirs(additional);
    Ok(session)
}

/// What `session/load` and `session/resume` answer: the modes, the pickers, and the session's
/// model.
async fn answer(engine: &Engine, session: &Session, mcp_servers: Option<Vec<McpReport>>) -> OpenedSession {
    let Settings { model, mode, effort } = session.settings();
    OpenedSession {
        modes: modes(mode, engine.settings().remote.max_mode),
        config_options: super::config_choices::options(engine, session).await,
        meta: SessionSettings::of(model, mode, effort, mcp_servers),
    }
}

/// The history's turns as the `session/update`s a client draws them from, in order.
pub fn replayed(turns: &[HistoryTurn]) -> Vec<SessionUpdate> {
    let said = |text: &str| (!text.is_empty()).then(|| ContentBlock::text(text));
    let mut updates = Vec::new();
    for turn in turns {
        match turn {
            HistoryTurn::User { text, .. } => updates.extend(said(text).map(SessionUpdate::user)),
            HistoryTurn::Assistant {
                text,
                reasoning,
                tools,
            } => {
                updates.extend(said(reasoning).map(SessionUpdate::thought));
                updates.extend(tools.iter().map(|tool| {
                    SessionUpdate::ToolCall(ToolCall {
                        tool_call_id: tool.id.clone(),
                        title: tool.name.clone(),
                        kind: kind_of(&tool.name),
                        status: ToolCallStatus::ended(tool.is_error),
                        raw_input: tool.args.clone(),
                        content: tool.output.iter().map(ToolCallContent::text).collect(),
                        locations: Vec::new(),
                    })
                }));
                updates.extend(said(text).map(SessionUpdate::agent));
            }
        }
    }
    updates
}

/// ACP's tool kind for a tool of this engine, by its name.
fn kind_of(name: &str) -> ToolKind {
    match name {
        "read" => ToolKind::Read,
        "ls" | "glob" | "grep" => ToolKind::Search,
        "write" | "edit" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        _ => ToolKind::Think,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_history_replays_as_the_updates_a_client_draws() {
        let turns = json!([
            { "role": "user", "text": "fix it", "turnId": "t1" },
            { "role": "assistant", "text": "Fixed.", "reasoning": "look first", "tools": [
                { "id": "c1", "name": "read", "args": { "path": "a.rs" }, "output": "fn a() {}" },
                { "id": "c2", "name": "bash", "args": { "command": "false" }, "isError": true },
            ] },
        ]);
        let turns: Vec<HistoryTurn> = serde_json::from_value(turns).unwrap();
        let updates: Vec<Value> = replayed(&turns).iter().map(|u| json!(u)).collect();
        let kinds: Vec<String> = updates
            .iter()
            .map(|u| {
                format!(
                    "{} {}",
                    u["sessionUpdate"].as_str().unwrap(),
                    u["status"].as_str().unwrap_or("")
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "user_message_chunk ",
                "agent_thought_chunk ",
                "tool_call completed",
                "tool_call failed",
                "agent_message_chunk "
            ]
        );
        assert_eq!(updates[2]["kind"], "read");
        assert_eq!(updates[2]["content"][0]["content"]["text"], "fn a() {}");
        assert_eq!(updates[3]["kind"], "execute");
        assert_eq!(updates[4]["content"], json!({ "type": "text", "text": "Fixed." }));
    }

    #[test]
    fn moments_are_rfc_3339_in_utc() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(1_764_892_800_123), "2025-12-05T00:00:00Z");
        assert_eq!(utc(951_782_400_000 + 3_723_000), "2000-02-29T01:02:03Z");
    }
}
