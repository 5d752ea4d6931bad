//! `POST /v1/chat/completions`: checks the request, then streams the model's reply as server-sent
//! events in the shape OpenAI, vLLM and DeepSeek stream them.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::{ModelReply, Part, ScriptedModel};
use crate::PeerState;
use crate::answers::{authorized, unauthorized};
use crate::lock;

/// The most bytes of a tool call's arguments in one chunk: small and odd, so a client must
/// assemble the JSON from pieces cut anywhere.
const ARGUMENT_PIECE_BYTES: usize = 7;

/// The most bytes of text in one content chunk, so a long word still comes in several.
const TEXT_PIECE_MAX_BYTES: usize = 24;

/// How long a cut stream waits before cutting: hyper drops what it has not flushed when a body
/// fails, and the client must see the parts before the cut.
const FLUSH_BEFORE_CUT: Duration = Duration::from_millis(50);

/// One server-sent event's bytes, or the error that cuts the connection.
type Event = Result<Bytes, std::io::Error>;

pub(crate) async fn chat_completions(
    State(state): State<Arc<PeerState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (token, chat_models, image_models) = {
        let config = lock(&state.config);
        (
            config.token.clone(),
            chat_model_ids(&config.models),
            image_model_ids(&config.models),
        )
    };
    if !authorized(&headers, &token) {
        return unauthorized();
    }
    let request: Value = match serde_json::from_slice(&body) {
        Ok(request @ Value::Object(_)) => request,
        Ok(_) => return invalid_request("the body must be a JSON object", None),
        Err(error) => return invalid_request(&format!("the body is not valid JSON: {error}"), None),
    };
    let model = state.model.clone();
    model.record(request.clone());

    if !request.get("messages").is_some_and(Value::is_array) {
        return invalid_request("`messages` is required and must be an array", Some("messages"));
    }
    let Some(model_id) = request.get("model").and_then(Value::as_str) else {
        return invalid_request("`model` is required and must be a string", Some("model"));
    };
    if !chat_models.iter().any(|id| id == model_id) {
        return openai_error(
            StatusCode::NOT_FOUND,
            &format!("The model `{model_id}` does not exist"),
            "invalid_request_error",
            None,
            Some("model_not_found"),
        );
    }
    // A model that does not take images refuses them, as a real text model's server does.
    if has_image_parts(&request) && !image_models.iter().any(|id| id == model_id) {
        return invalid_request(
            &format!("The model `{model_id}` does not take images"),
            Some("messages"),
        );
    }
    if request.get("stream").and_then(Value::as_bool) != Some(true) {
        return invalid_request(
            "the reference peer's model only streams: send \"stream\": true",
            Some("stream"),
        );
    }
    let include_usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);

    let (parts, ending) = match model.reply_to(&request) {
        ModelReply::Error {
            status,
            retry_after,
            message,
        } => return scripted_error(status, retry_after, &message),
        ModelReply::Stream { parts, finish_reason } => (parts, Ending::Finish(finish_reason)),
        ModelReply::Cut { parts } => (parts, Ending::Cut),
    };
    let writer = StreamWriter {
        head: ChunkHead {
            id: model.next_completion_id(),
            created: unix_seconds(),
            model: model_id.to_string(),
        },
        prompt_tokens: estimate_tokens(request.get("messages").map_or(0, |m| m.to_string().len())),
        include_usage,
    };
    let (events, receiver) = mpsc::channel::<Event>(16);
    tokio::spawn(writer.write(model, parts, ending, events, state.shutdown.clone()));
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|event| (event, receiver))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

