//! Chats held by a front end at this computer (`lembas chat`, the window's composer: the spec's
//! "terminal", ENGINE.md "Chats started at this computer"): who holds each, whether it is shared
//! with the link's instance, and the one rule every message to the link consults
//! ([`Engine::link_sees`]): a chat a front end holds and does not share never goes over the link.

mod open;
mod share_memory;
mod turns;

pub use open::{ChatStart, OpenedChat};

use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Engine;
use super::session::Session;
use crate::poison::Recover;
use crate::rpc::RpcError;
use crate::settings::ChatShare;
use crate::store::Record;
use lembas_protocol::card::CardRequest;
use lembas_protocol::event::JobChange;
use lembas_protocol::jobs::JobInfo;
use lembas_protocol::notices::{SessionAnnounce, SessionLeft};
use lembas_protocol::{LinkMethod, Reason, SessionId};

/// How long letting go of a chat waits for its cancelled turn to end.
const TURN_END_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A chat a front end holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holding {
    /// The control connection holding it (its serial in this runtime).
    pub connection: u64,
    pub shared: bool,
}

/// Every chat a front end holds, by session id; and the lefts no link has heard yet.
#[derive(Default)]
pub(super) struct Holders(Mutex<HashMap<SessionId, Holding>>, Mutex<Vec<SessionLeft>>);

impl Holders {
    fn get(&self, id: &str) -> Option<Holding> {
        self.0.lock().recover().get(id).copied()
    }

    /// A left the link did not take (no link, or it ended first), for the next one.
    fn keep_left(&self, left: SessionLeft) {
        self.1.lock().recover().push(left);
    }

    fn kept_lefts(&self) -> Vec<SessionLeft> {
        std::mem::take(&mut *self.1.lock().recover())
    }

    fn all(&self) -> Vec<(SessionId, Holding)> {
        self.0
            .lock()
            .recover()
            .iter()
            .map(|(id, h)| (id.clone(), *h))
            .collect()
    }

    /// Held by `connection` now; `Err` with who holds it otherwise.
    fn take(&self, id: &str, holding: Holding) -> Result<(), Holding> {
        let mut held = self.0.lock().recover();
        match held.get(id) {
            Some(other) if other.connection != holding.connection => Err(*other),
            _ => {
                held.insert(id.into(), holding);
                Ok(())
            }
        }
    }

    fn set_shared(&self, id: &str, shared: bool) {
        if let Some(holding) = self.0.lock().recover().get_mut(id) {
            holding.shared = shared;
        }
    }

    fn remove(&self, id: &str) -> Option<Holding> {
        self.0.lock().recover().remove(id)
    }
}

/// Whether a chat is shared with the instance over the link, and whether it can be.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Sharing {
    pub shared: bool,
    /// Why it cannot be shared (outside the roots, remote work off, not logged in); `None` when it can.
    pub refused: Option<String>,
    /// `chat.share` is `ask` and this folder was never asked: the front end asks once, then calls
    /// `chat/share` with `remember: true`.
    pub ask: bool,
    /// A link is up now.
    pub linked: bool,
}

/// What a front end hears beside the sessions' updates.
#[derive(Debug, Clone)]
pub enum ChatNews {
    /// A card opened in a session, as the link gets it.
    Card {
        session_id: String,
        card: Box<CardRequest>,
    },
    /// A card taken down: `by` who answered it (`client`, `desktop`, `terminal`), or `timeout`,
    /// `withdrawn`.
    Settled {
        session_id: String,
        tool_call_id: String,
        by: String,
    },
    /// A held chat's sharing changed by itself.
    Sharing { session_id: String, sharing: Sharing },
    /// A session's background job started, changed or ended.
    Job {
        session_id: String,
        state: JobChange,
        job: JobInfo,
    },
}

impl Engine {
    /// The front end holding `session_id`, if one does.
    pub fn holding(&self, session_id: &str) -> Option<Holding> {
        self.0.front_ends.get(session_id)
    }

    /// Whether the link hears of this session (its updates, events, cards): not held by a front
    /// end, or shared by the one that holds it.
    pub(crate) fn link_sees(&self, session_id: &str) -> bool {
        self.holding(session_id).is_none_or(|h| h.shared)
    }

    /// What front ends hear beside the updates (cards, their settling, sharing changes).
    pub fn chat_news(&self) -> tokio::sync::broadcast::Receiver<ChatNews> {
        self.0.chat_news.subscribe()
    }

    pub(crate) fn tell_front_ends(&self, news: ChatNews) {
        let _ = self.0.chat_news.send(news);
    }

    /// A link with a LLeMbas client is up now.
    fn linked(&self) -> bool {
        !self.0.editor && self.client().is_some_and(|c| c.lembas)
    }

