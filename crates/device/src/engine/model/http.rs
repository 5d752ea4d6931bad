//! The instance's OpenAI-compatible API over HTTP with the device's token (docs/protocol.md "The
//! model"): the model list as the token sees it, what the instance says of itself, and one
//! streamed chat completion per step.

use serde_json::Value;
use std::time::Duration;

use super::About;
use super::stream::{ModelError, ModelStream};
use crate::engine::step_request::StepRequest;
use crate::instance_answers::{ModelEntry, ModelList};
use crate::keychain::Token;
use serde::de::DeserializeOwned;

/// The retry waits before the second and the third try; a `Retry-After` up to the cap replaces one.
const RETRY_WAITS: [Duration; 2] = [Duration::from_secs(1), Duration::from_secs(4)];
const RETRY_AFTER_CAP: Duration = Duration::from_secs(30);

/// Where the instance is and who the device is to it.
#[derive(Clone)]
pub struct HttpInstance {
    pub http: reqwest::Client,
    pub base: url::Url,
    pub token: Token,
}

impl HttpInstance {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let instance = HttpInstance {
            http: reqwest::Client::new(),
            base: url::Url::parse(&format!("http://{address}/")).unwrap(),
            token: Token::new("t").unwrap(),
        };
        assert_eq!(instance.chat_models().await.unwrap(), ["m"]);
        // Reuses the kept-alive connection, which the server closes: sent again on a fresh one.
        assert_eq!(instance.chat_models().await.unwrap(), ["m"]);
    }
}
