//! The server: its URL, discovery (`/.well-known/lembas.json`) and the link's address. Discovery
//! runs before every login and every dial: a server that does not list protocol 3 stops the link.

use crate::instance_answers::DiscoveryAnswer;
use std::net::IpAddr;
use std::time::Duration;
use url::Url;

const HTTP_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum DiscoveryError {
    /// The server speaks older protocols only: the spec's sentence, word for word.
    #[error(
        "{server} runs LLeMbas {version}, which speaks link protocol 1 and 2; this LLeMbas CLI needs a LLeMbas 2.0 server (protocol 3) — update the server, or use LLeMbas CLI 1.x with it"
    )]
    OldServer { server: String, version: String },
    #[error("{0}")]
    BadUrl(String),
    #[error("cannot reach {server}: {why}. Check the address and your network; the device keeps trying.")]
    Unreachable { server: String, why: String },
    #[error("{server} does not look like a LLeMbas server ({why}). Check the address.")]
    NotLembas { server: String, why: String },
}

impl DiscoveryError {
    /// Whether trying again later may help (a network problem), as opposed to a final answer.
    pub fn is_transient(&self) -> bool {
        matches!(self, DiscoveryError::Unreachable { .. })
    }
}

/// What discovery said.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovery {
    pub version: String,
    pub protocols: Vec<u64>,
}

/// A server address as a person typed it, checked: http(s) only, plain http only for loopback.
pub fn server_url(raw: &str) -> Result<Url, DiscoveryError> {
    let raw = raw.trim().trim_end_matches('/');
    let url = Url::parse(raw).map_err(|e| {
        DiscoveryError::BadUrl(format!(
            "{raw} is not a server address ({e}); write it like https://llembas.example.org"
        ))
    })?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(DiscoveryError::BadUrl(format!(
            "{raw} uses plain http, which would send the device token unencrypted; use https (plain http is allowed only for this computer's own loopback addresses)"
        ))),
        other => Err(DiscoveryError::BadUrl(format!(
            "{raw}: the scheme {other} is not supported; use https"
        ))),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// `wss://<host>/api/devices/link` for https, `ws://` for a loopback http server.
pub fn link_url(server: &Url) -> Url {
    let mut url = server.clone();
    let scheme = if server.scheme() == "https" { "wss" } else { "ws" };
    // Both schemes are "special" in the url crate, so switching between them cannot fail.
    let _ = url.set_scheme(scheme);
    url.set_path(&format!(
        "{}/api/devices/link",
        server.path().trim_end_matches('/')
    ));
    url
}

pub fn endpoint(server: &Url, path: &str) -> Url {
    let mut url = server.clone();
    url.set_path(&format!("{}{path}", server.path().trim_end_matches('/')));
    url
}

/// The innermost cause of a request error ("Connection refused (os error 111)"), which says more to
/// a person than reqwest's own "error sending request".
pub fn cause(e: &reqwest::Error) -> String {
    let mut inner: &dyn std::error::Error = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

pub fn http_client() -> reqwest::Client {
    crate::tls::http_client_builder()
        .timeout(HTTP_TIMEOUT)
        // One request per dial: a pooled connection may have died with the network (after sleep,
        // a changed Wi-Fi) and would make the next discovery wait for the timeout.
        .pool_max_idle_per_host(0)
        .user_agent(concat!("lembas/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_default()
}

/// Reads discovery and insists on `protocol`, the decided 3 (`protocols`, falling back to `protocol`).
pub async fn discover(
    client: &reqwest::Client,
    server: &Url,
    protocol: u32,
) -> Result<Discovery, DiscoveryError> {
    let shown = server.as_str().trim_end_matches('/').to_string();
    let url = endpoint(server, "/.well-known/lembas.json");
    let unreachable = |why: String| DiscoveryError::Unreachable {
        server: shown.clone(),
        why,
    };
    let response = client.get(url).send().await.map_err(|e| match crate::proxy::named_for(server) {
        // A proxy that is down says so by name, not as the instance being unreachable alone.
        Some(proxy) => unreachable(format!(
            "{}, through the proxy {proxy} (from HTTPS_PROXY or HTTP_PROXY; NO_PROXY lists what goes direct)",
            cause(&e)
        )),
        None => unreachable(cause(&e)),
    })?;
    let status = response.status();
    if status.is_server_error() {
        return Err(unreachable(format!("it answered {status}")));
    }
    if !status.is_success() {
        return Err(DiscoveryError::NotLembas {
            server: shown,
            why: format!("discovery answered {status}"),
        });
    }
    let body: DiscoveryAnswer = response.json().await.map_err(|e| DiscoveryError::NotLembas {
        server: shown.clone(),
        why: format!("its discovery answer is not a discovery document: {e}"),
    })?;
    check(&shown, &body, protocol)
}

/// The pure half of [`discover`].
pub fn check(server: &str, body: &DiscoveryAnswer, protocol: u32) -> Result<Discovery, DiscoveryError> {
    let version = body
        .version
        .clone()
        .unwrap_or_else(|| "(unknown version)".to_string());
    let protocols = body.protocols();
    if protocols.contains(&u64::from(protocol)) {
        Ok(Discovery { version, protocols })
    } else {
        Err(DiscoveryError::OldServer {
            server: server.to_string(),
            version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn protocols_fall_back_to_protocol() {
        let cases = [
            (json!({"protocol": 3, "protocols": [3], "version": "2.0.0"}), true),
            (json!({"protocol": 3, "version": "2.0.0"}), true),
            (
                json!({"protocol": 1, "protocols": [1, 2], "version": "1.9.0"}),
                false,
            ),
            (
                json!({"protocol": 3, "protocols": [1, 2], "version": "1.9.0"}),
                false,
            ),
            (json!({"protocol": 1, "version": "1.2.0"}), false),
            (json!({}), false),
        ];
        for (body, ok) in cases {
            let read = serde_json::from_value(body.clone()).unwrap();
            assert_eq!(check("https://x", &read, 3).is_ok(), ok, "{body}");
        }
    }

    #[test]
    fn old_server_sentence_word_for_word() {
        let old = json!({"protocol": 1, "protocols": [1, 2], "version": "1.9.0"});
        let e = check("https://old.example", &serde_json::from_value(old).unwrap(), 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "https://old.example runs LLeMbas 1.9.0, which speaks link protocol 1 and 2; this LLeMbas CLI needs a LLeMbas 2.0 server (protocol 3) — update the server, or use LLeMbas CLI 1.x with it"
        );
    }

    #[test]
    fn link_urls() {
        let cases = [
            ("https://l.example", Some("wss://l.example/api/devices/link")),
            (
                "https://l.example/base/",
                Some("wss://l.example/base/api/devices/link"),
            ),
            (
                "http://127.0.0.1:8080",
                Some("ws://127.0.0.1:8080/api/devices/link"),
            ),
            ("http://localhost:1", Some("ws://localhost:1/api/devices/link")),
            ("http://[::1]:1", Some("ws://[::1]:1/api/devices/link")),
            ("http://l.example", None),
            ("http://10.0.0.1", None),
            ("ftp://l.example", None),
            ("not a url", None),
        ];
        for (raw, want) in cases {
            let got = server_url(raw).map(|u| link_url(&u).to_string()).ok();
            assert_eq!(got.as_deref(), want, "{raw}");
        }
    }
}
