//! The client side of the control endpoint, for `lembas` and the tray app: [`Client::connect`]
//! finds the runtime of this user (or says none runs) and presents its control cookie
//! ([`super::cookie`]), then one call at a time; [`Client::subscribe`] turns the connection into
//! the live stream of status and events.

use lembas_protocol::ControlPush;
use lembas_protocol::permission::ApprovalOption;
use lembas_protocol::session::Empty;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};

use super::ApprovalCard;
use super::calls::{ControlCall, call};
use super::cookie::{self, Cookie};
use super::endpoint::{self, Stream};
use super::params::{
    ActivityLines, ActivityParams, AnswerParams, Answered, Count, HelloParams, RemoteStopped, Streams,
};
use crate::events::DeviceEvent;
use crate::paths::Dirs;
use crate::rpc::{self, Incoming, RpcError};
use crate::status::Status;
use crate::store::SessionSummary;

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No runtime serves the socket: read the files instead.
    #[error("no LLeMbas device is running for this user")]
    NotRunning,
    #[error("cannot reach the running LLeMbas device at {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The runtime's cookie could not be read, so the connection could not be admitted.
    #[error(
        "cannot read the control cookie {path}: {source}. Only this user's own LLeMbas processes, which can read that file, may use the running device."
    )]
    Cookie {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The runtime refused the connection (another user's, or the cookie not its own); its
    /// sentence is for a person.
    #[error("the running LLeMbas device refused this connection: {}", .0.message)]
    Refused(RpcError),
}

#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The runtime's error answer (its sentence is for a person).
    #[error("{}", .0.message)]
    Rpc(RpcError),
    #[error("the running LLeMbas device closed the connection")]
    Closed,
    #[error("the running LLeMbas device's answer is not understood: {0}")]
    Unreadable(String),
    #[error("cannot talk to the running LLeMbas device: {0}")]
    Io(#[from] std::io::Error),
}

pub struct Client {
    reader: BufReader<ReadHalf<Stream>>,
    writer: WriteHalf<Stream>,
    next_id: u64,
    /// Notifications met while waiting for an answer, for a subscription that also calls (a chat
    /// front end); dropped on a connection that never subscribed.
    kept: std::collections::VecDeque<(String, Value)>,
    subscribed: bool,
    /// The line being read, kept across a read that was cancelled.
    partial: Vec<u8>,
}

/// Something the runtime pushed to a subscriber.
#[derive(Debug, Clone, PartialEq)]
pub enum Pushed {
    Status(Status),
    Event(DeviceEvent),
    /// Events this subscriber read too slowly to get.
    Missed(u64),
}

impl Client {
    /// Connects to this user's runtime and presents its control cookie;
    /// [`ConnectError::NotRunning`] when none serves the socket (none there, or one a runtime that
    /// died left behind).
    pub async fn connect(dirs: &Dirs) -> Result<Client, ConnectError> {
        Client::connect_control(super::socket_path(dirs), &cookie::path(dirs)).await
    }

    /// Connects to the control socket at `socket` and presents the cookie read from `cookie` (a
    /// runtime whose folders are not this process's: the tests' homes).
    pub async fn connect_control(
        socket: std::path::PathBuf,
        cookie: &std::path::Path,
    ) -> Result<Client, ConnectError> {
        let mut client = Client::connect_at(socket.clone()).await?;
        // Read once connected: with no runtime there, that is the answer, not a missing file.
        let presented = Cookie::read(cookie);
        // Said even without a cookie to present: a runtime that refuses this connection for
        // another reason (another user's) says why, and that says more than the unreadable file.
        let params = match &presented {
            Ok(presented) => json!(HelloParams {
                cookie: presented.as_str().to_string()
            }),
            Err(_) => json!({}),
        };
        let answer = client.call(call::Hello::METHOD.name(), params).await;
        match (presented, answer) {
            (_, Err(CallError::Rpc(refused))) if reason(&refused) != Some("cookie") => {
                Err(ConnectError::Refused(refused))
            }
            (Err(source), _) => Err(ConnectError::Cookie {
                path: cookie.to_path_buf(),
                source,
            }),
            (Ok(_), Ok(_)) => Ok(client),
            (Ok(_), Err(CallError::Rpc(refused))) => Err(ConnectError::Refused(refused)),
            (Ok(_), Err(CallError::Io(source))) => Err(ConnectError::Io { path: socket, source }),
            (Ok(_), Err(other)) => Err(ConnectError::Io {
                path: socket,
                source: std::io::Error::other(other.to_string()),
            }),
        }
    }

    /// Connects to an endpoint speaking the same protocol without presenting a cookie: the
    /// desktop tray's own socket (which serves its window and a second launch, and takes none).
    /// The runtime's control socket answers such a connection nothing but `hello`.
    pub async fn connect_at(path: std::path::PathBuf) -> Result<Client, ConnectError> {
        match endpoint::connect(&path).await {
            Ok(stream) => {
                let (read, writer) = tokio::io::split(stream);
                Ok(Client {
                    reader: BufReader::new(read),
                    writer,
                    next_id: 1,
                    kept: Default::default(),
                    subscribed: false,
                    partial: Vec::new(),
                })
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                Err(ConnectError::NotRunning)
            }
            Err(source) => Err(ConnectError::Io { path, source }),
        }
    }

    /// One request and its answer; notifications met on the way are kept for the subscription
    /// (dropped when this connection never subscribed).
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let mut text = rpc::request(&id, method, params);
        text.push('\n');
        if let Err(e) = self.writer.write_all(text.as_bytes()).await {
            // A runtime that refused this connection said why before closing it: read that.
            return match self.next_message().await {
                Ok(Incoming::Response {
                    result: Err(refused), ..
                }) => Err(CallError::Rpc(refused)),
                _ => Err(CallError::Io(e)),
            };
        }
        loop {
            match self.next_message().await? {
                Incoming::Response { id: got, result } if got == id => return result.map_err(CallError::Rpc),
                // An error with no id: the runtime refused the connection or could not read a line.
                Incoming::Response {
                    id: Value::Null,
                    result: Err(e),
                } => return Err(CallError::Rpc(e)),
                Incoming::Notification { method, params } if self.subscribed => {
                    self.kept.push_back((method, params));
                }
                _ => continue,
            }
        }
    }

    /// Cancel-safe: `read_until` appends to a buffer the client keeps, so a read that a `select!`
    /// drops half-way loses nothing and the next call carries on with the same line.
    async fn next_message(&mut self) -> Result<Incoming, CallError> {
        if self.reader.read_until(b'\n', &mut self.partial).await? == 0 {
            return Err(CallError::Closed);
        }
        let line = std::mem::take(&mut self.partial);
        let text = String::from_utf8_lossy(&line);
        rpc::parse(text.trim_end()).map_err(|r| CallError::Unreadable(r.error.message))
    }

    /// One call of a control method, through its types.
    pub async fn ask<C>(&mut self, _: C, params: C::Params) -> Result<C::Answer, CallError>
    where
        C: ControlCall,
        C::Params: Serialize,
        C::Answer: DeserializeOwned,
    {
        let params = serde_json::to_value(params).map_err(|e| CallError::Unreadable(e.to_string()))?;
        let answer = self.call(C::METHOD.name(), params).await?;
        serde_json::from_value(answer).map_err(|e| CallError::Unreadable(e.to_string()))
    }

    /// The runtime's state now.
    pub async fn status(&mut self) -> Result<Status, CallError> {
        Ok(self.ask(call::Status, Empty {}).await?.status)
    }

    /// The approval cards waiting for a person, the oldest first.
    pub async fn approvals(&mut self) -> Result<Vec<ApprovalCard>, CallError> {
        self.ask(call::ApprovalsList, Empty {}).await
    }

    /// Answers a card as the desktop does (first answer wins); an error with `data.reason`
    /// `not_open` when it no longer waits.
    pub async fn answer(&mut self, id: &str, option: ApprovalOption) -> Result<Answered, CallError> {
        let asked = AnswerParams {
            id: id.to_string(),
            answer: option,
        };
        self.ask(call::ApprovalsAnswer, asked).await
    }

    /// The activity log's newest `n` lines as logged (passed through), newest first, and how many
    /// could not be read.
    pub async fn activity(&mut self, n: usize) -> Result<(Vec<Value>, usize), CallError> {
        let asked = ActivityParams {
            n: Some(n),
            described: false,
        };
        let page = self.ask(call::Activity, asked).await?;
        match page.lines {
            ActivityLines::Logged(lines) => Ok((lines, page.unreadable)),
            ActivityLines::Described(_) => Err(CallError::Unreadable(
                "the activity log came described, not as logged".to_string(),
            )),
        }
    }

    /// The sessions kept on this computer, the latest first.
    pub async fn sessions(&mut self) -> Result<Vec<SessionSummary>, CallError> {
        let listed = self.ask(call::SessionsList, Empty {}).await?;
        Ok(listed.into_iter().map(|session| session.summary).collect())
    }

    /// Stop all remote work: remote work off, and the link ends at once.
    pub async fn stop_remote_work(&mut self) -> Result<RemoteStopped, CallError> {
        self.ask(call::RemoteStop, Empty {}).await
    }

    /// Turns this connection into the live stream: the status first, then every event.
    pub async fn subscribe(self) -> Result<Subscription, CallError> {
        self.subscribe_with(Streams::default()).await
    }

    /// [`Client::subscribe`] to more than status and events.
    pub async fn subscribe_with(mut self, streams: Streams) -> Result<Subscription, CallError> {
        self.ask(call::Subscribe, streams).await?;
        self.subscribed = true;
        Ok(Subscription { client: self })
    }
}

