//! `chat/*`: a chat at this computer (`lembas chat`, the window's composer; the spec's
//! "terminal"), held by the control connection that opened it until `chat/close` or until the
//! connection ends. Its turns run in this runtime as every session's do; shared, the instance sees
//! it too (ENGINE.md "Chats started at this computer").

pub mod params;

use lembas_protocol::ControlMethod;
use serde_json::Value;

use super::calls::{call, serve_call};
use super::runtime_handles::RuntimeHandles;
use crate::rpc::RpcError;

/// A `chat/*` request of one connection.
pub(super) async fn request(
    _parts: &RuntimeHandles,
    method: ControlMethod,
    params: Value,
) -> Result<Value, RpcError> {
    use ControlMethod as M;
    match method {
        M::ChatOpen => serve_call(call::ChatOpen, params, |_| not_built(method)).await,
        M::ChatPrompt => serve_call(call::ChatPrompt, params, |_| not_built(method)).await,
        M::ChatSteer => serve_call(call::ChatSteer, params, |_| not_built(method)).await,
        M::ChatShare => serve_call(call::ChatShare, params, |_| not_built(method)).await,
        M::ChatClose => serve_call(call::ChatClose, params, |_| not_built(method)).await,
        M::ChatConfigure => serve_call(call::ChatConfigure, params, |_| not_built(method)).await,
        M::ChatModels => serve_call(call::ChatModels, params, |_| not_built(method)).await,
        M::ChatAnswer => serve_call(call::ChatAnswer, params, |_| not_built(method)).await,
        M::ChatFiles => serve_call(call::ChatFiles, params, |_| not_built(method)).await,
        M::ChatCommands => serve_call(call::ChatCommands, params, |_| not_built(method)).await,
        other => Err(RpcError::method_not_found(other.name())),
    }
}

async fn not_built<T>(method: ControlMethod) -> Result<T, RpcError> {
    Err(RpcError::internal(format!(
        "{} is not built yet in this runtime.",
        method.name()
    )))
}
