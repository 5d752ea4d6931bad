//! The window's own connection to the device runtime, kept while the window is open. It is
//! subscribed (the pushes the page shows live) and it is the connection that holds the chats the
//! composer opens: the runtime lets a chat go when the connection that opened it ends, so the
//! window's chats go with the window (and with a runtime that restarts). Calls and pushes share
//! it, so one task reads every line: each answer goes to its caller by id, each push to the page.
//! (`Client`'s one-call-at-a-time reading cannot wait for a push and a caller at once.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lembas_device::control::cookie::Cookie;
use lembas_device::control::endpoint::{self, Stream};
use lembas_device::control::params::Streams;
use lembas_device::poison::Recover;
use lembas_device::rpc::{self, Incoming, RpcError};
use lembas_protocol::ControlMethod;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};
use tokio::sync::oneshot;

/// The pause before connecting again after the runtime went (it may be restarting).
const AGAIN: Duration = Duration::from_secs(1);

/// Why a call on the held connection got no answer of the runtime's.
#[derive(Debug)]
pub enum HeldError {
    /// No runtime is connected now.
    NotRunning,
    /// The runtime's error answer.
    Rpc(RpcError),
    /// The connection ended before the answer came.
    Gone,
}

/// What the held connection passes on.
#[derive(Debug, Clone, PartialEq)]
pub enum Heard {
    /// A notification the runtime pushed, as sent.
    Push { method: String, params: Value },
    /// The connection ended: the runtime let go of every chat it held.
    LetGo,
}

/// The held connection, while the runtime is there. Cheap to clone.
#[derive(Clone, Default)]
pub struct Held {
    live: Arc<Mutex<Option<Arc<Line>>>>,
}

/// One connection: its writing half and the callers waiting for their answers.
struct Line {
    writer: tokio::sync::Mutex<WriteHalf<Stream>>,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, RpcError>>>>,
    next_id: AtomicU64,
}

impl Line {
    async fn call(&self, method: &str, params: Value) -> Result<Value, HeldError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        self.waiting.lock().recover().insert(id, answer);
        let mut text = rpc::request(&json!(id), method, params);
        text.push('\n');
        if self.writer.lock().await.write_all(text.as_bytes()).await.is_err() {
            self.waiting.lock().recover().remove(&id);
            return Err(HeldError::Gone);
        }
        match answered.await {
            Ok(result) => result.map_err(HeldError::Rpc),
            Err(_) => Err(HeldError::Gone),
        }
    }

    /// Hands an answer to its caller.
    fn answer(&self, id: &Value, result: Result<Value, RpcError>) {
        let Some(id) = id.as_u64() else { return };
        if let Some(caller) = self.waiting.lock().recover().remove(&id) {
            let _ = caller.send(result);
        }
    }
}

impl Held {
    /// A call on the held connection (a chat is held by the connection that opened it).
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, HeldError> {
        let line = self.live.lock().recover().clone().ok_or(HeldError::NotRunning)?;
        line.call(method, params).await
    }

    /// Keeps a connection to the runtime at `socket` (presenting the cookie read from `cookie`),
    /// subscribed to `streams`, for as long as this process runs: each push goes to `heard`, and so
    /// does the end of a connection that was held; it is made again whenever the runtime goes and
    /// comes back.
    pub async fn keep(self, socket: PathBuf, cookie: PathBuf, streams: Streams, heard: impl Fn(Heard)) {
        loop {
            if let Ok(stream) = endpoint::connect(&socket).await
                && self.serve(stream, &cookie, &streams, &heard).await
            {
                heard(Heard::LetGo);
            }
            tokio::time::sleep(AGAIN).await;
        }
    }

