//! A minimal fake device (and a plain HTTP/1.1 GET) for testing the peer itself: just enough
//! tokio-tungstenite to dial the link and speak JSON frames.
#![allow(dead_code)] // each test binary uses its own part of this module

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const WAIT: Duration = Duration::from_secs(5);

pub type DeviceSocket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Dials the link, with `Authorization: Bearer <token>` when a token is given.
pub async fn dial(link_url: &str, token: Option<&str>) -> Result<DeviceSocket, tungstenite::Error> {
    let mut request = link_url.into_client_request()?;
    if let Some(token) = token {
        request
            .headers_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    request
        .headers_mut()
        .insert("user-agent", "fake-device/1".parse().unwrap());
    let (socket, _response) = tokio_tungstenite::connect_async(request).await?;
    Ok(socket)
}

/// The HTTP status a refused dial got.
pub fn refused_status(error: tungstenite::Error) -> u16 {
    match error {
        tungstenite::Error::Http(response) => response.status().as_u16(),
        other => panic!("expected an HTTP refusal, got {other:?}"),
    }
}

pub async fn send_json(socket: &mut DeviceSocket, message: Value) {
    socket.send(Message::text(message.to_string())).await.unwrap();
}

pub fn hello(protocol: u64) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "method": "_lembas/hello",
        "params": {
            "protocol": protocol,
            "version": "2.0.0",
            "harness_spec": "3.5.0",
            "device": { "host": "fake", "platform": "linux" },
            "limits": { "roots": [], "max_mode": "edit", "require_trust": true, "scheduled": false },
        },
    })
}

/// What the device read next, past pings and pongs.
#[derive(Debug)]
pub enum Read {
    Json(Value),
    Text(String),
    Close(Option<(u16, String)>),
    /// The stream ended or failed without a close frame.
    Ended(String),
}

pub async fn read(socket: &mut DeviceSocket) -> Read {
    loop {
        let next = tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("the device waited too long");
        return match next {
            None => Read::Ended("end of stream".to_string()),
            Some(Err(error)) => Read::Ended(error.to_string()),
            Some(Ok(Message::Text(text))) => match serde_json::from_str(text.as_str()) {
                Ok(value) => Read::Json(value),
                Err(_) => Read::Text(text.to_string()),
            },
            Some(Ok(Message::Close(frame))) => {
                Read::Close(frame.map(|f: CloseFrame| (u16::from(f.code), f.reason.to_string())))
            }
            Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
            Some(Ok(Message::Binary(bytes))) => {
                panic!("the peer sent a binary frame of {} bytes", bytes.len())
            }
        };
    }
}

pub async fn read_json(socket: &mut DeviceSocket) -> Value {
    match read(socket).await {
        Read::Json(value) => value,
        other => panic!("expected a JSON message, got {other:?}"),
    }
}

/// A plain HTTP/1.1 GET: the status and the body parsed as JSON.
pub async fn http_get(url: &str, path: &str, token: Option<&str>) -> (u16, Value) {
    let host = url.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(host).await.unwrap();
    let authorization = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{authorization}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut response))
        .await
        .unwrap()
        .unwrap();
    let response = String::from_utf8(response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let head_lower = head.to_ascii_lowercase();
    assert!(
        !head_lower.contains("transfer-encoding: chunked"),
        "this tiny client reads no chunked body"
    );
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(body).unwrap()
    };
    (status, body)
}
