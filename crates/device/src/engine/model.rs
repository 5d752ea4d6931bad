//! The instance's OpenAI-compatible API as the engine uses it (docs/protocol.md "The model"): the model
//! list as the device's token sees it, and one streamed chat completion per step, read as server-sent
//! events with tool calls assembled from their fragments by index.

use futures_util::StreamExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

use super::step_request::StepRequest;
use crate::instance_answers::{InstanceAnswer, ModelEntry, ModelList};
use crate::keychain::Token;
use serde::de::DeserializeOwned;

/// The retry waits before the second and the third try; a `Retry-After` up to the cap replaces one.
const RETRY_WAITS: [Duration; 2] = [Duration::from_secs(1), Duration::from_secs(4)];
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);
/// How long a model may take to start answering, and to send its next chunk.
const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(300);

/// Why a step could not get an answer from the model. `Display` is a sentence for a person.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// An HTTP status other than success (after the retries, for the retried ones).
    Status {
        model: String,
        status: u16,
        message: String,
    },
    /// No connection, or it dropped before the first byte (after the retries).
    Unreachable { model: String, why: String },
    /// The stream ended before `[DONE]` or held something that is not a chunk.
    Broken { model: String, why: String },
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Status {
                model,
                status,
                message,
            } if message.is_empty() => {
                write!(
                    f,
                    "The model {model} could not answer: the instance said HTTP {status}."
                )
            }
            ModelError::Status {
                model,
                status,
                message,
            } => write!(
                f,
                "The model {model} could not answer: the instance said HTTP {status} ({message})."
            ),
            ModelError::Unreachable { model, why } => {
                write!(f, "The model {model} could not be reached: {why}.")
            }
            ModelError::Broken { model, why } => {
                write!(f, "The answer of the model {model} broke off: {why}.")
            }
        }
    }
}

/// One tool call as the model asked for it, assembled.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// What one step streamed, once it is over.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepOutput {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<String>,
    pub usage: Option<Value>,
}

/// What the stream gives while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Streamed {
    Text(String),
    Reasoning(String),
    Done(StepOutput),
}

/// `/api/v1/instance` as the engine uses it; a field the instance leaves out (or sends empty) is
/// absent here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct About {
    /// Its name for itself, trimmed, at most 200 characters.
    pub name: Option<String>,
    /// What the device's token may do (space-separated); empty when the instance says none.
    pub scope: String,
    /// The model it names as this device's default.
    pub default_model: Option<String>,
}

impl About {
    fn of(body: &InstanceAnswer) -> About {
        let text = |field: &Option<String>| {
            field
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        About {
            name: text(&body.name).map(|n| n.chars().take(200).collect()),
            scope: text(&body.scope).unwrap_or_default(),
            default_model: text(&body.default_model),
        }
    }
}

/// Where the instance is and who the device is to it.
#[derive(Clone)]
pub struct Instance {
    pub http: reqwest::Client,
    pub base: url::Url,
    pub token: Token,
}

impl Instance {
    fn url(&self, path: &str) -> Result<url::Url, String> {
        self.base
            .join(path)
            .map_err(|e| format!("the server address cannot take {path}: {e}"))
    }

    /// The chat models (kind `chat`, or no kind) the instance serves to this device.
    pub async fn chat_models(&self) -> Result<Vec<String>, String> {
        Ok(self
            .model_list()
            .await?
            .iter()
            .filter(|m| m.is_chat())
            .filter_map(|m| m.id().map(str::to_string))
            .collect())
    }

    /// Whether `model` takes images: its `/v1/models` entry lists `image` in `input_modalities`
    /// (or in `architecture.input_modalities`). A list that cannot be read says no: the image then
    /// goes as a line, which every model can take.
    pub async fn takes_images(&self, model: &str) -> bool {
        match self.model_list().await {
            Ok(list) => list
                .iter()
                .find(|m| m.id() == Some(model))
                .is_some_and(ModelEntry::takes_images),
            Err(why) => {
                tracing::warn!("{why}; images go to {model} as lines");
                false
            }
        }
    }

    /// `model`'s context window as its `/v1/models` entry gives it (`context_length`, or
    /// `context_window`); `None` when it gives none or the list cannot be read.
    pub async fn context_window(&self, model: &str) -> Option<u64> {
        let list = match self.model_list().await {
            Ok(list) => list,
            Err(why) => {
                tracing::warn!("{why}; the context window of {model} is taken as the default");
                return None;
            }
        };
        list.iter().find(|m| m.id() == Some(model))?.context_window()
    }

    /// The entries of `/v1/models`.
    async fn model_list(&self) -> Result<Vec<ModelEntry>, String> {
        let body: ModelList = self.get_json("v1/models", "the instance's model list").await?;
        Ok(body.data.unwrap_or_default())
    }

