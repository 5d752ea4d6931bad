//! An editor's pickers (ACP's session config options, `lembas serve --stdio` only): the session's
//! model, among the chat models the instance serves to this device, and its effort, each a select
//! in `session/new`, `session/load` and `session/resume`'s answers, changed with
//! `session/set_config_option` (the link has `_lembas/configure` for the same). What they are now
//! is `config_choices`'.

use lembas_protocol::Effort;
use lembas_protocol::session::{ConfigOptions, ConfigValue, SetConfigOptionParams};

use super::Engine;
use super::config_choices::{EFFORT, MODEL, options};
use super::session_access::{check_model, choose_model, held};
use crate::rpc::RpcError;

/// `session/set_config_option { sessionId, configId, value }`: the model (one the instance serves,
/// in any name it goes by) or the effort; the model event follows a change, and the answer is
/// every option as it is now.
pub async fn set(engine: &Engine, params: SetConfigOptionParams) -> Result<ConfigOptions, RpcError> {
    let session = held(engine, &params.session_id)?;
    let ConfigValue::Id(value) = &params.value else {
        return Err(RpcError::invalid_params(format!(
            "The value of {} must be one of its options' values.",
            params.config_id
        )));
    };
    let value = value.as_str();
    let (model, effort) = match params.config_id.as_str() {
        MODEL => (Some(check_model(engine, value).await?), None),
        EFFORT => (
            None,
            Some(value.parse::<Effort>().map_err(RpcError::invalid_params)?),
        ),
        other => {
            return Err(RpcError::invalid_params(format!(
                "This agent has no option {other:?}: its options are {MODEL} and {EFFORT}."
            )));
        }
    };
    choose_model(engine, &session, model, effort).await;
    Ok(ConfigOptions {
        config_options: options(engine, &session).await,
    })
}