    /// One connection, until it ends: the cookie, the subscription, then every line read; whether
    /// it was held.
    async fn serve(&self, stream: Stream, cookie: &Path, streams: &Streams, heard: &impl Fn(Heard)) -> bool {
        let (reader, writer) = tokio::io::split(stream);
        let line = Arc::new(Line {
            writer: tokio::sync::Mutex::new(writer),
            waiting: Mutex::default(),
            next_id: AtomicU64::new(1),
        });
        let admitted = async {
            let presented = Cookie::read(cookie).ok()?;
            let hello = json!({ "cookie": presented.as_str() });
            line.call(ControlMethod::Hello.name(), hello).await.ok()?;
            let streams = serde_json::to_value(streams).ok()?;
            line.call(ControlMethod::Subscribe.name(), streams).await.ok()?;
            *self.live.lock().recover() = Some(line.clone());
            // Held from here until the reading ends.
            std::future::pending::<Option<()>>().await
        };
        tokio::select! {
            () = read(reader, &line, heard) => {}
            _ = admitted => {
                tracing::warn!("the device runtime did not admit the window's connection");
            }
        }
        let held = {
            let mut live = self.live.lock().recover();
            let held = live.as_ref().is_some_and(|held| Arc::ptr_eq(held, &line));
            if held {
                *live = None;
            }
            held
        };
        // Every caller still waiting hears that the connection went.
        line.waiting.lock().recover().clear();
        held
    }
}

