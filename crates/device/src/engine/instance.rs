//! The instance as the engine reaches it over HTTP: its API with the device's token (read from the
//! keychain once, forgotten when refused), and the name it gives itself.

use super::{Engine, model};
use crate::keychain;

impl Engine {
    /// How the system text names the instance: its own name (`/api/v1/instance`), read once per
    /// server; else the login's connection; else "the instance".
    pub(crate) async fn instance_name(&self, instance: &model::Instance) -> String {
        let mut known = self.0.instance_name.lock().await;
        if let Some((base, name)) = known.as_ref()
            && *base == instance.base
        {
            return name.clone();
        }
        match instance.name().await {
            Ok(Some(name)) => {
                *known = Some((instance.base.clone(), name.clone()));
                name
            }
            // Not cached: the next turn asks again.
            _ => self
                .settings()
                .server
                .as_ref()
                .and_then(|s| s.connection.clone())
                .unwrap_or_else(|| "the instance".to_string()),
        }
    }

    /// The instance's API with the device's token (read from the keychain once, then kept).
    pub(crate) async fn instance(&self) -> Result<model::Instance, String> {
        let settings = self.settings();
        let server = settings
            .server
            .as_ref()
            .ok_or("this device is not logged in to an instance")?;
        let base = crate::discovery::server_url(&server.url).map_err(|e| e.to_string())?;
        let mut token = self.0.token.lock().await;
        if token.is_none() {
            let loaded = tokio::task::spawn_blocking(keychain::load)
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            *token = Some(loaded);
        }
        let token = token.clone().ok_or("no token")?;
        Ok(model::Instance {
            http: self.0.http.clone(),
            base,
            token,
        })
    }

    pub(crate) async fn forget_token(&self) {
        *self.0.token.lock().await = None;
        self.0.memory.forget().await;
    }
}