    /// Why `session` cannot be shared now; `None` when it can.
    fn share_refused(&self, session: &Session) -> Option<String> {
        if self.settings().server.is_none() {
            return Some("This computer is not logged in to LLeMbas: log in to share a chat.".into());
        }
        super::session_access::judge_again(self, session)
            .err()
            .map(|e| format!("This chat stays on this computer: {}", e.message))
    }

    /// The chat's sharing as it stands.
    pub fn sharing(&self, session: &Session) -> Sharing {
        let refused = self.share_refused(session);
        // Nothing to ask of a chat that cannot be shared.
        let ask = refused.is_none()
            && self.settings().chat.share == ChatShare::Ask
            && share_memory::remembered(&self.setup().dirs.state, &session.cwd).is_none();
        Sharing {
            shared: self.holding(&session.id).is_some_and(|h| h.shared),
            refused,
            ask,
            linked: self.linked(),
        }
    }

    /// Whether a new chat in `session`'s folder is shared from its start: `share` when the front end
    /// said, else as `chat.share` says (for `ask`, the folder's answer when it was asked).
    fn shared_from_start(&self, session: &Session, share: Option<bool>) -> bool {
        if self.share_refused(session).is_some() {
            return false;
        }
        share.unwrap_or_else(|| match self.settings().chat.share {
            ChatShare::Always => true,
            ChatShare::Never => false,
            ChatShare::Ask => {
                share_memory::remembered(&self.setup().dirs.state, &session.cwd).unwrap_or(false)
            }
        })
    }

    /// `chat/share`: shared (announced) or not (left); `remember` keeps the answer for the folder.
    pub async fn share_chat(
        &self,
        connection: u64,
        session_id: &str,
        share: bool,
        remember: bool,
    ) -> Result<Sharing, RpcError> {
        let session = self.held_by(connection, session_id)?;
        if share && let Some(why) = self.share_refused(&session) {
            return Err(RpcError::refused(why, Reason::Outside));
        }
        if remember && let Err(e) = share_memory::remember(&self.setup().dirs.state, &session.cwd, share) {
            tracing::warn!("the answer to sharing chats in a folder could not be kept: {e}");
        }
        let was = self.holding(session_id).is_some_and(|h| h.shared);
        match (was, share) {
            (false, true) => self.share_now(&session).await,
            (true, false) => {
                self.0.front_ends.set_shared(session_id, false);
                self.left(session_id, true).await;
            }
            _ => {}
        }
        Ok(self.sharing(&session))
    }

    /// The chat `session_id` held by `connection`: -32602 `not_held` otherwise.
    pub fn held_by(&self, connection: u64, session_id: &str) -> Result<Arc<Session>, RpcError> {
        let session = self.sessions().get(session_id).cloned();
        match (session, self.holding(session_id)) {
            (Some(session), Some(h)) if h.connection == connection => Ok(session),
            _ => Err(RpcError::refused(
                format!("This connection does not hold the chat {session_id}: open it with chat/open first."),
                Reason::NotHeld,
            )),
        }
    }

    /// `chat/close`: the front end lets go. Its turn stops; it stays open in this runtime as a
    /// session of the link's would (the link reaches it under the link's rules, its folder judged),
    /// and the instance hears `left` when it was shared.
    pub async fn close_chat(&self, connection: u64, session_id: &str) -> Result<(), RpcError> {
        let session = self.held_by(connection, session_id)?;
        self.let_go_of(&session).await;
        Ok(())
    }

    /// The chat was deleted: nobody holds it any more.
    pub(super) fn forget_holder(&self, session_id: &str) {
        self.0.front_ends.remove(session_id);
    }

    /// Every chat `connection` held is let go of: the connection ended (a crash lets go too).
    pub async fn let_go_all(&self, connection: u64) {
        let held: Vec<Arc<Session>> = self
            .0
            .front_ends
            .all()
            .into_iter()
            .filter(|(_, h)| h.connection == connection)
            .filter_map(|(id, _)| self.sessions().get(&id).cloned())
            .collect();
        for session in held {
            self.let_go_of(&session).await;
        }
    }

