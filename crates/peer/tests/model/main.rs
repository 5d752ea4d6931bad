//! The scripted model over a real HTTP connection, its server-sent events read by a small reader
//! here rather than by the client under test elsewhere.

use std::time::{Duration, Instant};

use lembas_peer::{DEFAULT_MODEL, ModelReply, Part, Peer, PeerConfig, VISION_MODEL};
use serde_json::{Value, json};

mod sse;
use sse::{Sse, Streamed};

const TOKEN: &str = "model-token";
pub(crate) const WAIT: Duration = Duration::from_secs(5);

async fn peer() -> Peer {
    Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap()
}

/// A request body as the device sends it.
fn chat(messages: Value) -> Value {
    json!({
        "model": DEFAULT_MODEL,
        "messages": messages,
        "tool_choice": "auto",
        "stream": true,
        "stream_options": { "include_usage": true },
    })
}

fn say(text: &str) -> Value {
    chat(json!([{ "role": "system", "content": "You are terse." }, { "role": "user", "content": text }]))
}

async fn post_raw(peer: &Peer, token: Option<&str>, body: impl Into<reqwest::Body>) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(format!("{}/v1/chat/completions", peer.url()))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    tokio::time::timeout(WAIT, request.send()).await.unwrap().unwrap()
}

async fn post(peer: &Peer, body: &Value) -> reqwest::Response {
    post_raw(peer, Some(TOKEN), body.to_string()).await
}

async fn stream(peer: &Peer, body: &Value) -> Streamed {
    Sse::new(post(peer, body).await).rest().await
}

#[tokio::test]
async fn text_streams_in_openai_chunks_then_the_usage_then_done() {
    let peer = peer().await;
    peer.model()
        .push(ModelReply::text("The quick brown fox jumps over the lazy dog."));
    let streamed = stream(&peer, &say("hi")).await;
    assert!(streamed.done && !streamed.cut);

    let first = &streamed.chunks[0];
    assert_eq!(
        first["choices"],
        json!([{ "index": 0, "delta": { "role": "assistant", "content": "" }, "logprobs": null, "finish_reason": null }])
    );
    let id = first["id"].as_str().unwrap();
    assert!(id.starts_with("chatcmpl-"), "{id}");
    for chunk in &streamed.chunks {
        assert_eq!(chunk["id"], id);
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], DEFAULT_MODEL);
        assert!(chunk["created"].as_u64().unwrap() > 1_700_000_000, "{chunk}");
    }
    let assembled = streamed.assemble();
    assert!(assembled.content.len() > 3, "{:?}", assembled.content);
    assert_eq!(
        assembled.content.concat(),
        "The quick brown fox jumps over the lazy dog."
    );
    assert_eq!(assembled.finish_reason.as_deref(), Some("stop"));

    let finish = &streamed.chunks[streamed.chunks.len() - 2];
    assert_eq!(
        finish["choices"],
        json!([{ "index": 0, "delta": {}, "logprobs": null, "finish_reason": "stop" }])
    );
    let usage = streamed.chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    let (prompt, completion) = (
        usage["usage"]["prompt_tokens"].as_u64().unwrap(),
        usage["usage"]["completion_tokens"].as_u64().unwrap(),
    );
    assert!(prompt > 0 && completion > 0, "{usage}");
    assert_eq!(usage["usage"]["total_tokens"].as_u64(), Some(prompt + completion));
}

#[tokio::test]
async fn tool_call_arguments_come_in_fragments_that_reassemble() {
    let peer = peer().await;
    let read = json!({ "path": "src/main.rs" });
    let bash = json!({ "command": "printf 'naïve\\n' | wc -c", "description": "Count bytes" });
    peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("Let me look.".to_string()),
            Part::ToolCall {
                id: "call_a".to_string(),
                name: "read".to_string(),
                arguments: read.to_string(),
            },
            Part::ToolCall {
                id: "call_b".to_string(),
                name: "bash".to_string(),
                arguments: bash.to_string(),
            },
        ],
        finish_reason: "tool_calls".to_string(),
    });
    let streamed = stream(&peer, &say("look")).await;
    assert!(streamed.done);
    let assembled = streamed.assemble();
    assert_eq!(assembled.content.concat(), "Let me look.");
    assert_eq!(assembled.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(assembled.tool_calls.len(), 2);
    for ((id, name, pieces), (want_id, want_name, want_arguments)) in assembled
        .tool_calls
        .iter()
        .zip([("call_a", "read", &read), ("call_b", "bash", &bash)])
    {
        assert_eq!((id.as_str(), name.as_str()), (want_id, want_name));
        assert!(pieces.len() > 2, "{pieces:?}");
        // Seven bytes, stretched by at most a character's other bytes.
        assert!(
            pieces.iter().all(|p| !p.is_empty() && p.len() <= 7 + 3),
            "{pieces:?}"
        );
        let arguments: Value = serde_json::from_str(&pieces.concat()).unwrap();
        assert_eq!(&arguments, want_arguments);
    }
}

