//! An editor's pickers (ACP's session config options, `lembas serve --stdio` only): the session's
//! model, among the chat models the instance serves to this device, and its effort, each a select
//! in `session/new`, `session/load` and `session/resume`'s answers, changed with
//! `session/set_config_option` (the link has `_lembas/configure` for the same).

use lembas_protocol::Effort;
use lembas_protocol::session::{
    ConfigChoice, ConfigOption, ConfigOptions, ConfigValue, SetConfigOptionParams,
};

use super::Engine;
use super::session::{Session, Settings};
use super::session_access::{check_model, choose_model, held};
use crate::rpc::RpcError;

const MODEL: &str = "model";
const EFFORT: &str = "effort";

/// The session's options as they are now. The model's choices are those the instance serves; where
/// they cannot be read, the session's own model is the one choice.
pub async fn options(engine: &Engine, session: &Session) -> Vec<ConfigOption> {
    let Settings { model, effort, .. } = session.settings();
    let mut models = match engine.instance().await {
        Ok(instance) => instance.chat_models().await.unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    if !models.contains(&model) {
        models.insert(0, model.clone());
    }
    let choices = |values: &mut dyn Iterator<Item = &str>| {
        values
            .map(|value| ConfigChoice {
                value: value.to_string(),
                name: value.to_string(),
            })
            .collect()
    };
    let select = |id: &str, name: &str, category: &str, current_value: String, options| ConfigOption {
        id: id.to_string(),
        name: name.to_string(),
        category: Some(category.to_string()),
        kind: "select".to_string(),
        current_value,
        options,
    };
    vec![
        select(
            MODEL,
            "Model",
            "model",
            model,
            choices(&mut models.iter().map(String::as_str)),
        ),
        select(
            EFFORT,
            "Effort",
            "thought_level",
            effort.to_string(),
            choices(&mut Effort::ALL.into_iter().map(Effort::as_str)),
        ),
    ]
}

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