    async fn let_go_of(&self, session: &Arc<Session>) {
        session.cancel();
        self.withdraw_cards_of(&session.id).await;
        // Still held while the cancelled turn ends: the last of an unshared chat's updates must
        // not reach the link.
        let end = tokio::time::Instant::now() + TURN_END_WAIT;
        while session.status().busy && tokio::time::Instant::now() < end {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let available = self.share_refused(session).is_none();
        if let Some(holding) = self.0.front_ends.remove(&session.id)
            && holding.shared
        {
            self.left(&session.id, available).await;
        }
    }

    /// Shared by the front end: marked as given to the link's client (which may delete it later),
    /// announced, and its commands told.
    async fn share_now(&self, session: &Session) {
        self.0.front_ends.set_shared(&session.id, true);
        session.record(Record::ForLinkClient);
        session.flush();
        self.announce(session).await;
        // The client hears its commands, as after session/new.
        self.session_opened(&session.id).await;
    }

    /// `_lembas/session/announce` for `session`.
    async fn announce(&self, session: &Session) {
        let Some(client) = self.client().filter(|c| c.lembas && !self.0.editor) else {
            return;
        };
        let settings = session.settings();
        let announce = SessionAnnounce {
            session_id: session.id.clone(),
            cwd: session.cwd.display().to_string(),
            title: session.title(),
            model: settings.model,
            instance: true,
            mode: settings.mode,
            effort: settings.effort,
            busy: session.status().busy,
            origin: "terminal".into(),
        };
        let _ = client.notify(LinkMethod::SessionAnnounce, json!(announce)).await;
    }

    /// `_lembas/session/left`; kept for the next link when none takes it now (the link may be
    /// redialling for the very change that made the chat leave).
    async fn left(&self, session_id: &str, available: bool) {
        let left = SessionLeft {
            session_id: session_id.into(),
            available,
        };
        if self.0.editor {
            return;
        }
        let Some(client) = self.client().filter(|c| c.lembas) else {
            self.0.front_ends.keep_left(left);
            return;
        };
        if client.notify(LinkMethod::SessionLeft, json!(left)).await.is_err() {
            self.0.front_ends.keep_left(left);
        }
    }

    /// A new link: the lefts it missed, every shared chat announced again (one that can no
    /// longer be shared is left instead), and every front end told the link is up.
    pub(super) async fn announce_shared(&self) {
        for left in self.0.front_ends.kept_lefts() {
            self.left(&left.session_id, left.available).await;
        }
        self.recheck_shared().await;
        for (id, holding) in self.0.front_ends.all() {
            let Some(session) = self.sessions().get(&id).cloned() else {
                continue;
            };
            if holding.shared {
                self.announce(&session).await;
            }
            self.tell_sharing(&session);
        }
    }

    /// The link went down: every front end told.
    pub(super) fn link_went_down(&self) {
        for (id, _) in self.0.front_ends.all() {
            if let Some(session) = self.sessions().get(&id).cloned() {
                self.tell_sharing(&session);
            }
        }
    }

    fn tell_sharing(&self, session: &Session) {
        self.tell_front_ends(ChatNews::Sharing {
            session_id: session.id.to_string(),
            sharing: self.sharing(session),
        });
    }

    /// The limits changed: a shared chat that can no longer be shared (its folder left the roots,
    /// remote work turned off, logged out) is left, and its front end told why.
    pub(super) async fn recheck_shared(&self) {
        for (id, holding) in self.0.front_ends.all() {
            let Some(session) = self.sessions().get(&id).cloned() else {
                continue;
            };
            if holding.shared && self.share_refused(&session).is_some() {
                self.0.front_ends.set_shared(&id, false);
                self.left(&id, false).await;
                self.tell_sharing(&session);
            }
        }
    }

    /// A session a front end holds and shares, or not held by one: whether cards put to the link
    /// are patient (a person at the terminal may answer too). A scheduled turn's never are.
    pub(super) fn patient(&self, session_id: &str) -> bool {
        let scheduled = self.sessions().get(session_id).is_some_and(|s| s.is_scheduled());
        !scheduled && self.holding(session_id).is_some_and(|h| h.shared)
    }

    /// The tools' roots of a local chat (outside the roots, held by a front end): its own folder,
    /// where the person at the keyboard opened it.
    pub(super) fn local_chat_folder(&self, session: &Session) -> Option<std::path::PathBuf> {
        let holding = self.holding(&session.id)?;
        (!holding.shared).then(|| session.cwd.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_is_held_by_one_connection_until_it_lets_go() {
        let holders = Holders::default();
        let mine = Holding {
            connection: 1,
            shared: false,
        };
        assert_eq!(holders.take("ses_a", mine), Ok(()));
        let theirs = Holding {
            connection: 2,
            shared: true,
        };
        assert_eq!(
            holders.take("ses_a", theirs),
            Err(mine),
            "another connection is refused"
        );
        holders.set_shared("ses_a", true);
        assert_eq!(holders.get("ses_a").map(|h| h.shared), Some(true));
        assert_eq!(holders.all().len(), 1);
        assert_eq!(holders.remove("ses_a").map(|h| h.connection), Some(1));
        assert_eq!(holders.take("ses_a", theirs), Ok(()), "free once let go");
    }

    #[test]
    fn a_left_no_link_took_is_kept_once() {
        let holders = Holders::default();
        holders.keep_left(SessionLeft {
            session_id: "ses_a".into(),
            available: false,
        });
        assert_eq!(holders.kept_lefts().len(), 1);
        assert!(holders.kept_lefts().is_empty());
    }
}
