//! `terminals/*`: the remote terminals open on this computer, for its own window, which shows the
//! same screen as the instance and may hang a terminal up or, when the person says so, type into it.

use base64::Engine as _;
use lembas_protocol::{ControlMethod, ControlPush, Reason};
use serde_json::{Value, json};

use super::params::{TerminalParams, TerminalWriteParams};
use crate::rpc::{self, RpcError};
use crate::terminal::board::{Board, Shown, WriteError};

/// A `terminals/*` request; `None` when the method is not one of them.
pub(super) async fn request(board: &Board, method: ControlMethod, params: Value) -> Result<Value, RpcError> {
    let name = method.name();
    match method {
        ControlMethod::TerminalsList => Ok(json!(board.list())),
        ControlMethod::TerminalsReplay => replay(board, name, params),
        ControlMethod::TerminalsHangUp => hang_up(board, name, params),
        ControlMethod::TerminalsWrite => write(board, name, params).await,
        other => Err(RpcError::method_not_found(other.name())),
    }
}

fn replay(board: &Board, method: &str, params: Value) -> Result<Value, RpcError> {
    let asked: TerminalParams = rpc::params(method, params)?;
    let (bytes, end) = board.replay(&asked.id).ok_or_else(|| not_open(&asked.id))?;
    Ok(json!({
        "id": asked.id,
        "data": base64::engine::general_purpose::STANDARD.encode(&bytes),
        "offset": end,
    }))
}

fn hang_up(board: &Board, method: &str, params: Value) -> Result<Value, RpcError> {
    let asked: TerminalParams = rpc::params(method, params)?;
    if !board.hang_up(&asked.id) {
        return Err(not_open(&asked.id));
    }
    Ok(json!({ "id": asked.id }))
}

async fn write(board: &Board, method: &str, params: Value) -> Result<Value, RpcError> {
    let asked: TerminalWriteParams = rpc::params(method, params)?;
    if asked.data.is_empty() {
        return Ok(json!({}));
    }
    match board.write(&asked.id, asked.data.into_bytes()).await {
        Ok(()) => Ok(json!({})),
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
        Shown::Output { id, offset, data } => rpc::notification(
            ControlPush::TerminalOutput.name(),
            json!({
                "id": &*id,
                "offset": offset,
                "data": base64::engine::general_purpose::STANDARD.encode(&data),
            }),
        ),
        Shown::Exit { id, code } => rpc::notification(
            ControlPush::TerminalExit.name(),
            json!({ "id": &*id, "code": code }),
        ),
    }
}
