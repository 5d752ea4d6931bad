//! The chat's connection to the runtime: one control connection, subscribed to the sessions'
//! updates, that also holds the chat (the runtime lets a chat go when the connection that opened it
//! ends). One task owns it: it carries out the front end's requests one at a time and passes on
//! what the runtime pushes, both as [`Heard`] on one channel the screen's loop reads.

use lembas_device::control::calls::call;
use lembas_device::control::chat::params::{
    CardShown, ChatAnswerParams, ChatModel, ChatOpened, ConfigureParams, JobChanged, OpenParams,
    PromptParams, ShareParams, Sharing, SharingChanged, SteerParams, TakenDown,
};
use lembas_device::control::params::{ListedSession, SessionParams, Streams};
use lembas_device::control::{CallError, Client, Subscription};
use lembas_device::events::LinkState;
use lembas_device::status::Status;
use lembas_protocol::ControlPush;
use lembas_protocol::composer::{FilesFound, FilesSearchParams};
use lembas_protocol::session::Empty;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

/// What the front end asks of the runtime.
#[derive(Debug)]
pub enum Request {
    Open(OpenParams),
    Prompt(PromptParams),
    Steer(SteerParams),
    Stop(String),
    Answer(ChatAnswerParams),
    Share(ShareParams),
    Configure(ConfigureParams),
    Models,
    Sessions,
    Files(FilesSearchParams),
    /// Let the chat go (it stays in the store).
    Close(String),
}

/// What the runtime answered or pushed.
#[derive(Debug)]
pub enum Heard {
    Opened(Box<ChatOpened>),
    Shared(Sharing),
    Configured(lembas_device::control::chat::params::Configured),
    Models(Vec<ChatModel>),
    Sessions(Vec<ListedSession>),
    Files {
        query: String,
        found: FilesFound,
    },
    /// A request that needs no more than its success.
    Done,
    /// A request refused or failed: what was asked and the runtime's sentence.
    Failed {
        what: &'static str,
        why: String,
        reason: Option<String>,
    },
    /// A session's update (every session's: the loop keeps its chat's).
    Update {
        session_id: String,
        update: Value,
    },
    Card(Box<CardShown>),
    Settled(TakenDown),
    Sharing(SharingChanged),
    /// A job of a session started, changed or ended.
    Job(JobChanged),
    /// The link is up (true) or not.
    Linked(bool),
    /// The runtime is gone.
    Gone,
    /// The chat was let go.
    Closed,
}

#[derive(Deserialize)]
struct UpdatePushed {
    session_id: String,
    update: Value,
}

/// Subscribes `client` to the sessions' updates; the subscribed connection, ready to open a chat.
pub async fn subscribed(client: Client) -> Result<Subscription, CallError> {
    client
        .subscribe_with(Streams {
            sessions: true,
            terminals: false,
        })
        .await
}

/// Runs the connection until the front end stops asking (its sender dropped) or the runtime goes.
pub async fn serve(
    mut link: Subscription,
    mut requests: mpsc::Receiver<Request>,
    heard: mpsc::Sender<Heard>,
) {
    loop {
        tokio::select! {
            request = requests.recv() => {
                let Some(request) = request else { return };
                let answer = carry_out(&mut link, request).await;
                let gone = matches!(answer, Heard::Failed { ref reason, .. } if reason.as_deref() == Some("gone"));
                if heard.send(answer).await.is_err() {
                    return;
                }
                if gone {
                    let _ = heard.send(Heard::Gone).await;
                    return;
                }
            }
            // Dropped when a request comes first: a line half read at that moment is lost (the
            // control client keeps no partial line), and the next one is read whole.
            pushed = link.next_notification() => {
                let Some((method, params)) = pushed else {
                    let _ = heard.send(Heard::Gone).await;
                    return;
                };
                if let Some(pushed) = read_push(&method, params)
                    && heard.send(pushed).await.is_err()
                {
                    return;
                }
            }
        }
    }
}

fn read_push(method: &str, params: Value) -> Option<Heard> {
    Some(match ControlPush::from_name(method)? {
        ControlPush::SessionUpdate => {
            let pushed: UpdatePushed = serde_json::from_value(params).ok()?;
            Heard::Update {
                session_id: pushed.session_id,
                update: pushed.update,
            }
        }
        ControlPush::Card => Heard::Card(Box::new(serde_json::from_value(params).ok()?)),
        ControlPush::CardSettled => Heard::Settled(serde_json::from_value(params).ok()?),
        ControlPush::ChatSharing => Heard::Sharing(serde_json::from_value(params).ok()?),
        ControlPush::ChatJob => Heard::Job(serde_json::from_value(params).ok()?),
        ControlPush::Status => {
            let status: Status = serde_json::from_value(params).ok()?;
            Heard::Linked(matches!(status.link, LinkState::Linked))
        }
        _ => return None,
    })
}

async fn carry_out(link: &mut Subscription, request: Request) -> Heard {
    let asked = match request {
        Request::Open(params) => {
            return answered("open the chat", link.ask(call::ChatOpen, params).await, |o| {
                Heard::Opened(Box::new(o))
            });
        }
        Request::Prompt(params) => link.ask(call::ChatPrompt, params).await.map(|_| ()),
        Request::Steer(params) => link.ask(call::ChatSteer, params).await.map(|_| ()),
        Request::Stop(session_id) => link
            .ask(call::SessionsStop, SessionParams { session_id })
            .await
            .map(|_| ()),
        Request::Answer(params) => link.ask(call::ChatAnswer, params).await.map(|_| ()),
        Request::Share(params) => {
            return answered(
                "change the sharing",
                link.ask(call::ChatShare, params).await,
                Heard::Shared,
            );
        }
        Request::Configure(params) => {
            return answered(
                "change the chat",
                link.ask(call::ChatConfigure, params).await,
                Heard::Configured,
            );
        }
        Request::Models => {
            return answered(
                "list the models",
                link.ask(call::ChatModels, Empty {}).await,
                Heard::Models,
            );
        }
        Request::Sessions => {
            return answered(
                "list the chats",
                link.ask(call::SessionsList, Empty {}).await,
                Heard::Sessions,
            );
        }
        Request::Files(params) => {
            let query = params.query.clone();
            return answered(
                "search the files",
                link.ask(call::ChatFiles, params).await,
                |found| Heard::Files { query, found },
            );
        }
        Request::Close(session_id) => {
            let _ = link.ask(call::ChatClose, SessionParams { session_id }).await;
            return Heard::Closed;
        }
    };
    answered("do that", asked, |()| Heard::Done)
}

fn answered<T>(what: &'static str, answer: Result<T, CallError>, heard: impl FnOnce(T) -> Heard) -> Heard {
    match answer {
        Ok(answer) => heard(answer),
        Err(CallError::Rpc(e)) => Heard::Failed {
            what,
            reason: e
                .data
                .as_ref()
                .and_then(|d| d.get("reason"))
                .and_then(Value::as_str)
                .map(str::to_string),
            why: e.message,
        },
        Err(e @ (CallError::Closed | CallError::Io(_))) => Heard::Failed {
            what,
            why: e.to_string(),
            reason: Some("gone".to_string()),
        },
        Err(e) => Heard::Failed {
            what,
            why: e.to_string(),
            reason: None,
        },
    }
}