    /// A GET of the instance's with the device's token, read as JSON; errors name `what`. One
    /// whose connection failed before any answer is sent once more at once: a kept-alive
    /// connection the server closed just as it was reused (a server restarting) fails that way,
    /// and the second try gets a fresh connection (found by the chaos soak: session/new refused
    /// after a peer restart).
    async fn get_json<T: DeserializeOwned>(&self, path: &str, what: &str) -> Result<T, String> {
        let url = self.url(path)?;
        let get = || self.http.get(url.clone()).bearer_auth(self.token.expose()).send();
        let response = match get().await {
            Err(e) if e.status().is_none() && !e.is_timeout() => {
                tracing::debug!("{what}: {e}; sending it once more");
                get().await
            }
            sent => sent,
        }
        .map_err(|e| format!("{what} could not be read: {e}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("{what} answered HTTP {}", status.as_u16()));
        }
        response
            .json()
            .await
            .map_err(|e| format!("{what} is not its JSON: {e}"))
    }

    /// What the instance says of itself and of the device's token (`/api/v1/instance`), in one read.
    pub async fn about(&self) -> Result<About, String> {
        let body = self
            .get_json("api/v1/instance", "the instance's /api/v1/instance")
            .await?;
        Ok(About::of(&body))
    }

    /// Opens one step's stream, retrying a 429, a 5xx or a connection lost before the first byte
    /// (at most three tries, 1 s then 4 s, a Retry-After up to 30 s honoured).
    pub async fn open(&self, body: &StepRequest) -> Result<ModelStream, ModelError> {
        let model = body.model.clone();
        let url = self
            .url("v1/chat/completions")
            .map_err(|why| ModelError::Unreachable {
                model: model.clone(),
                why,
            })?;
        let mut tries = 0;
        loop {
            let sent = self
                .http
                .post(url.clone())
                .bearer_auth(self.token.expose())
                .json(body)
                .send()
                .await;
            let (error, retry_after) = match sent {
                Ok(response) if response.status().is_success() => {
                    return Ok(ModelStream::new(model, response));
                }
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .map(Duration::from_secs);
                    let text = response.text().await.unwrap_or_default();
                    let message = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| {
                            v.pointer("/error/message")
                                .or_else(|| v.get("detail"))
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        })
                        .unwrap_or_default();
                    let error = ModelError::Status {
                        model: model.clone(),
                        status,
                        message,
                    };
                    if status != 429 && status < 500 {
                        return Err(error);
                    }
                    (error, retry_after)
                }
                Err(e) => (
                    ModelError::Unreachable {
                        model: model.clone(),
                        why: e.to_string(),
                    },
                    None,
                ),
            };
            let Some(wait) = RETRY_WAITS.get(tries) else {
                return Err(error);
            };
            tries += 1;
            let wait = retry_after.map(|r| r.min(RETRY_AFTER_CAP)).unwrap_or(*wait);
            tracing::warn!(%error, retry_in_ms = wait.as_millis() as u64, "model request retried");
            tokio::time::sleep(wait).await;
        }
    }
}

/// One step's server-sent events, read as they arrive.
pub struct ModelStream {
    model: String,
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: Vec<u8>,
    output: StepOutput,
    calls: BTreeMap<u64, ToolCall>,
    /// Deltas read from one network chunk, not handed out yet.
    ready: std::collections::VecDeque<Streamed>,
    done: bool,
}

impl ModelStream {
    fn new(model: String, response: reqwest::Response) -> Self {
        Self {
            model,
            body: response.bytes_stream().boxed(),
            buffer: Vec::new(),
            output: StepOutput::default(),
            calls: BTreeMap::new(),
            ready: Default::default(),
            done: false,
        }
    }

    /// A stream read from chunks already in memory, as the network would hand them over: for the
    /// `sse` fuzz target, which splits bytes at arbitrary points.
    #[cfg(feature = "fuzzing")]
    pub fn from_chunks(model: String, chunks: Vec<bytes::Bytes>) -> Self {
        let body = futures_util::stream::iter(chunks.into_iter().map(Ok));
        Self {
            model,
            body: body.boxed(),
            buffer: Vec::new(),
            output: StepOutput::default(),
            calls: BTreeMap::new(),
            ready: Default::default(),
            done: false,
        }
    }

    fn broken(&self, why: impl Into<String>) -> ModelError {
        ModelError::Broken {
            model: self.model.clone(),
            why: why.into(),
        }
    }