/// An error answer's `data.reason`.
fn reason(error: &RpcError) -> Option<&str> {
    error.data.as_ref()?.get("reason")?.as_str()
}

pub struct Subscription {
    client: Client,
}

impl Subscription {
    /// The next notification as sent (its method and params), whatever its kind: for a relay that
    /// passes the stream on (the window); `None` when the runtime has gone.
    pub async fn next_notification(&mut self) -> Option<(String, Value)> {
        if let Some(kept) = self.client.kept.pop_front() {
            return Some(kept);
        }
        loop {
            match self.client.next_message().await {
                Ok(Incoming::Notification { method, params }) => return Some((method, params)),
                Ok(_) | Err(CallError::Unreadable(_)) => continue,
                Err(_) => return None,
            }
        }
    }

    /// A call on the subscribed connection (a chat front end holds its chats on the connection
    /// that hears their updates); what is pushed meanwhile is kept for [`Subscription::next_notification`].
    pub async fn ask<C>(&mut self, call: C, params: C::Params) -> Result<C::Answer, CallError>
    where
        C: ControlCall,
        C::Params: Serialize,
        C::Answer: DeserializeOwned,
    {
        self.client.ask(call, params).await
    }

    /// The next thing pushed; `None` when the runtime has gone.
    pub async fn next(&mut self) -> Option<Pushed> {
        loop {
            let (method, params) = self.next_notification().await?;
            let pushed = match ControlPush::from_name(&method) {
                Some(ControlPush::Status) => serde_json::from_value(params).ok().map(Pushed::Status),
                Some(ControlPush::Event) => serde_json::from_value(params).ok().map(Pushed::Event),
                Some(ControlPush::Missed) => serde_json::from_value::<Count>(params)
                    .ok()
                    .map(|missed| Pushed::Missed(missed.count)),
                _ => None,
            };
            // A kind of event newer than this client is skipped, not the end of the stream.
            if let Some(pushed) = pushed {
                return Some(pushed);
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::net::UnixListener;

    /// A front end waits for a push and for its own keys at once (`select!`): a read dropped while
    /// half a line had come must lose none of it.
    #[tokio::test]
    async fn a_notification_read_half_way_and_dropped_is_read_whole_next_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("control.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let runtime = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.unwrap();
            let (read, mut write) = tokio::io::split(stream);
            let mut lines = BufReader::new(read).lines();
            let subscribe = lines.next_line().await.unwrap().unwrap();
            assert!(subscribe.contains("\"subscribe\""), "{subscribe}");
            write
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
                .await
                .unwrap();
            write
                .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"card\",\"par")
                .await
                .unwrap();
            write.flush().await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            write.write_all(b"ams\":{\"n\":1}}\n").await.unwrap();
            write.flush().await.unwrap();
            lines
        });
        let client = Client::connect_at(path).await.unwrap();
        let mut subscription = client.subscribe().await.unwrap();
        tokio::select! {
            pushed = subscription.next_notification() => panic!("no whole line yet: {pushed:?}"),
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
        }
        let next = subscription.next_notification();
        let (method, params) = tokio::time::timeout(std::time::Duration::from_secs(5), next)
            .await
            .expect("the line's first half was lost")
            .unwrap();
        assert_eq!((method.as_str(), params), ("card", json!({ "n": 1 })));
        drop(runtime.await.unwrap());
    }
}