/// Reads the connection until it ends: answers to their callers, pushes to `heard`.
async fn read(reader: ReadHalf<Stream>, line: &Line, heard: &impl Fn(Heard)) {
    let mut reader = BufReader::new(reader);
    let mut text = String::new();
    loop {
        text.clear();
        match reader.read_line(&mut text).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        match rpc::parse(text.trim_end()) {
            Ok(Incoming::Response { id, result }) => line.answer(&id, result),
            Ok(Incoming::Notification { method, params }) => heard(Heard::Push { method, params }),
            // The runtime asks a client nothing; a line it could not read is skipped.
            Ok(Incoming::Request { .. }) | Err(_) => {}
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::net::UnixListener;

    const WAIT: Duration = Duration::from_secs(10);

    /// Reads one request: its id, method and params.
    async fn request(reader: &mut BufReader<tokio::net::unix::OwnedReadHalf>) -> (Value, String, Value) {
        let mut text = String::new();
        tokio::time::timeout(WAIT, reader.read_line(&mut text))
            .await
            .expect("a request in time")
            .expect("readable");
        let value: Value = serde_json::from_str(&text).expect("a JSON line");
        (
            value["id"].clone(),
            value["method"].as_str().unwrap_or_default().to_string(),
            value["params"].clone(),
        )
    }

    async fn send(writer: &mut tokio::net::unix::OwnedWriteHalf, value: Value) {
        writer
            .write_all(format!("{value}\n").as_bytes())
            .await
            .expect("written");
    }

    /// Waits until the connection is held (hello and subscribe answered).
    async fn until_held(held: &Held) {
        tokio::time::timeout(WAIT, async {
            while held.live.lock().recover().is_none() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("held in time");
    }

    /// The runtime's side played on a real socket: the cookie and the subscription first, then two
    /// calls in flight at once, answered in the other order with a push between, then the runtime
    /// goes and comes back.
    #[tokio::test]
    async fn calls_and_pushes_share_one_connection_and_it_is_made_again() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let socket = dir.path().join("control.sock");
        let cookie = dir.path().join("cookie");
        let secret = Cookie::fresh().expect("a cookie");
        secret.write(&cookie).expect("cookie written");
        let listener = UnixListener::bind(&socket).expect("bound");
        let held = Held::default();
        let (pushed, mut pushes) = tokio::sync::mpsc::unbounded_channel();
        let streams = Streams {
            sessions: true,
            terminals: true,
        };
        tokio::spawn(held.clone().keep(socket, cookie, streams, move |heard| {
            let _ = pushed.send(heard);
        }));
        assert!(matches!(
            held.call("chat/models", json!({})).await,
            Err(HeldError::NotRunning)
        ));

        let (stream, _) = tokio::time::timeout(WAIT, listener.accept())
            .await
            .expect("connects")
            .expect("accepted");
        let (read, mut writer) = stream.into_split();
        let mut reader = BufReader::new(read);
        let (id, method, params) = request(&mut reader).await;
        assert_eq!(
            (method.as_str(), params["cookie"].as_str()),
            ("hello", Some(secret.as_str()))
        );
        send(&mut writer, json!({ "jsonrpc": "2.0", "id": id, "result": {} })).await;
        let (id, method, params) = request(&mut reader).await;
        assert_eq!(
            (method.as_str(), &params),
            ("subscribe", &json!({ "sessions": true, "terminals": true }))
        );
        send(&mut writer, json!({ "jsonrpc": "2.0", "id": id, "result": {} })).await;
        until_held(&held).await;

        let open = tokio::spawn({
            let held = held.clone();
            async move { held.call("chat/open", json!({ "cwd": "/w" })).await }
        });
        let (open_id, method, _) = request(&mut reader).await;
        assert_eq!(method, "chat/open");
        let models = tokio::spawn({
            let held = held.clone();
            async move { held.call("chat/models", json!({})).await }
        });
        let (models_id, method, _) = request(&mut reader).await;
        assert_eq!(method, "chat/models");
        // The later call is answered first, a push comes while the first still waits, then its answer.
        send(
            &mut writer,
            json!({ "jsonrpc": "2.0", "id": models_id, "result": [{ "id": "qwen", "name": "Qwen" }] }),
        )
        .await;
        send(
            &mut writer,
            json!({ "jsonrpc": "2.0", "method": "card", "params": { "session_id": "ses_1" } }),
        )
        .await;
        let refused =
            json!({ "code": -32602, "message": "An editor holds it.", "data": { "reason": "held" } });
        send(
            &mut writer,
            json!({ "jsonrpc": "2.0", "id": open_id, "error": refused }),
        )
        .await;
        let models = tokio::time::timeout(WAIT, models)
            .await
            .expect("answered")
            .expect("ran");
        assert_eq!(
            models.expect("the models"),
            json!([{ "id": "qwen", "name": "Qwen" }])
        );
        match tokio::time::timeout(WAIT, open)
            .await
            .expect("answered")
            .expect("ran")
        {
            Err(HeldError::Rpc(e)) => assert_eq!(
                (e.message.as_str(), e.data),
                ("An editor holds it.", Some(json!({ "reason": "held" })))
            ),
            other => panic!("the runtime's refusal, not {other:?}"),
        }
        let push = tokio::time::timeout(WAIT, pushes.recv())
            .await
            .expect("pushed")
            .expect("a push");
        let card = Heard::Push {
            method: "card".into(),
            params: json!({ "session_id": "ses_1" }),
        };
        assert_eq!(push, card);

        // A call in flight when the runtime goes hears that it went; the next finds none running.
        let waiting = tokio::spawn({
            let held = held.clone();
            async move { held.call("chat/prompt", json!({})).await }
        });
        let _ = request(&mut reader).await;
        drop((reader, writer));
        let gone = tokio::time::timeout(WAIT, waiting)
            .await
            .expect("answered")
            .expect("ran");
        assert!(matches!(gone, Err(HeldError::Gone)), "{gone:?}");
        tokio::time::timeout(WAIT, async {
            while held.live.lock().recover().is_some() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("let go in time");
        assert!(matches!(
            held.call("chat/models", json!({})).await,
            Err(HeldError::NotRunning)
        ));
        let said = tokio::time::timeout(WAIT, pushes.recv())
            .await
            .expect("said")
            .expect("heard");
        assert_eq!(said, Heard::LetGo, "the page hears that its chats were let go");
        // The runtime is back: the window connects again.
        let (again, _) = tokio::time::timeout(WAIT, listener.accept())
            .await
            .expect("connects again")
            .expect("accepted");
        let (read, _writer) = again.into_split();
        let (_, method, _) = request(&mut BufReader::new(read)).await;
        assert_eq!(method, "hello");
    }

    /// The next push named `method` whose params match.
    async fn pushed(
        pushes: &mut tokio::sync::mpsc::UnboundedReceiver<Heard>,
        method: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> Value {
        tokio::time::timeout(WAIT, async {
            loop {
                if let Heard::Push { method: name, params } = pushes.recv().await.expect("the pushes go on")
                    && name == method
                    && matches(&params)
                {
                    return params;
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no {method} push came"))
    }

    /// The composer's calls, with the params the page sends, on the real runtime (hosted here,
    /// linked to the reference peer and its model): a chat opened in a root, a prompt whose card
    /// comes as a push on the same connection and is answered through chat/answer, the answer
    /// streamed back, and a chat let go that takes no prompt. Needs a Secret Service (run it
    /// through scripts/with-keyring).
    #[tokio::test(flavor = "multi_thread")]
    async fn the_composer_s_calls_hold_a_chat_on_the_real_runtime() {
        use lembas_peer::ModelReply;
        use lembas_testkit::{Config, LinkedRuntime, linked_runtime};
        let LinkedRuntime {
            home,
            peer,
            runtime: _runtime,
            link: _link,
        } = linked_runtime(
            "window-composer-token-7c2d",
            "the window's composer test",
            |url, home| Config::linked_to(url).work_in(&home.work()),
        )
        .await
        .expect("a linked runtime");
        let work = home.work();
        std::fs::create_dir_all(&work).expect("the work folder");
        let held = Held::default();
        let (pushed_to, mut pushes) = tokio::sync::mpsc::unbounded_channel();
        let streams = Streams {
            sessions: true,
            terminals: true,
        };
        tokio::spawn(
            held.clone()
                .keep(home.socket(), home.cookie(), streams, move |heard| {
                    let _ = pushed_to.send(heard);
                }),
        );
        until_held(&held).await;

        let models = held
            .call("chat/models", json!({}))
            .await
            .expect("the instance's models");
        let model = lembas_peer::DEFAULT_MODEL;
        assert!(
            models
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["id"] == model)),
            "{models}"
        );
        let opened = held
            .call(
                "chat/open",
                json!({ "cwd": work.display().to_string(), "model": model }),
            )
            .await
            .expect("opened");
        let session = opened["session_id"].as_str().expect("an id").to_string();
        assert_eq!(opened["sharing"]["refused"], Value::Null, "{opened}");
        assert_eq!(
            opened["sharing"]["ask"], true,
            "chat.share is ask and the folder was never asked: {opened}"
        );
        held.call(
            "chat/configure",
            json!({ "session_id": session, "mode": "manual" }),
        )
        .await
        .expect("manual: a write asks");

        peer.model().push(ModelReply::tool_call(
            "call_w",
            "write",
            json!({ "path": "from-window.txt", "content": "yes" }),
        ));
        peer.model().push(ModelReply::text("Written from the window."));
        let prompted = held
            .call(
                "chat/prompt",
                json!({ "session_id": session, "text": "write it", "turn_id": "turn-window-1" }),
            )
            .await
            .expect("prompted");
        assert_eq!(prompted["turn_id"], "turn-window-1");
        let card = pushed(&mut pushes, "card", |p| p["session_id"] == session.as_str()).await;
        assert_eq!(card["card"]["toolCall"]["toolCallId"], "call_w", "{card}");
        let answer = json!({ "outcome": { "outcome": "selected", "optionId": "once" }, "_meta": null });
        held.call(
            "chat/answer",
            json!({ "session_id": session, "tool_call_id": "call_w", "answer": answer }),
        )
        .await
        .expect("the card takes the window's answer");
        pushed(&mut pushes, "session/update", |p| {
            p["session_id"] == session.as_str()
                && p["update"]["sessionUpdate"] == "agent_message_chunk"
                && p["update"]["content"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("Written"))
        })
        .await;
        assert_eq!(
            std::fs::read_to_string(work.join("from-window.txt"))
                .ok()
                .as_deref(),
            Some("yes")
        );

        held.call("chat/close", json!({ "session_id": session }))
            .await
            .expect("let go");
        match held
            .call("chat/prompt", json!({ "session_id": session, "text": "again" }))
            .await
        {
            Err(HeldError::Rpc(e)) => assert_eq!(e.data, Some(json!({ "reason": "not_held" })), "{e:?}"),
            other => panic!("a chat let go takes no prompt: {other:?}"),
        }
    }
}
