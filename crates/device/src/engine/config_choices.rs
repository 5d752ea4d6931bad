//! An editor's pickers as they are now (ACP's session config options): the session's model, among
//! the chat models the instance serves to this device, and its effort. Told in the answers that
//! open a session, in `session/set_config_option`'s, and in `config_option_update` when either
//! changes for any reason.

use lembas_protocol::Effort;
use lembas_protocol::session::{ConfigChoice, ConfigOption};

use super::Engine;
use super::session::{Session, Settings};

pub(crate) const MODEL: &str = "model";
pub(crate) const EFFORT: &str = "effort";

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
