//! One step's answer as the engine reads it: the model's server-sent events, read as they arrive,
//! with tool calls assembled from their fragments by index.

use futures_util::StreamExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

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

/// One step's server-sent events, read as they arrive.
pub struct ModelStream {
    model: String,
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    pending: Pending,
    output: StepOutput,
    calls: BTreeMap<u64, ToolCall>,
    /// Deltas read from one network chunk, not handed out yet.
    ready: std::collections::VecDeque<Streamed>,
    done: bool,
}

impl ModelStream {
    pub(super) fn new(model: String, response: reqwest::Response) -> Self {
        Self {
            model,
            body: response.bytes_stream().boxed(),
            pending: Pending::default(),
            output: StepOutput::default(),
            calls: BTreeMap::new(),
            ready: Default::default(),
            done: false,
        }
    }

    /// A stream read from chunks already in memory, as the network would hand them over: a
    /// scripted model's answer, and the `sse` fuzz target's bytes split at arbitrary points.
    pub fn from_chunks(model: String, chunks: Vec<bytes::Bytes>) -> Self {
        let body = futures_util::stream::iter(chunks.into_iter().map(Ok));
        Self {
            model,
            body: body.boxed(),
            pending: Pending::default(),
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
            for event in self.pending.events_with(&chunk) {
                self.read_event(&event)?;
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

/// Bytes read but not yet split into events. The first `searched` of them are known to hold no
/// event's end, so an event arriving in many chunks (a tool call's megabytes of arguments) is
/// searched once, not once a chunk.
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    searched: usize,
}

impl Pending {
    /// `chunk` added; the events now complete, in order, each without the blank line after it.
    fn events_with(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        self.bytes.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        // A blank line may straddle the last chunk's end: "\r\n\r\n" is four bytes.
        let mut from = self.searched.saturating_sub(3);
        while let Some((end, gap)) = event_end(&self.bytes[from..]) {
            events.push(self.bytes[start..from + end].to_vec());
            start = from + end + gap;
            from = start;
        }
        self.bytes.drain(..start);
        self.searched = self.bytes.len();
        events
    }
}

/// Where the first event in `buffer` ends, and the length of the blank line after it.
fn event_end(buffer: &[u8]) -> Option<(usize, usize)> {
    (0..buffer.len()).find_map(|i| {
        let rest = &buffer[i..];
        if rest.starts_with(b"\n\n") {
            Some((i, 2))
        } else if rest.starts_with(b"\r\n\r\n") {
            Some((i, 4))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_event_ends_of_either_kind() {
        assert_eq!(event_end(b"data: a\n\ndata: b"), Some((7, 2)));
        assert_eq!(event_end(b"data: a\r\n\r\n"), Some((7, 4)));
        assert_eq!(event_end(b"data: a\n"), None);
        assert_eq!(event_end(b"data: a\r\n\ndata: b"), Some((8, 2)));
    }

    /// Every way of cutting a stream of events into two or three chunks gives the same events,
    /// the cuts inside a blank line included.
    #[test]
    fn events_are_the_same_however_the_bytes_are_cut() {
        let stream: &[u8] = b"data: one\n\ndata: two\r\n\r\n: note\n\ndata: four\n\ndata: par";
        let whole = Pending::default().events_with(stream);
        assert_eq!(whole, [&b"data: one"[..], b"data: two", b": note", b"data: four"]);
        for i in 0..=stream.len() {
            for j in i..=stream.len() {
                let mut pending = Pending::default();
                let mut events = pending.events_with(&stream[..i]);
                events.extend(pending.events_with(&stream[i..j]));
                events.extend(pending.events_with(&stream[j..]));
                assert_eq!(events, whole, "cut at {i} and {j}");
                assert_eq!(pending.bytes, b"data: par", "cut at {i} and {j}");
            }
        }
    }

    /// A megabyte-long event in 1,000-byte chunks is searched about once: the bytes looked at stay
    /// near the event's length, where searching the whole buffer at every chunk looked at 500 times
    /// as many.
    #[test]
    fn a_long_event_in_many_chunks_is_searched_once() {
        let mut pending = Pending::default();
        let mut looked_at = 0;
        let event = vec![b'x'; 1 << 20];
        for chunk in event.chunks(1000) {
            looked_at += pending.bytes.len() + chunk.len() - pending.searched.saturating_sub(3);
            assert!(pending.events_with(chunk).is_empty());
        }
        assert!(looked_at < 2 * event.len(), "{looked_at}");
        assert_eq!(pending.events_with(b"\n\n"), [event]);
    }
}
