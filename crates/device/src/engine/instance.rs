//! The instance as the engine reaches it over HTTP: its API with the device's token (read from the
//! keychain once, forgotten when refused), and what it says of itself (`/api/v1/instance`: its
//! name, the token's scope, the default model), read once for all three. An engine built with a
//! scripted model reaches that instead, with no login.

use std::time::{Duration, Instant};

use super::{Engine, model};

/// How long what the instance said of itself is used before it is read again (a default model or
/// a scope changed on the instance shows within this).
const ABOUT_FRESH: Duration = Duration::from_secs(300);

impl Engine {
    /// `/api/v1/instance`, read once per server and kept for [`ABOUT_FRESH`] (or until the token
    /// is forgotten); a failed read is not kept. Sessions starting together wait for one read.
    pub(crate) async fn about(&self, instance: &model::Instance) -> Result<model::About, String> {
        let model::Instance::Http(instance) = instance else {
            return instance.about().await;
        };
        let mut known = self.0.about.lock().await;
        if let Some((base, at, about)) = known.as_ref()
            && *base == instance.base
            && at.elapsed() < ABOUT_FRESH
        {
            return Ok(about.clone());
        }
        let about = instance.about().await?;
        *known = Some((instance.base.clone(), Instant::now(), about.clone()));
        Ok(about)
    }

    /// How the system text names the instance: its own name (`/api/v1/instance`); else the
    /// login's connection; else "the instance".
    pub(crate) async fn instance_name(&self, instance: &model::Instance) -> String {
        match self.about(instance).await {
            Ok(model::About { name: Some(name), .. }) => name,
            _ => self
                .settings()
                .server
                .as_ref()
                .and_then(|s| s.connection.clone())
                .unwrap_or_else(|| "the instance".to_string()),
        }
    }

    /// The instance's API with the device's token (read from the keychain once, then kept); the
    /// script, for an engine built with one.
    pub(crate) async fn instance(&self) -> Result<model::Instance, String> {
        if let Some(script) = &self.0.scripted {
            return Ok(model::Instance::Scripted(script.clone()));
        }
        let settings = self.settings();
        let server = settings
            .server
            .as_ref()
            .ok_or("this device is not logged in to an instance")?;
        let base = crate::discovery::server_url(&server.url).map_err(|e| e.to_string())?;
        let mut token = self.0.token.lock().await;
        if token.is_none() {
            let keychain = self.0.setup.keychain.clone();
            let loaded = tokio::task::spawn_blocking(move || keychain.load())
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
            *token = Some(loaded);
        }
        let token = token.clone().ok_or("no token")?;
        Ok(model::Instance::Http(model::HttpInstance {
            http: self.0.http.clone(),
            base,
            token,
        }))
    }

    /// Why the instance cannot be used now (no server in the config, no token); `None` when it can.
    pub async fn login_error(&self) -> Option<String> {
        self.instance().await.err()
    }

    pub(crate) async fn forget_token(&self) {
        *self.0.token.lock().await = None;
        // A new login may bring a token with another scope.
        *self.0.about.lock().await = None;
    }
}
