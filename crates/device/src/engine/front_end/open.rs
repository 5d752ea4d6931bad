//! `chat/open`: a new chat in a folder, a stored one, one the link holds now (taken over), or the
//! latest in a folder, held by the front end's connection from then on.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Holding, Sharing};
use crate::engine::Engine;
use crate::engine::methods::{Fresh, default_model, stored_new};
use crate::engine::session::{Context, Session};
use crate::engine::session_access::{check_model, from_store};
use crate::policy::roots;
use crate::rpc::{INVALID_PARAMS, RpcError};
use crate::store::ids;
use lembas_protocol::Reason;

/// What `chat/open` was asked for.
#[derive(Debug, Clone, Default)]
pub struct ChatStart {
    pub cwd: Option<String>,
    pub session_id: Option<String>,
    pub latest: bool,
    pub model: Option<String>,
    pub share: Option<bool>,
}

/// A chat held by the front end now, as it stands.
pub struct OpenedChat {
    pub session_id: String,
    pub cwd: String,
    pub title: String,
    pub model: String,
    pub mode: crate::policy::Mode,
    pub effort: lembas_protocol::Effort,
    pub sharing: Sharing,
}

impl Engine {
    /// Opens the chat `start` names for `connection`; every card open in it is told to the front
    /// ends again.
    pub async fn open_chat(&self, connection: u64, start: ChatStart) -> Result<OpenedChat, RpcError> {
        let session = match (&start.session_id, &start.cwd) {
            (Some(id), _) => self.take_stored(connection, id, start.share).await?,
            (None, Some(cwd)) => {
                let folder = chat_folder(cwd)?;
                match self.latest_in(&folder, start.latest)? {
                    Some(id) => self.take_stored(connection, &id, start.share).await?,
                    None => self.new_chat(connection, folder, &start).await?,
                }
            }
            (None, None) => {
                return Err(RpcError::invalid_params(
                    "Name the chat's folder (cwd, absolute) or a stored chat (session_id).",
                ));
            }
        };
        for card in self.0.approvals.cards() {
            if card.session_id() == session.id.as_str() {
                self.tell_front_ends(super::ChatNews::Card {
                    session_id: session.id.to_string(),
                    card: Box::new(card.request.clone()),
                });
            }
        }
        for job in session.jobs(|board| board.list()) {
            self.tell_front_ends(super::ChatNews::Job {
                session_id: session.id.to_string(),
                state: lembas_protocol::event::JobChange::Update,
                job,
            });
        }
        let settings = session.settings();
        Ok(OpenedChat {
            session_id: session.id.to_string(),
            cwd: session.cwd.display().to_string(),
            title: session.title(),
            model: settings.model,
            mode: settings.mode,
            effort: settings.effort,
            sharing: self.sharing(&session),
        })
    }

    /// The latest stored chat whose folder is `folder` (with `latest`), if any.
    fn latest_in(&self, folder: &Path, latest: bool) -> Result<Option<String>, RpcError> {
        if !latest {
            return Ok(None);
        }
        let stored = self
            .store()
            .list()
            .map_err(|e| RpcError::internal(format!("The chats on this computer cannot be read: {e}.")))?;
        let folder = folder.display().to_string();
        Ok(stored.into_iter().find(|s| s.cwd == folder).map(|s| s.id))
    }

    /// A stored chat, or one the link holds now (taken over, shared since the instance has it).
    async fn take_stored(
        &self,
        connection: u64,
        id: &str,
        share: Option<bool>,
    ) -> Result<Arc<Session>, RpcError> {
        let in_memory = self.sessions().get(id).cloned();
        // Opened again by the front end that holds it: as it is, unless `share` says otherwise.
        if let Some(session) = in_memory.clone()
            && self.holding(id).is_some_and(|h| h.connection == connection)
        {
            if let Some(share) = share {
                self.share_chat(connection, id, share, false).await?;
            }
            return Ok(session);
        }
        if in_memory.is_none() && (!ids::is_session_id(id) || !self.store().exists(id)) {
            return Err(RpcError::refused(
                format!("There is no chat {id} on this computer (it may have been deleted)."),
                Reason::Unknown,
            ));
        }
        // Held before it is read back: nothing of it reaches the link until it is known shared.
        let taken_over = in_memory.is_some() && self.holding(id).is_none();
        let holding = Holding {
            connection,
            shared: false,
        };
        self.0
            .front_ends
            .take(id, holding)
            .map_err(|_| held_elsewhere(id, "another chat window on this computer"))?;
        let session = match from_store(self, id) {
            Ok((session, _)) => session,
            Err(e) => {
                self.0.front_ends.remove(id);
                return Err(match e.code {
                    INVALID_PARAMS => RpcError::refused(e.message, Reason::Held),
                    _ => e,
                });
            }
        };
        let shared = match taken_over {
            true => self.share_refused(&session).is_none() && share != Some(false),
            false => self.shared_from_start(&session, share),
        };
        if shared {
            self.share_now(&session).await;
        }
        Ok(session)
    }

    /// A new chat in `folder` on the model asked for (the login's default when none).
    async fn new_chat(
        &self,
        connection: u64,
        folder: PathBuf,
        start: &ChatStart,
    ) -> Result<Arc<Session>, RpcError> {
        if let Err(why) = self.instance().await {
            return Err(RpcError::refused(
                format!("No model can answer here: {why}. Log in first (lembas login)."),
                Reason::NotLoggedIn,
            ));
        }
        let named = match start.model.clone().filter(|m| !m.is_empty()) {
            Some(model) => model,
            None => default_model(self)
                .await
                .map_err(|e| RpcError::refused(e.message, Reason::Model))?,
        };
        let model = check_model(self, &named)
            .await
            .map_err(|e| RpcError::refused(e.message, Reason::Model))?;
        let mode = crate::policy::Mode::default().lowered_to(self.settings().remote.max_mode);
        let fresh = Fresh {
            model: model.clone(),
            mode,
            effort: lembas_protocol::Effort::default(),
            context: Context::default(),
            given: false,
        };
        let (id, state, hold) = stored_new(self, &folder, fresh).await?;
        let holding = Holding {
            connection,
            shared: false,
        };
        // Fresh id: nobody else can hold it.
        let _ = self.0.front_ends.take(&id, holding);
        let session = Session::new(id.as_str().into(), folder.clone(), state, Some(hold));
        self.sessions().insert(id.as_str().into(), session.clone());
        self.device_event(crate::events::DeviceEvent::SessionOpened {
            session_id: id.as_str().into(),
            cwd: folder.display().to_string(),
            model,
        });
        if self.shared_from_start(&session, start.share) {
            self.share_now(&session).await;
        }
        Ok(session)
    }
}

/// The chat's folder: absolute, resolved, an existing directory. Outside the roots is allowed
/// (a local chat); the limits are judged when it is shared.
fn chat_folder(cwd: &str) -> Result<PathBuf, RpcError> {
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return Err(RpcError::refused(
            format!("{cwd:?} is not an absolute path: name the chat's folder from the root."),
            Reason::Folder,
        ));
    }
    let resolved = roots::resolve(path)
        .map_err(|e| RpcError::refused(format!("The folder {cwd} cannot be used: {e}."), Reason::Folder))?;
    if !resolved.is_dir() {
        return Err(RpcError::refused(
            format!("{cwd} is not a folder: name the folder the chat works in."),
            Reason::Folder,
        ));
    }
    Ok(resolved)
}

fn held_elsewhere(id: &str, by: &str) -> RpcError {
    RpcError::refused(
        format!("The chat {id} is held by {by}: close it there first."),
        Reason::Held,
    )
}
