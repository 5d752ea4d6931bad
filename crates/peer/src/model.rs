//! The peer's scripted model: an OpenAI-compatible `POST /v1/chat/completions` that streams the
//! replies a test queued, in order, one per request, and answers with a deterministic demo
//! behaviour when the queue is empty (see [`ScriptedModel`]).

mod demo;
mod stream;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use serde_json::Value;
use tokio::sync::watch;

use crate::lock;

pub(crate) use stream::chat_completions;

/// One scripted answer to one chat completion request.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelReply {
    /// A streamed answer: the parts in order, then `finish_reason` (`stop`, `tool_calls`,
    /// `length`…), then the usage chunk when the request asked for it, then `[DONE]`.
    Stream { parts: Vec<Part>, finish_reason: String },
    /// An HTTP error instead of a stream: status (429, 500, 503…), optional `Retry-After` seconds,
    /// and a message, in OpenAI's error body.
    Error {
        status: u16,
        retry_after: Option<u64>,
        message: String,
    },
    /// Starts a stream (role chunk plus `parts`), then drops the connection without a finish
    /// chunk or `[DONE]`: a stream cut mid-way.
    Cut { parts: Vec<Part> },
}

/// One piece of a streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `delta.content`, split into several chunks when longer than a word; none when empty.
    Text(String),
    /// `delta.reasoning_content`, split as text is.
    Reasoning(String),
    /// One tool call: a chunk with its id, type and name, then its arguments in pieces of about
    /// 7 bytes. Its `index` is its position among the reply's tool calls.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
    },
    /// Stops sending here until [`ScriptedModel::release`] is called (or the client goes away, or
    /// the peer stops); then goes on with the next parts.
    Hang,
}

impl ModelReply {
    /// Streams `text`, finishing with `stop`.
    pub fn text(text: &str) -> Self {
        ModelReply::Stream {
            parts: vec![Part::Text(text.to_string())],
            finish_reason: "stop".to_string(),
        }
    }

    /// Streams one tool call, finishing with `tool_calls`.
    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Self {
        ModelReply::Stream {
            parts: vec![Part::ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: arguments.to_string(),
            }],
            finish_reason: "tool_calls".to_string(),
        }
    }
}

/// The peer's model: a queue of replies, and a record of requests. Every clone is the same model.
///
/// A request is recorded when it carries the token and its body is JSON, before anything else is
/// checked, so a test can read what a refused request sent. A queued reply is used only by a
/// request that gets an answer from the model: a 401, 400 or unknown-model 404 leaves the queue
/// as it was.
///
/// With the queue empty the model answers as the demo (`scripts/demo`, benchmarks), looking at
/// the last message: after a `tool` message, `Done: ` and the first line of its result; else from
/// the last user message, `run CMD` calls `bash`, `read PATH` calls `read`, `show PATH` calls
/// `show`, `write PATH CONTENT` calls `write`, and anything else is echoed as `You said: TEXT`. Tool call ids are `call_1`,
/// `call_2`… counting per peer.
#[derive(Clone)]
pub struct ScriptedModel {
    shared: Arc<ModelShared>,
}

struct ModelShared {
    replies: Mutex<VecDeque<ModelReply>>,
    requests: Mutex<RecordedRequests>,
    /// How many requests were recorded, so `next_request` can wait for one.
    recorded: watch::Sender<usize>,
    hangs: Mutex<HangState>,
    /// Bumped by each release that let waiting hangs go.
    releases: watch::Sender<u64>,
    /// The demo's tool call ids and the completions' ids count from here.
    next_call: AtomicU64,
    next_completion: AtomicU64,
}

#[derive(Default)]
struct RecordedRequests {
    bodies: Vec<Value>,
    /// How many `next_request` handed out.
    taken: usize,
}

#[derive(Default)]
struct HangState {
    /// Hangs waiting now for a release.
    waiting: usize,
    /// A release came while no hang waited: the next one reached goes straight on.
    banked: bool,
}

impl ScriptedModel {
    pub(crate) fn new() -> Self {
        ScriptedModel {
            shared: Arc::new(ModelShared {
                replies: Mutex::new(VecDeque::new()),
                requests: Mutex::new(RecordedRequests::default()),
                recorded: watch::channel(0).0,
                hangs: Mutex::new(HangState::default()),
                releases: watch::channel(0).0,
                next_call: AtomicU64::new(1),
                next_completion: AtomicU64::new(1),
            }),
        }
    }