/// The ids of the chat models in a `/v1/models` list: those of kind `chat`, or with no kind (a
/// plain OpenAI list says none).
fn chat_model_ids(models: &Value) -> Vec<String> {
    models
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|model| model.get("kind").is_none_or(|kind| kind == "chat"))
        .filter_map(|model| model.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The models whose entry lists `image` in `input_modalities`.
fn image_model_ids(models: &Value) -> Vec<String> {
    models
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|model| {
            model
                .get("input_modalities")
                .and_then(Value::as_array)
                .is_some_and(|m| m.iter().any(|m| m == "image"))
        })
        .filter_map(|model| model.get("id").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Whether any message carries an `image_url` content part.
fn has_image_parts(request: &Value) -> bool {
    request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|message| message.get("content").and_then(Value::as_array))
        .flatten()
        .any(|part| part.get("type").and_then(Value::as_str) == Some("image_url"))
}

/// OpenAI's error body.
fn openai_error(
    status: StatusCode,
    message: &str,
    kind: &str,
    param: Option<&str>,
    code: Option<&str>,
) -> Response {
    let body = json!({ "error": { "message": message, "type": kind, "param": param, "code": code } });
    (status, Json(body)).into_response()
}

fn invalid_request(message: &str, param: Option<&str>) -> Response {
    openai_error(
        StatusCode::BAD_REQUEST,
        message,
        "invalid_request_error",
        param,
        None,
    )
}

/// A [`ModelReply::Error`], typed as OpenAI types its errors of that status.
fn scripted_error(status: u16, retry_after: Option<u64>, message: &str) -> Response {
    let Ok(status) = StatusCode::from_u16(status) else {
        return openai_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the scripted error's status {status} is not an HTTP status"),
            "server_error",
            None,
            None,
        );
    };
    let (kind, code) = match status.as_u16() {
        429 => ("rate_limit_error", Some("rate_limit_exceeded")),
        500..=599 => ("server_error", None),
        _ => ("invalid_request_error", None),
    };
    let mut response = openai_error(status, message, kind, None, code);
    if let Some(seconds) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// A rough count a real tokenizer would give: about four bytes a token.
fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// How a streamed reply ends.
enum Ending {
    /// A finish chunk with this reason, the usage when asked for, `[DONE]`.
    Finish(String),
    /// The connection dropped, nothing more.
    Cut,
}

/// What every chunk of one completion repeats.
struct ChunkHead {
    id: String,
    created: u64,
    model: String,
}

impl ChunkHead {
    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason }],
        })
    }

    fn usage(&self, prompt_tokens: u64, completion_tokens: u64) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        })
    }
}

struct StreamWriter {
    head: ChunkHead,
    prompt_tokens: u64,
    include_usage: bool,
}

/// The client went away (or the peer is stopping): stop writing.
struct Gone;

impl StreamWriter {
    /// Sends the reply's events to the response body, in order.
    async fn write(
        self,
        model: ScriptedModel,
        parts: Vec<Part>,
        ending: Ending,
        events: mpsc::Sender<Event>,
        shutdown: watch::Receiver<bool>,
    ) {
        let Ok(completion_bytes) = self.write_parts(&model, parts, &events, shutdown).await else {
            return;
        };
        match ending {
            Ending::Finish(reason) => {
                let mut last = vec![self.head.chunk(json!({}), Some(&reason))];
                if self.include_usage {
                    last.push(
                        self.head
                            .usage(self.prompt_tokens, estimate_tokens(completion_bytes)),
                    );
                }
                for chunk in last {
                    if send(&events, data(&chunk.to_string())).await.is_err() {
                        return;
                    }
                }
                let _ = send(&events, data("[DONE]")).await;
            }
            Ending::Cut => cut(&events).await,
        }
    }

    /// The role chunk and each part's chunks; the bytes of text, reasoning and arguments sent.
    async fn write_parts(
        &self,
        model: &ScriptedModel,
        parts: Vec<Part>,
        events: &mpsc::Sender<Event>,
        mut shutdown: watch::Receiver<bool>,
    ) -> Result<usize, Gone> {
        let role = self
            .head
            .chunk(json!({ "role": "assistant", "content": "" }), None);
        send(events, data(&role.to_string())).await?;
        let mut completion_bytes = 0;
        let mut tool_calls = 0;
        for part in parts {
            match part {
                Part::Text(text) | Part::Reasoning(text) if text.is_empty() => {}
                Part::Text(text) => {
                    completion_bytes += text.len();
                    for piece in text_pieces(&text) {
                        self.send_delta(events, json!({ "content": piece })).await?;
                    }
                }
                Part::Reasoning(text) => {
                    completion_bytes += text.len();
                    for piece in text_pieces(&text) {
                        self.send_delta(events, json!({ "reasoning_content": piece }))
                            .await?;
                    }
                }
                Part::ToolCall { id, name, arguments } => {
                    let index = tool_calls;
                    tool_calls += 1;
                    completion_bytes += name.len() + arguments.len();
                    let opening = json!({ "index": index, "id": id, "type": "function",
                        "function": { "name": name, "arguments": "" } });
                    self.send_delta(events, json!({ "tool_calls": [opening] }))
                        .await?;
                    for piece in argument_pieces(&arguments) {
                        let fragment = json!({ "index": index, "function": { "arguments": piece } });
                        self.send_delta(events, json!({ "tool_calls": [fragment] }))
                            .await?;
                    }
                }
                Part::Hang => {
                    tokio::select! {
                        () = model.wait_for_release() => {}
                        () = events.closed() => return Err(Gone),
                        () = stopping(&mut shutdown) => {
                            // Cut rather than hold the peer's graceful stop until its grace runs out.
                            cut(events).await;
                            return Err(Gone);
                        }
                    }
                }
            }
        }
        Ok(completion_bytes)
    }

