//! `terminals/*`: the remote terminals open on this computer, for its own window, which shows the
//! same screen as the instance and may hang a terminal up or, when the person says so, type into it.

use base64::Engine as _;
use lembas_protocol::{ControlMethod, Reason};
use serde_json::Value;

use super::calls::{call, notification, push, serve_call};
use super::params::{Replay, TerminalEnded, TerminalParams, TerminalShown, TerminalWriteParams};
use crate::rpc::RpcError;
use crate::terminal::board::{Board, Shown, WriteError};
use lembas_protocol::session::Empty;

/// A `terminals/*` request.
pub(super) async fn request(board: &Board, method: ControlMethod, params: Value) -> Result<Value, RpcError> {
    match method {
        ControlMethod::TerminalsList => {
            serve_call(call::TerminalsList, params, |_| async { Ok(board.list()) }).await
        }
        ControlMethod::TerminalsReplay => {
            serve_call(call::TerminalsReplay, params, |asked| async {
                replay(board, asked)
            })
            .await
        }
        ControlMethod::TerminalsHangUp => {
            serve_call(call::TerminalsHangUp, params, |asked| async {
                hang_up(board, asked)
            })
            .await
        }
        ControlMethod::TerminalsWrite => {
            serve_call(call::TerminalsWrite, params, |asked| write(board, asked)).await
        }
        other => Err(RpcError::method_not_found(other.name())),
    }
}

fn replay(board: &Board, asked: TerminalParams) -> Result<Replay, RpcError> {
    let (bytes, end) = board.replay(&asked.id).ok_or_else(|| not_open(&asked.id))?;
    Ok(Replay {
        id: asked.id,
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
        offset: end,
    })
}

fn hang_up(board: &Board, asked: TerminalParams) -> Result<TerminalParams, RpcError> {
    if !board.hang_up(&asked.id) {
        return Err(not_open(&asked.id));
    }
    Ok(asked)
}

async fn write(board: &Board, asked: TerminalWriteParams) -> Result<Empty, RpcError> {
    if asked.data.is_empty() {
        return Ok(Empty {});
    }
    match board.write(&asked.id, asked.data.into_bytes()).await {
        Ok(()) => Ok(Empty {}),
        Err(WriteError::NotOpen) => Err(not_open(&asked.id)),
        Err(WriteError::Ended) => Err(RpcError::invalid_params(format!(
            "The terminal {} has ended: nothing was typed.",
            asked.id
        ))),
    }
}

fn not_open(id: &str) -> RpcError {
    RpcError::refused(
        format!("No terminal {id} is open on this computer (terminals/list says which are)."),
        Reason::NotOpen,
    )
}

/// The push a subscriber gets for what the board showed.
pub(super) fn push(shown: Shown) -> String {
    match shown {
        Shown::Output { id, offset, data } => {
            let shown = TerminalShown {
                id: id.to_string(),
                offset,
                data: base64::engine::general_purpose::STANDARD.encode(&data),
            };
            notification(push::TerminalOutput, &shown)
        }
        Shown::Exit { id, code } => {
            let ended = TerminalEnded {
                id: id.to_string(),
                code,
            };
            notification(push::TerminalExit, &ended)
        }
    }
}