    /// Queues a reply; replies are answered in order, one per request.
    pub fn push(&self, reply: ModelReply) {
        lock(&self.shared.replies).push_back(reply);
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.requests).bodies.clone()
    }

    /// The next request body not yet handed out by this method (on any clone), waiting up to
    /// `within` for one to arrive.
    pub async fn next_request(&self, within: Duration) -> anyhow::Result<Value> {
        let deadline = tokio::time::Instant::now() + within;
        // Subscribed before looking, so a request recorded in between still wakes the wait.
        let mut recorded = self.shared.recorded.subscribe();
        loop {
            {
                let mut requests = lock(&self.shared.requests);
                if let Some(body) = requests.bodies.get(requests.taken).cloned() {
                    requests.taken += 1;
                    return Ok(body);
                }
            }
            match tokio::time::timeout_at(deadline, recorded.changed()).await {
                Ok(Ok(())) => continue,
                // The sender lives as long as `self`, so this cannot end; a timeout can.
                Ok(Err(_)) | Err(_) => {
                    return Err(anyhow!("no chat completion request arrived within {within:?}"));
                }
            }
        }
    }

    /// Lets every [`Part::Hang`] now waiting go on; when none waits, the next one reached goes
    /// straight on instead.
    pub fn release(&self) {
        let mut hangs = lock(&self.shared.hangs);
        if hangs.waiting > 0 {
            hangs.waiting = 0;
            self.shared.releases.send_modify(|release| *release += 1);
        } else {
            hangs.banked = true;
        }
    }

    /// How many replies are still queued.
    pub fn pending(&self) -> usize {
        lock(&self.shared.replies).len()
    }

    pub(crate) fn record(&self, body: Value) {
        let count = {
            let mut requests = lock(&self.shared.requests);
            requests.bodies.push(body);
            requests.bodies.len()
        };
        self.shared.recorded.send_replace(count);
    }

    /// The queued reply for this request, or the demo's answer to it when none is queued.
    pub(crate) fn reply_to(&self, request: &Value) -> ModelReply {
        let queued = lock(&self.shared.replies).pop_front();
        queued.unwrap_or_else(|| demo::reply(request, || self.next_call_id()))
    }

    pub(crate) fn next_call_id(&self) -> String {
        format!("call_{}", self.shared.next_call.fetch_add(1, Ordering::SeqCst))
    }

    pub(crate) fn next_completion_id(&self) -> String {
        let n = self.shared.next_completion.fetch_add(1, Ordering::SeqCst);
        format!("chatcmpl-peer{n:06}")
    }

    /// Waits at a [`Part::Hang`] until [`ScriptedModel::release`]. Dropping the future (the
    /// client went away) stops counting it as waiting, so a later release is banked for the
    /// next hang instead of being spent on nobody.
    pub(crate) async fn wait_for_release(&self) {
        let (mut releases, seen) = {
            let mut hangs = lock(&self.shared.hangs);
            if hangs.banked {
                hangs.banked = false;
                return;
            }
            hangs.waiting += 1;
            let releases = self.shared.releases.subscribe();
            let seen = *releases.borrow();
            (releases, seen)
        };
        let waiting = WaitingHang { model: self, seen };
        // The sender lives as long as `self`, so `changed` ends only with a release.
        let _ = releases.changed().await;
        drop(waiting);
    }
}

/// A hang counted in `HangState::waiting`; uncounts itself when dropped before a release.
struct WaitingHang<'a> {
    model: &'a ScriptedModel,
    seen: u64,
}

impl Drop for WaitingHang<'_> {
    fn drop(&mut self) {
        let mut hangs = lock(&self.model.shared.hangs);
        // The check and the release's reset happen under the same lock, so a hang released
        // in between is not uncounted twice.
        if *self.model.shared.releases.borrow() == self.seen {
            hangs.waiting = hangs.waiting.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_release_with_no_hang_waiting_lets_the_next_one_through() {
        let model = ScriptedModel::new();
        model.release();
        tokio::time::timeout(Duration::from_secs(1), model.wait_for_release())
            .await
            .expect("the banked release let the hang through");
        // Banked once only.
        let waiting = tokio::time::timeout(Duration::from_millis(100), model.wait_for_release()).await;
        assert!(waiting.is_err());
    }

    #[tokio::test]
    async fn a_release_lets_every_waiting_hang_go_on() {
        let model = ScriptedModel::new();
        let first = tokio::spawn({
            let model = model.clone();
            async move { model.wait_for_release().await }
        });
        let second = tokio::spawn({
            let model = model.clone();
            async move { model.wait_for_release().await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!first.is_finished() && !second.is_finished());
        model.release();
        tokio::time::timeout(Duration::from_secs(1), async {
            first.await.unwrap();
            second.await.unwrap();
        })
        .await
        .expect("both hangs went on");
        // Both were waiting, so nothing was banked.
        assert!(!lock(&model.shared.hangs).banked);
    }

    #[tokio::test]
    async fn a_hang_given_up_does_not_swallow_the_next_release() {
        let model = ScriptedModel::new();
        let given_up = tokio::time::timeout(Duration::from_millis(50), model.wait_for_release()).await;
        assert!(given_up.is_err());
        model.release();
        tokio::time::timeout(Duration::from_secs(1), model.wait_for_release())
            .await
            .expect("the release was banked for the next hang");
    }

    #[tokio::test]
    async fn queued_replies_come_first_then_the_demo() {
        let model = ScriptedModel::new();
        model.push(ModelReply::text("one"));
        model.push(ModelReply::text("two"));
        assert_eq!(model.pending(), 2);
        let request = serde_json::json!({ "messages": [{ "role": "user", "content": "hi" }] });
        assert_eq!(model.reply_to(&request), ModelReply::text("one"));
        assert_eq!(model.reply_to(&request), ModelReply::text("two"));
        assert_eq!(model.pending(), 0);
        assert_eq!(model.reply_to(&request), ModelReply::text("You said: hi"));
    }
}
