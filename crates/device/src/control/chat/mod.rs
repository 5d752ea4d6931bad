//! `chat/*`: a chat at this computer (`lembas chat`, the window's composer; the spec's
//! "terminal"), held by the control connection that opened it until `chat/close` or until the
//! connection ends. Its turns run in this runtime as every session's do; shared, the instance sees
//! it too (ENGINE.md "Chats started at this computer"). The engine keeps who holds what
//! ([`crate::engine::front_end`]); this module reads the params and writes the answers.

pub mod params;

use lembas_protocol::session::Empty;
use lembas_protocol::{ControlMethod, Reason};
use serde_json::Value;

use super::calls::{call, notification, push, serve_call};
use super::runtime_handles::RuntimeHandles;
use crate::engine::Engine;
use crate::engine::front_end::{ChatNews, ChatStart};
use crate::rpc::RpcError;
use params::{
    CardShown, ChatModel, ChatOpened, Configured, JobChanged, OpenParams, Prompted, SharingChanged, Steered,
    TakenDown,
};

/// A `chat/*` request of the connection `connection`.
pub(super) async fn request(
    parts: &RuntimeHandles,
    connection: u64,
    method: ControlMethod,
    params: Value,
) -> Result<Value, RpcError> {
    use ControlMethod as M;
    let engine = &parts.engine;
    match method {
        M::ChatOpen => serve_call(call::ChatOpen, params, |asked| open(engine, connection, asked)).await,
        M::ChatPrompt => {
            serve_call(call::ChatPrompt, params, |asked| async move {
                let turn_id = engine
                    .prompt_from_front_end(connection, &asked.session_id, asked.text, asked.turn_id)
                    .await?;
                Ok(Prompted { turn_id })
            })
            .await
        }
        M::ChatSteer => {
            serve_call(call::ChatSteer, params, |asked| async move {
                let queued = engine.steer_from_front_end(connection, &asked.session_id, asked.text)?;
                Ok(Steered { queued })
            })
            .await
        }
        M::ChatShare => {
            serve_call(call::ChatShare, params, |asked| async move {
                engine
                    .share_chat(connection, &asked.session_id, asked.share, asked.remember)
                    .await
            })
            .await
        }
        M::ChatClose => {
            serve_call(call::ChatClose, params, |asked| async move {
                engine.close_chat(connection, &asked.session_id).await?;
                Ok(Empty {})
            })
            .await
        }
        M::ChatConfigure => {
            serve_call(call::ChatConfigure, params, |asked| async move {
                let (model, mode, effort) = engine
                    .configure_from_front_end(
                        connection,
                        &asked.session_id,
                        asked.model,
                        asked.mode,
                        asked.effort,
                    )
                    .await?;
                Ok(Configured { model, mode, effort })
            })
            .await
        }
        M::ChatModels => {
            serve_call(call::ChatModels, params, |_| async move {
                let models = engine.models_for_front_end().await?;
                Ok(models
                    .into_iter()
                    .map(|id| ChatModel { name: id.clone(), id })
                    .collect())
            })
            .await
        }
        M::ChatAnswer => {
            serve_call(call::ChatAnswer, params, |asked| async move {
                engine.held_by(connection, &asked.session_id)?;
                if engine
                    .answer_from_front_end(&asked.session_id, &asked.tool_call_id, asked.answer)
                    .await
                {
                    return Ok(Empty {});
                }
                Err(RpcError::refused(
                    format!(
                        "No card {} waits for an answer: it was already answered, timed out or withdrawn.",
                        asked.tool_call_id
                    ),
                    Reason::NotOpen,
                ))
            })
            .await
        }
        M::ChatFiles => {
            serve_call(call::ChatFiles, params, |asked| {
                engine.files_for_front_end(connection, asked)
            })
            .await
        }
        M::ChatCommands => {
            serve_call(call::ChatCommands, params, |asked| {
                engine.commands_for_front_end(connection, asked)
            })
            .await
        }
        other => Err(RpcError::method_not_found(other.name())),
    }
}

async fn open(engine: &Engine, connection: u64, asked: OpenParams) -> Result<ChatOpened, RpcError> {
    let start = ChatStart {
        cwd: asked.cwd,
        session_id: asked.session_id,
        latest: asked.latest,
        model: asked.model,
        share: asked.share,
    };
    let opened = engine.open_chat(connection, start).await?;
    let id = opened.session_id.clone();
    let timeline = {
        let (engine, id) = (engine.clone(), id.clone());
        tokio::task::spawn_blocking(move || engine.timeline(&id))
            .await
            .map_err(|e| RpcError::internal(e.to_string()))??
    };
    let commands = engine
        .commands_for_front_end(
            connection,
            lembas_protocol::composer::FolderParams {
                session_id: Some(id.as_str().into()),
                cwd: None,
            },
        )
        .await
        .map(|list| list.commands)
        .unwrap_or_default();
    Ok(ChatOpened {
        session_id: id,
        cwd: opened.cwd,
        title: opened.title,
        model: opened.model,
        mode: opened.mode,
        max_mode: engine.settings().remote.max_mode,
        effort: opened.effort,
        sharing: opened.sharing,
        timeline,
        commands,
    })
}

/// The push a subscriber gets for a card opened, settled, or a chat's sharing changed.
pub(super) fn push(news: ChatNews) -> String {
    match news {
        ChatNews::Card { session_id, card } => notification(
            push::Card,
            &CardShown {
                session_id,
                card: *card,
            },
        ),
        ChatNews::Settled {
            session_id,
            tool_call_id,
            by,
        } => notification(
            push::CardSettled,
            &TakenDown {
                session_id,
                tool_call_id,
                by,
            },
        ),
        ChatNews::Sharing { session_id, sharing } => {
            notification(push::ChatSharing, &SharingChanged { session_id, sharing })
        }
        ChatNews::Job {
            session_id,
            state,
            job,
        } => notification(
            push::ChatJob,
            &JobChanged {
                session_id,
                state,
                job,
            },
        ),
    }
}
