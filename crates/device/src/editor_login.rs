//! An editor's login (`lembas serve --stdio`): ACP's `authMethods`, `authenticate` and `logout`.
//! The device logs in once, with `lembas login`; an editor's `authenticate` reads that login again
//! (the config's server, the keychain's token), so one made in a terminal while the editor was
//! open is used without a restart. `logout` forgets it as `lembas logout` does.

use std::sync::Arc;
use tokio::sync::watch;

use crate::engine::Engine;
use crate::rpc::{self, RpcError};
use crate::settings::{self, Settings};
use crate::setup::Setup;
use lembas_protocol::initialize::{AuthMethod, AuthenticateParams, TerminalAuth};
use lembas_protocol::session::Empty;

/// The id of the agent's own method: the login kept on this computer.
pub const KEYCHAIN_METHOD: &str = "lembas-login";
/// The id of the terminal method: the editor runs `lembas serve --stdio --login` in a terminal.
pub const TERMINAL_METHOD: &str = "lembas-login-terminal";

/// What an editor is told to run when the device is not logged in.
const HOW_TO_LOG_IN: &str = "run lembas login --token-stdin --server <url> in a terminal (the token from your LLeMbas instance's device page), then authenticate again";

/// What `authenticate` and `logout` change: the settings every session reads (the server), and
/// the engine's kept token.
pub struct EditorLogin {
    settings: watch::Sender<Arc<Settings>>,
    /// An editor's settings from the config as read (the person's limits, not the remote ones).
    shape: fn(Settings) -> Settings,
    setup: Setup,
}

impl EditorLogin {
    pub fn new(
        settings: watch::Sender<Arc<Settings>>,
        shape: fn(Settings) -> Settings,
        setup: Setup,
    ) -> Self {
        Self {
            settings,
            shape,
            setup,
        }
    }

    /// `authMethods`: the login kept on this computer, read by the agent itself; and, for a client
    /// that can run one (`terminal`), the login asked for in a terminal (`serve --stdio --login`).
    pub fn methods(&self, terminal: bool) -> Vec<AuthMethod> {
        let mut methods = vec![AuthMethod::Agent {
            id: KEYCHAIN_METHOD.to_string(),
            name: "LLeMbas login on this computer".to_string(),
            description: format!(
                "Uses the login lembas login made (the server in the config, the token in the OS keychain). Not logged in yet: {HOW_TO_LOG_IN}."
            ),
        }];
        if terminal {
            methods.push(AuthMethod::Terminal {
                kind: TerminalAuth::Terminal,
                id: TERMINAL_METHOD.to_string(),
                name: "Log in to LLeMbas in a terminal".to_string(),
                description: "Asks for your LLeMbas instance and the device token from its device page, and keeps the token in the OS keychain.".to_string(),
                args: vec!["--login".to_string()],
            });
        }
        methods
    }

    /// `authenticate { methodId }`: the config and the token read again; -32000 with what to do
    /// when there is no login.
    pub async fn authenticate(&self, engine: &Engine, params: AuthenticateParams) -> Result<Empty, RpcError> {
        if params.method_id == TERMINAL_METHOD {
            return Err(RpcError::invalid_params(format!(
                "{TERMINAL_METHOD} runs in a terminal, not through authenticate: run the agent with --login in a terminal, then authenticate with {KEYCHAIN_METHOD}."
            )));
        }
        if params.method_id != KEYCHAIN_METHOD {
            return Err(RpcError::invalid_params(format!(
                "{} is not a login this agent offers: authenticate with {KEYCHAIN_METHOD}.",
                params.method_id
            )));
        }
        self.reload().await?;
        engine.forget_token().await;
        logged_in(engine).await?;
        Ok(Empty {})
    }

    /// `logout`: the server gone from the config and the token from the keychain, as `lembas
    /// logout` does; sessions after it need a new login.
    pub async fn logout(&self, engine: &Engine) -> Result<Empty, RpcError> {
        let done = crate::login::logout(&self.setup).await;
        // Whatever was removed is no longer used, even when a part of it could not be.
        let reloaded = self.reload().await;
        engine.forget_token().await;
        done.map_err(|e| RpcError::internal(format!("The login could not be forgotten wholly: {e}.")))?;
        reloaded.map(|()| Empty {})
    }

    /// Before a session starts: Ok when logged in; else the config and token read again (a login
    /// made meanwhile, in the editor's terminal say), and auth-required when there is still none.
    pub async fn require(&self, engine: &Engine) -> Result<(), RpcError> {
        if logged_in(engine).await.is_ok() {
            return Ok(());
        }
        self.reload().await?;
        engine.forget_token().await;
        logged_in(engine).await
    }

    async fn reload(&self) -> Result<(), RpcError> {
        let dirs = self.setup.dirs.clone();
        let read = tokio::task::spawn_blocking(move || settings::load(&dirs))
            .await
            .map_err(|e| RpcError::internal(e.to_string()))?
            .map_err(|e| {
                RpcError::internal(format!(
                    "The config cannot be read: {e}. Fix it, then authenticate again."
                ))
            })?;
        self.settings.send_replace(Arc::new((self.shape)(read)));
        Ok(())
    }
}

/// Ok when the device has a login an editor's sessions can use: a server in the config and its
/// token in the keychain. ACP's auth-required error (-32000) otherwise, saying how to log in.
async fn logged_in(engine: &Engine) -> Result<(), RpcError> {
    match engine.login_error().await {
        None => Ok(()),
        Some(why) => Err(RpcError::new(
            rpc::AUTH_REQUIRED,
            format!("This computer is not logged in to a LLeMbas instance ({why}): {HOW_TO_LOG_IN}."),
        )),
    }
}
