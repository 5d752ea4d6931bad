//! What a front end does in the chat it holds: a prompt (a turn started or queued, answered at
//! once with its id: what it does streams as every update does), a steer, a change of model, mode
//! or effort, and the `@` and `/` completions of its folder.

use crate::engine::Engine;
use crate::engine::methods::accepted;
use crate::engine::session::Session;
use crate::engine::session_access::{check_model, choose_model, switch_mode};
use crate::rpc::RpcError;
use lembas_protocol::composer::{CommandList, FilesFound, FilesSearchParams, FolderParams};
use lembas_protocol::content::ContentBlock;
use lembas_protocol::update::{SessionNotification, SessionUpdate};
use lembas_protocol::{Effort, LinkMethod, Mode, Reason, TurnId};

impl Engine {
    /// `chat/prompt`: the turn started or waiting its turn; its id.
    pub async fn prompt_from_front_end(
        &self,
        connection: u64,
        session_id: &str,
        text: String,
        turn_id: Option<String>,
    ) -> Result<String, RpcError> {
        let session = self.held_by(connection, session_id)?;
        if text.trim().is_empty() {
            return Err(RpcError::invalid_params(
                "text is empty: say what the chat should do.",
            ));
        }
        let turn_id = turn_id
            .filter(|t| !t.is_empty())
            .unwrap_or_else(crate::engine::start::new_turn_id);
        let prompt = vec![ContentBlock::text(text.clone())];
        accepted(
            self,
            &session,
            prompt,
            None,
            Some(TurnId::from(turn_id.as_str())),
            None,
        )
        .await?;
        // The instance did not send it: a shared chat's client hears what the person typed.
        self.tell_link_only(&session, SessionUpdate::user(ContentBlock::text(text)))
            .await;
        Ok(turn_id)
    }

    /// An update only the link's client hears (the front end and the window have it already).
    async fn tell_link_only(&self, session: &Session, update: SessionUpdate) {
        let Some(client) = self.client().filter(|_| self.link_sees(&session.id)) else {
            return;
        };
        let notification = SessionNotification {
            session_id: session.id.clone(),
            update,
        };
        let _ = client
            .notify(LinkMethod::SessionUpdate, serde_json::json!(notification))
            .await;
    }

    /// `chat/steer`: words for the running turn's next step; how many wait.
    pub fn steer_from_front_end(
        &self,
        connection: u64,
        session_id: &str,
        text: String,
    ) -> Result<usize, RpcError> {
        let session = self.held_by(connection, session_id)?;
        if text.trim().is_empty() {
            return Err(RpcError::invalid_params(
                "text is empty: the words for the running turn.",
            ));
        }
        session.steer(None, text).map(|s| s.queued).ok_or_else(|| {
            RpcError::refused(
                format!("Nothing is running in {session_id}: send it as a prompt instead."),
                Reason::NotRunning,
            )
        })
    }

    /// `chat/configure`: the link's `_lembas/configure` rules (the mode lowered to the ceiling, a
    /// model the instance does not serve refused). The model, mode and effort now.
    pub async fn configure_from_front_end(
        &self,
        connection: u64,
        session_id: &str,
        model: Option<String>,
        mode: Option<Mode>,
        effort: Option<Effort>,
    ) -> Result<(String, Mode, Effort), RpcError> {
        let session = self.held_by(connection, session_id)?;
        let model = match model.filter(|m| !m.is_empty()) {
            Some(named) => Some(
                check_model(self, &named)
                    .await
                    .map_err(|e| RpcError::refused(e.message, Reason::Model))?,
            ),
            None => None,
        };
        if let Some(mode) = mode {
            let mode = mode.lowered_to(self.settings().remote.max_mode);
            switch_mode(self, &session, mode).await;
        }
        let (model, effort) = choose_model(self, &session, model, effort).await;
        Ok((model, session.settings().mode, effort))
    }

    /// `chat/models`: the instance's chat models for this device.
    pub async fn models_for_front_end(&self) -> Result<Vec<String>, RpcError> {
        let instance = self.instance().await.map_err(|why| {
            RpcError::refused(
                format!("The instance's models cannot be used: {why}."),
                Reason::NotLoggedIn,
            )
        })?;
        instance
            .chat_models()
            .await
            .map_err(|why| RpcError::internal(format!("The instance's models cannot be read: {why}.")))
    }

    /// `chat/files`: as `_lembas/files/search`; a held chat's folder is searched as it is (a
    /// local chat's lies outside the roots), a folder named without a chat is judged as the link's.
    pub async fn files_for_front_end(
        &self,
        connection: u64,
        params: FilesSearchParams,
    ) -> Result<FilesFound, RpcError> {
        match params.session_id {
            Some(id) => {
                let session = self.held_by(connection, &id)?;
                crate::engine::files::search_under(
                    self,
                    session.cwd.clone(),
                    Some(id),
                    params.query,
                    params.limit,
                )
                .await
            }
            None => crate::engine::files::search(self, params).await,
        }
    }

    /// `chat/commands`: as `_lembas/commands`, for a held chat's folder as it is.
    pub async fn commands_for_front_end(
        &self,
        connection: u64,
        params: FolderParams,
    ) -> Result<CommandList, RpcError> {
        match params.session_id {
            Some(id) => {
                let session = self.held_by(connection, &id)?;
                Ok(crate::engine::commands::list_in(self, &session.cwd))
            }
            None => crate::engine::commands::list(self, params).await,
        }
    }
}