#[tokio::test]
async fn reasoning_streams_before_the_text_and_any_finish_reason_is_kept() {
    let peer = peer().await;
    peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Reasoning("The user greets me, so I greet back.".to_string()),
            Part::Text("Hello".to_string()),
        ],
        finish_reason: "length".to_string(),
    });
    let streamed = stream(&peer, &say("hi")).await;
    let assembled = streamed.assemble();
    assert!(assembled.reasoning.len() > 3, "{:?}", assembled.reasoning);
    assert_eq!(
        assembled.reasoning.concat(),
        "The user greets me, so I greet back."
    );
    assert_eq!(assembled.content, ["Hello"]);
    assert_eq!(assembled.finish_reason.as_deref(), Some("length"));
    // Every reasoning chunk comes before the text.
    let first_text = streamed
        .chunks
        .iter()
        .position(|c| c["choices"][0]["delta"]["content"] == "Hello")
        .unwrap();
    let last_reasoning = streamed
        .chunks
        .iter()
        .rposition(|c| c["choices"][0]["delta"]["reasoning_content"].is_string())
        .unwrap();
    assert!(last_reasoning < first_text);
}

#[tokio::test]
async fn usage_comes_only_when_asked_for() {
    let peer = peer().await;
    let mut without_options = say("hi");
    without_options.as_object_mut().unwrap().remove("stream_options");
    let mut not_asked = say("hi");
    not_asked["stream_options"]["include_usage"] = json!(false);
    for body in [without_options, not_asked] {
        let streamed = stream(&peer, &body).await;
        assert!(streamed.done);
        let assembled = streamed.assemble();
        assert_eq!(assembled.usage, None, "{body}");
        assert_eq!(assembled.finish_reason.as_deref(), Some("stop"));
    }
}

#[tokio::test]
async fn a_wrong_or_missing_token_is_401_and_uses_no_reply() {
    let peer = peer().await;
    peer.model().push(ModelReply::text("kept"));
    for token in [None, Some("wrong-token")] {
        let response = post_raw(&peer, token, say("hi").to_string()).await;
        assert_eq!(response.status(), 401, "{token:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let body: Value = response.json().await.unwrap();
        assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
    }
    assert_eq!(peer.model().pending(), 1);
    assert!(peer.model().requests().is_empty());
}

#[tokio::test]
async fn an_unknown_model_is_404_as_openai_says_it() {
    let peer = peer().await;
    peer.model().push(ModelReply::text("kept"));
    for model in ["nobody/model", "example/embed"] {
        let mut body = say("hi");
        body["model"] = json!(model);
        let response = post(&peer, &body).await;
        assert_eq!(response.status(), 404);
        let error: Value = response.json().await.unwrap();
        assert_eq!(
            error,
            json!({ "error": {
                "message": format!("The model `{model}` does not exist"),
                "type": "invalid_request_error",
                "param": null,
                "code": "model_not_found",
            } })
        );
    }
    assert_eq!(peer.model().pending(), 1);
    // Recorded all the same, so a test can see what was asked for.
    assert_eq!(peer.model().requests().len(), 2);
    let streamed = stream(&peer, &chat(json!([{ "role": "user", "content": "x" }]))).await;
    assert_eq!(streamed.assemble().content.concat(), "kept");
}

#[tokio::test]
async fn image_parts_reach_only_a_model_that_takes_images() {
    let peer = peer().await;
    let seeing = json!([{ "role": "user", "content": [
        { "type": "text", "text": "what is this" },
        { "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw==" } },
    ] }]);
    peer.model().push(ModelReply::text("a picture"));
    let response = post(&peer, &chat(seeing.clone())).await;
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(
        error["error"]["message"],
        format!("The model `{DEFAULT_MODEL}` does not take images")
    );
    assert_eq!(peer.model().pending(), 1, "a refused request uses no reply");
    let mut body = chat(seeing);
    body["model"] = json!(VISION_MODEL);
    let streamed = stream(&peer, &body).await;
    assert_eq!(streamed.assemble().content.concat(), "a picture");
}

