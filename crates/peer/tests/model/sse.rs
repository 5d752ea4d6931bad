//! A small server-sent events reader and what a client assembles from OpenAI's chunks, written
//! here so the scripted model is read by something other than the device's own client.

use serde_json::Value;

use super::WAIT;

/// A server-sent events reader: the `data` of each event, as the bytes arrive.
pub struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    pub fn new(response: reqwest::Response) -> Sse {
        assert_eq!(response.status(), 200);
        let content_type = response.headers()["content-type"].to_str().unwrap();
        assert!(content_type.starts_with("text/event-stream"), "{content_type}");
        Sse {
            response,
            buffer: String::new(),
        }
    }

    /// The next event's data; `Ok(None)` when the body ended cleanly, `Err` when it was cut.
    pub async fn next(&mut self) -> Result<Option<String>, reqwest::Error> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data = event
                    .strip_prefix("data: ")
                    .unwrap_or_else(|| panic!("not a data event: {event:?}"));
                assert!(!data.trim_end().contains('\n'), "one line per event: {event:?}");
                return Ok(Some(data.trim_end().to_string()));
            }
            match self.response.chunk().await? {
                Some(bytes) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => {
                    assert!(
                        self.buffer.is_empty(),
                        "a partial event at the end: {:?}",
                        self.buffer
                    );
                    return Ok(None);
                }
            }
        }
    }

    pub async fn next_chunk(&mut self) -> Value {
        let data = tokio::time::timeout(WAIT, self.next())
            .await
            .unwrap()
            .unwrap()
            .expect("another event");
        serde_json::from_str(&data).unwrap_or_else(|_| panic!("not a JSON chunk: {data}"))
    }

    /// Every event up to the end: the chunks, whether `[DONE]` came (last), and whether the body
    /// was cut.
    pub async fn rest(mut self) -> Streamed {
        let mut streamed = Streamed::default();
        loop {
            match tokio::time::timeout(WAIT, self.next()).await.unwrap() {
                Ok(Some(data)) if data == "[DONE]" => {
                    assert!(!streamed.done, "[DONE] twice");
                    streamed.done = true;
                }
                Ok(Some(data)) => {
                    assert!(!streamed.done, "an event after [DONE]: {data}");
                    streamed.chunks.push(serde_json::from_str(&data).unwrap());
                }
                Ok(None) => return streamed,
                Err(_) => {
                    streamed.cut = true;
                    return streamed;
                }
            }
        }
    }
}

#[derive(Default, Debug)]
pub struct Streamed {
    pub chunks: Vec<Value>,
    pub done: bool,
    pub cut: bool,
}

/// What a client assembles from the chunks.
#[derive(Default, Debug)]
pub struct Assembled {
    pub content: Vec<String>,
    pub reasoning: Vec<String>,
    /// Per index: id, name, and the arguments' pieces.
    pub tool_calls: Vec<(String, String, Vec<String>)>,
    pub finish_reason: Option<String>,
    pub usage: Option<Value>,
}

impl Streamed {
    pub fn assemble(&self) -> Assembled {
        let mut assembled = Assembled::default();
        for chunk in &self.chunks {
            let choices = chunk["choices"].as_array().unwrap();
            if choices.is_empty() {
                assert!(assembled.usage.is_none(), "usage twice");
                assembled.usage = Some(chunk["usage"].clone());
                continue;
            }
            assert!(assembled.usage.is_none(), "a choice after the usage");
            assert!(assembled.finish_reason.is_none(), "a choice after the finish");
            let delta = &choices[0]["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                assembled.content.push(text.to_string());
            }
            if let Some(text) = delta["reasoning_content"].as_str() {
                assembled.reasoning.push(text.to_string());
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap() as usize;
                if index == assembled.tool_calls.len() {
                    assert_eq!(call["type"], "function", "{call}");
                    assert_eq!(
                        call["function"]["arguments"], "",
                        "the opening has no arguments yet"
                    );
                    assembled.tool_calls.push((
                        call["id"].as_str().unwrap().to_string(),
                        call["function"]["name"].as_str().unwrap().to_string(),
                        Vec::new(),
                    ));
                } else {
                    assert!(call.get("id").is_none(), "the id comes once: {call}");
                    let piece = call["function"]["arguments"].as_str().unwrap();
                    assembled.tool_calls[index].2.push(piece.to_string());
                }
            }
            assembled.finish_reason = choices[0]["finish_reason"].as_str().map(str::to_string);
        }
        assembled
    }
}