    async fn send_delta(&self, events: &mpsc::Sender<Event>, delta: Value) -> Result<(), Gone> {
        send(events, data(&self.head.chunk(delta, None).to_string())).await
    }
}

/// Ends when the peer stops (or is gone).
async fn stopping(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stopping| *stopping).await;
}

/// One server-sent event carrying `payload`.
fn data(payload: &str) -> Bytes {
    Bytes::from(format!("data: {payload}\n\n"))
}

async fn send(events: &mpsc::Sender<Event>, event: Bytes) -> Result<(), Gone> {
    events.send(Ok(event)).await.map_err(|_| Gone)
}

/// Drops the connection once what went before had a moment to be flushed.
async fn cut(events: &mpsc::Sender<Event>) {
    tokio::time::sleep(FLUSH_BEFORE_CUT).await;
    let _ = events
        .send(Err(std::io::Error::other("the scripted stream is cut here")))
        .await;
}

/// Text as a model streams it: a piece per word with the whitespace before it, a long word cut
/// every [`TEXT_PIECE_MAX_BYTES`]. The pieces join back to `text`.
fn text_pieces(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut spaces_from = None;
    for (at, character) in text.char_indices() {
        if character.is_whitespace() {
            spaces_from.get_or_insert(at);
        } else if let Some(spaces) = spaces_from.take()
            && spaces > start
        {
            // The whitespace before a word goes with it, as tokenizers cut.
            words.push(&text[start..spaces]);
            start = spaces;
        }
    }
    words.push(&text[start..]);
    let mut pieces = Vec::new();
    for mut word in words {
        while word.len() > TEXT_PIECE_MAX_BYTES {
            let mut end = TEXT_PIECE_MAX_BYTES;
            while !word.is_char_boundary(end) {
                end -= 1;
            }
            pieces.push(&word[..end]);
            word = &word[end..];
        }
        pieces.push(word);
    }
    pieces
}

/// A tool call's arguments in pieces of [`ARGUMENT_PIECE_BYTES`], stretched to the next character
/// boundary so no character is split.
fn argument_pieces(arguments: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < arguments.len() {
        let mut end = (start + ARGUMENT_PIECE_BYTES).min(arguments.len());
        while !arguments.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&arguments[start..end]);
        start = end;
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_before_each_word_and_every_24_bytes() {
        assert_eq!(text_pieces("You said: hello"), ["You", " said:", " hello"]);
        assert_eq!(text_pieces("a  b\nc"), ["a", "  b", "\nc"]);
        assert_eq!(text_pieces(" lead"), [" lead"]);
        assert_eq!(text_pieces(""), [""]);
        let long = "x".repeat(50);
        assert_eq!(text_pieces(&long), [&long[..24], &long[24..48], &long[48..]]);
        let accents = "é".repeat(13); // 26 bytes: 12 characters fit in 24
        assert_eq!(text_pieces(&accents), [&accents[..24], &accents[24..]]);
        for text in [
            "Done: a.txt",
            "  two  spaces  ",
            "naïve café über",
            &"ab ".repeat(40),
        ] {
            assert_eq!(text_pieces(text).concat(), text);
        }
    }

    #[test]
    fn arguments_are_cut_every_7_bytes_on_character_boundaries() {
        assert_eq!(
            argument_pieces(r#"{"path":"a.txt"}"#),
            [r#"{"path""#, r#":"a.txt"#, r#""}"#]
        );
        assert_eq!(argument_pieces("ééééé"), ["éééé", "é"]);
        assert!(argument_pieces("").is_empty());
    }

    #[test]
    fn chat_models_are_those_of_kind_chat_or_with_no_kind() {
        let models = json!({ "data": [
            { "id": "a", "kind": "chat" }, { "id": "b", "kind": "embedding" }, { "id": "c" }, { "kind": "chat" },
        ] });
        assert_eq!(chat_model_ids(&models), ["a", "c"]);
        assert!(chat_model_ids(&json!({})).is_empty());
    }
}