    /// The next text or thinking delta, or the step's whole output once `[DONE]` arrived.
    pub async fn next(&mut self) -> Result<Streamed, ModelError> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                return Ok(item);
            }
            if self.done {
                let mut output = std::mem::take(&mut self.output);
                output.tool_calls = std::mem::take(&mut self.calls).into_values().collect();
                return Ok(Streamed::Done(output));
            }
            let chunk = match tokio::time::timeout(FIRST_BYTE_TIMEOUT, self.body.next()).await {
                Err(_) => return Err(self.broken("no data for five minutes")),
                Ok(None) => return Err(self.broken("the stream ended before [DONE]")),
                Ok(Some(Err(e))) => return Err(self.broken(format!("the connection failed ({e})"))),
                Ok(Some(Ok(bytes))) => bytes,
            };
            self.buffer.extend_from_slice(&chunk);
            while let Some((end, gap)) = event_end(&self.buffer) {
                let event: Vec<u8> = self.buffer.drain(..end + gap).collect();
                self.read_event(&event[..end])?;
            }
        }
    }

    fn read_event(&mut self, event: &[u8]) -> Result<(), ModelError> {
        let text = String::from_utf8_lossy(event);
        let mut data = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            }
        }
        if data.is_empty() {
            return Ok(()); // a comment or keep-alive
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value =
            serde_json::from_str(&data).map_err(|e| self.broken(format!("a chunk is not JSON ({e})")))?;
        if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
            return Err(self.broken(format!("the instance sent an error: {message}")));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.output.usage = Some(usage.clone());
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.output.finish_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        let reasoning = delta
            .get("reasoning_content")
            .or_else(|| delta.get("reasoning"))
            .and_then(Value::as_str);
        if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
            self.output.reasoning.push_str(r);
            self.ready.push_back(Streamed::Reasoning(r.to_string()));
        }
        if let Some(t) = delta
            .get("content")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            self.output.text.push_str(t);
            self.ready.push_back(Streamed::Text(t.to_string()));
        }
        for fragment in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = fragment.get("index").and_then(Value::as_u64).unwrap_or(0);
            let call = self.calls.entry(index).or_insert_with(|| ToolCall {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            if let Some(id) = fragment.get("id").and_then(Value::as_str) {
                call.id = id.to_string();
            }
            if let Some(name) = fragment.pointer("/function/name").and_then(Value::as_str) {
                call.name.push_str(name);
            }
            if let Some(args) = fragment.pointer("/function/arguments").and_then(Value::as_str) {
                call.arguments.push_str(args);
            }
        }
        Ok(())
    }
}

/// Where the first event in `buffer` ends, and the length of the blank line after it.
fn event_end(buffer: &[u8]) -> Option<(usize, usize)> {
    let lf = buffer.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = buffer.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn about_reads_what_the_instance_says_and_leaves_out_the_empty() {
        let of = |v| About::of(&serde_json::from_value(v).unwrap());
        let full = of(
            json!({ "name": "  Home  ", "scope": "models link memory", "default_model": "example/chat-fast" }),
        );
        assert_eq!(
            full,
            About {
                name: Some("Home".into()),
                scope: "models link memory".into(),
                default_model: Some("example/chat-fast".into())
            }
        );
        assert_eq!(of(json!({ "name": " ", "default_model": "" })), About::default());
        assert_eq!(of(json!({ "name": 7, "scope": null })), About::default());
        let long = of(json!({ "name": "x".repeat(500) }));
        assert_eq!(long.name.map(|n| n.chars().count()), Some(200));
    }

    /// A server that answers the first request of a kept-alive connection, then closes it when
    /// the second comes without answering (the race of a server closing an idle connection just
    /// as the client reuses it), and answers every request on a fresh connection.
    async fn closing_server() -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let body = r#"{"data":[{"id":"m"}]}"#;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            while let Ok((mut socket, _)) = listener.accept().await {
                let answer = answer.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    if matches!(socket.read(&mut buf).await, Ok(n) if n > 0) {
                        let _ = socket.write_all(answer.as_bytes()).await;
                    }
                    // The next request on this connection: closed unanswered.
                    let _ = socket.read(&mut buf).await;
                });
            }
        });
        address
    }

    #[tokio::test]
    async fn a_get_on_a_connection_the_server_closed_is_sent_again() {
        let address = closing_server().await;
        let instance = Instance {
            http: reqwest::Client::new(),
            base: url::Url::parse(&format!("http://{address}/")).unwrap(),
            token: Token::new("t").unwrap(),
        };
        assert_eq!(instance.chat_models().await.unwrap(), ["m"]);
        // Reuses the kept-alive connection, which the server closes: sent again on a fresh one.
        assert_eq!(instance.chat_models().await.unwrap(), ["m"]);
    }

    #[test]
    fn finds_event_ends_of_either_kind() {
        assert_eq!(event_end(b"data: a\n\ndata: b"), Some((7, 2)));
        assert_eq!(event_end(b"data: a\r\n\r\n"), Some((7, 4)));
        assert_eq!(event_end(b"data: a\n"), None);
    }
}