#[tokio::test]
async fn a_body_that_is_not_a_chat_request_is_400() {
    let peer = peer().await;
    let mut no_messages = say("hi");
    no_messages.as_object_mut().unwrap().remove("messages");
    let mut not_streamed = say("hi");
    not_streamed["stream"] = json!(false);
    let bodies = [
        "{ not json".to_string(),
        "[1, 2]".to_string(),
        no_messages.to_string(),
        not_streamed.to_string(),
    ];
    for body in bodies {
        let response = post_raw(&peer, Some(TOKEN), body.clone()).await;
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"]["type"], "invalid_request_error", "{error}");
        assert!(error["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}

#[tokio::test]
async fn a_scripted_error_is_answered_with_its_status_and_retry_after() {
    let peer = peer().await;
    let model = peer.model();
    model.push(ModelReply::Error {
        status: 429,
        retry_after: Some(7),
        message: "Rate limit reached".to_string(),
    });
    model.push(ModelReply::Error {
        status: 503,
        retry_after: None,
        message: "overloaded".to_string(),
    });
    model.push(ModelReply::text("after the errors"));

    let response = post(&peer, &say("hi")).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["message"], "Rate limit reached");
    assert_eq!(error["error"]["code"], "rate_limit_exceeded");

    let response = post(&peer, &say("hi")).await;
    assert_eq!(response.status(), 503);
    assert!(response.headers().get("retry-after").is_none());
    let error: Value = response.json().await.unwrap();
    assert_eq!(
        (
            error["error"]["message"].as_str(),
            error["error"]["type"].as_str()
        ),
        (Some("overloaded"), Some("server_error"))
    );

    let streamed = stream(&peer, &say("hi")).await;
    assert_eq!(streamed.assemble().content.concat(), "after the errors");
    assert_eq!(model.pending(), 0);
}

#[tokio::test]
async fn a_cut_stream_ends_without_a_finish_or_done() {
    let peer = peer().await;
    peer.model().push(ModelReply::Cut {
        parts: vec![
            Part::Text("partial answer".to_string()),
            Part::ToolCall {
                id: "call_cut".to_string(),
                name: "read".to_string(),
                arguments: r#"{"path":"a.txt"}"#.to_string(),
            },
        ],
    });
    let streamed = stream(&peer, &say("hi")).await;
    assert!(streamed.cut, "the body ended cleanly: {streamed:?}");
    assert!(!streamed.done);
    let assembled = streamed.assemble();
    assert_eq!(assembled.content.concat(), "partial answer");
    assert_eq!(assembled.tool_calls[0].2.concat(), r#"{"path":"a.txt"}"#);
    assert_eq!(assembled.finish_reason, None);
    assert_eq!(assembled.usage, None);
}

#[tokio::test]
async fn a_hang_sends_nothing_until_released() {
    let peer = peer().await;
    let model = peer.model();
    model.push(ModelReply::Stream {
        parts: vec![
            Part::Text("before".to_string()),
            Part::Hang,
            Part::Text("after".to_string()),
        ],
        finish_reason: "stop".to_string(),
    });
    let mut sse = Sse::new(post(&peer, &say("hi")).await);
    assert_eq!(sse.next_chunk().await["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(sse.next_chunk().await["choices"][0]["delta"]["content"], "before");
    let quiet = tokio::time::timeout(Duration::from_millis(300), sse.next()).await;
    assert!(quiet.is_err(), "something arrived during the hang: {quiet:?}");
    model.release();
    let assembled = sse.rest().await.assemble();
    assert_eq!(assembled.content, ["after"]);
    assert_eq!(assembled.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn a_hang_whose_client_went_away_leaves_the_release_for_the_next() {
    let peer = peer().await;
    let model = peer.model();
    let hanging = ModelReply::Stream {
        parts: vec![Part::Hang, Part::Text("through".to_string())],
        finish_reason: "stop".to_string(),
    };
    model.push(hanging.clone());
    model.push(hanging);
    let mut sse = Sse::new(post(&peer, &say("hi")).await);
    sse.next_chunk().await;
    drop(sse);
    // Time for the peer to see the connection close.
    tokio::time::sleep(Duration::from_millis(300)).await;
    model.release();
    let streamed = stream(&peer, &say("again")).await;
    assert_eq!(streamed.assemble().content.concat(), "through");
}

#[tokio::test]
async fn stopping_the_peer_cuts_a_hanging_stream_at_once() {
    let peer = peer().await;
    peer.model().push(ModelReply::Stream {
        parts: vec![Part::Hang],
        finish_reason: "stop".to_string(),
    });
    let mut sse = Sse::new(post(&peer, &say("hi")).await);
    sse.next_chunk().await;
    let started = Instant::now();
    peer.stop().await;
    // Under the two seconds of grace the stop gives requests in flight: a hanging stream is cut
    // at once, not waited for until the grace runs out.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(sse.rest().await.cut);
}

#[tokio::test]
async fn requests_are_recorded_in_order_and_handed_out_once() {
    let peer = peer().await;
    let model = peer.model();
    let first = say("one");
    let mut second = say("two");
    second["tools"] = json!([{ "type": "function", "function": { "name": "read", "parameters": {} } }]);
    second["reasoning_effort"] = json!("high");
    stream(&peer, &first).await;
    stream(&peer, &second).await;
    assert_eq!(model.requests(), [first.clone(), second.clone()]);
    assert_eq!(model.next_request(WAIT).await.unwrap(), first);
    assert_eq!(model.next_request(WAIT).await.unwrap(), second);
    let error = model.next_request(Duration::from_millis(100)).await.unwrap_err();
    assert!(
        error.to_string().contains("no chat completion request"),
        "{error}"
    );

    // One that arrives while waiting.
    let waiting = tokio::spawn({
        let model = model.clone();
        async move { model.next_request(WAIT).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let third = say("three");
    stream(&peer, &third).await;
    assert_eq!(waiting.await.unwrap().unwrap(), third);
}

#[tokio::test]
async fn the_demo_answers_each_kind_of_message() {
    let peer = peer().await;

    let echo = stream(&peer, &say("hello there, model")).await.assemble();
    assert!(echo.content.len() > 1, "{:?}", echo.content);
    assert_eq!(echo.content.concat(), "You said: hello there, model");
    assert_eq!(echo.finish_reason.as_deref(), Some("stop"));

    let cases = [
        (
            say("run ls -la"),
            "call_1",
            "bash",
            json!({ "command": "ls -la", "description": "Run what you asked" }),
        ),
        (
            chat(json!([{ "role": "user", "content": [{ "type": "text", "text": "read notes.md" }] }])),
            "call_2",
            "read",
            json!({ "path": "notes.md" }),
        ),
        (
            say("write out.txt two words"),
            "call_3",
            "write",
            json!({ "path": "out.txt", "content": "two words" }),
        ),
    ];
    for (body, id, name, arguments) in cases {
        let assembled = stream(&peer, &body).await.assemble();
        assert_eq!(assembled.finish_reason.as_deref(), Some("tool_calls"), "{body}");
        let (got_id, got_name, pieces) = &assembled.tool_calls[0];
        assert_eq!((got_id.as_str(), got_name.as_str()), (id, name));
        assert_eq!(
            serde_json::from_str::<Value>(&pieces.concat()).unwrap(),
            arguments
        );
    }

    let after_tool = chat(json!([
        { "role": "user", "content": "run ls" },
        { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function",
            "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } }] },
        { "role": "tool", "tool_call_id": "call_1", "content": "Cargo.toml\nsrc\n" },
    ]));
    let done = stream(&peer, &after_tool).await.assemble();
    assert_eq!(done.content.concat(), "Done: Cargo.toml");
    assert_eq!(done.finish_reason.as_deref(), Some("stop"));
    assert!(done.tool_calls.is_empty());
}
