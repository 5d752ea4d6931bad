//! The HTTP proxy the environment names, where it names one: `HTTPS_PROXY` for `https://` and
//! `wss://`, `HTTP_PROXY` for `http://` and `ws://`, `ALL_PROXY`, and `NO_PROXY`, read as curl and
//! reqwest read them (hyper-util's matcher, the one reqwest uses: the model client and discovery go
//! through reqwest's own). The link is a `CONNECT` tunnel to the instance; TLS and the WebSocket
//! handshake run inside it, so the proxy sees neither the token nor a byte of the link.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::http::{HeaderValue, Uri};

/// The proxy's answer to `CONNECT` ends within this many bytes (a status line and a few headers).
const MAX_ANSWER_BYTES: usize = 8 * 1024;

/// Why the link cannot go through the proxy; its sentence ends the status line's "cannot reach".
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error(
        "the proxy {proxy} is not an http:// proxy: the link goes through an http:// proxy only (set HTTPS_PROXY=http://host:port, or the instance in NO_PROXY)"
    )]
    NotHttp { proxy: String },
    #[error("the proxy address {proxy} names no host")]
    NoHost { proxy: String },
    #[error("the proxy {proxy} cannot be reached: {source}")]
    Unreachable { proxy: String, source: std::io::Error },
    #[error("the proxy {proxy} closed the connection: {source}")]
    Closed { proxy: String, source: std::io::Error },
    #[error("the proxy {proxy} did not answer CONNECT: {why}")]
    NoAnswer { proxy: String, why: String },
    #[error(
        "the proxy {proxy} asks for a login (407): put it in the proxy's address, http://user:password@host:port"
    )]
    LoginNeeded { proxy: String },
    #[error("the proxy {proxy} refused the tunnel to {target} ({code})")]
    Refused {
        proxy: String,
        target: String,
        code: u16,
    },
    #[error("the proxy {proxy} answered CONNECT with no HTTP status")]
    NoStatus { proxy: String },
}

/// Where the link's TCP connection goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Via {
    /// `host:port` of the proxy.
    pub proxy: String,
    /// `Proxy-Authorization` from the proxy's URL (`http://user:pass@host:port`), if any.
    auth: Option<HeaderValue>,
}

fn intercept(address: &url::Url) -> Option<hyper_util::client::proxy::matcher::Intercept> {
    let scheme = if matches!(address.scheme(), "wss" | "https") {
        "https"
    } else {
        "http"
    };
    let host = address.host_str()?;
    let port = address.port_or_known_default().unwrap_or(443);
    let dst: Uri = format!("{scheme}://{}:{port}/", bracketed(host)).parse().ok()?;
    hyper_util::client::proxy::matcher::Matcher::from_env().intercept(&dst)
}

/// The proxy an address goes through, as a person would name it (`http://host:port`, never its
/// login), for a sentence about a failure there.
pub fn named_for(address: &url::Url) -> Option<String> {
    let proxy = intercept(address)?.uri().clone();
    let host = proxy.host()?;
    let port = proxy.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    Some(format!("{}://{host}{port}", proxy.scheme_str().unwrap_or("http")))
}

/// The proxy the environment names for the link's address (`ws://` or `wss://`), or none.
pub fn for_link(link: &url::Url) -> Result<Option<Via>, ProxyError> {
    let Some(intercept) = intercept(link) else {
        return Ok(None);
    };
    let proxy = intercept.uri();
    if proxy.scheme_str() != Some("http") {
        return Err(ProxyError::NotHttp {
            proxy: proxy.to_string(),
        });
    }
    let Some(proxy_host) = proxy.host() else {
        return Err(ProxyError::NoHost {
            proxy: proxy.to_string(),
        });
    };
    Ok(Some(Via {
        proxy: format!("{proxy_host}:{}", proxy.port_u16().unwrap_or(80)),
        auth: intercept.basic_auth().cloned(),
    }))
}

/// A TCP connection to `host:port` through the proxy's `CONNECT` tunnel, ready for TLS.
pub async fn tunnel(via: &Via, host: &str, port: u16) -> Result<TcpStream, ProxyError> {
    let proxy = || via.proxy.clone();
    let mut stream = TcpStream::connect(&via.proxy)
        .await
        .map_err(|source| ProxyError::Unreachable {
            proxy: proxy(),
            source,
        })?;
    let _ = stream.set_nodelay(true);
    let target = format!("{}:{port}", bracketed(host));
    let mut ask = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(auth) = via.auth.as_ref().and_then(|a| a.to_str().ok()) {
        ask.push_str(&format!("Proxy-Authorization: {auth}\r\n"));
    }
    ask.push_str("\r\n");
    stream
        .write_all(ask.as_bytes())
        .await
        .map_err(|source| ProxyError::Closed {
            proxy: proxy(),
            source,
        })?;
    let answer = read_head(&mut stream)
        .await
        .map_err(|why| ProxyError::NoAnswer { proxy: proxy(), why })?;
    match status_of(&answer) {
        Some(200..=299) => Ok(stream),
        Some(407) => Err(ProxyError::LoginNeeded { proxy: proxy() }),
        Some(code) => Err(ProxyError::Refused {
            proxy: proxy(),
            target,
            code,
        }),
        None => Err(ProxyError::NoStatus { proxy: proxy() }),
    }
}

/// The header block of the proxy's answer, up to its blank line; a byte at a time, so nothing of
/// the tunnel after it is read here.
async fn read_head(stream: &mut TcpStream) -> Result<Vec<u8>, String> {
    let mut head = Vec::with_capacity(256);
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_ANSWER_BYTES {
            return Err(format!("its answer ran past {MAX_ANSWER_BYTES} bytes"));
        }
        let byte = stream.read_u8().await.map_err(|e| e.to_string())?;
        head.push(byte);
    }
    Ok(head)
}

/// The status code of an HTTP/1 answer's first line.
fn status_of(head: &[u8]) -> Option<u16> {
    let line = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    words.next().filter(|v| v.starts_with("HTTP/1."))?;
    words.next()?.parse().ok()
}

/// An IPv6 address in brackets, as a URI and `CONNECT` want it.
fn bracketed(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// `user:password` as a `Proxy-Authorization` value (for the tests; the matcher makes the real one).
#[cfg(test)]
fn basic(user_pass: &str) -> HeaderValue {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(user_pass);
    HeaderValue::from_str(&format!("Basic {encoded}")).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines() {
        let cases: [(&[u8], Option<u16>); 5] = [
            (b"HTTP/1.1 200 Connection established\r\n\r\n", Some(200)),
            (b"HTTP/1.0 200 OK\r\nProxy-agent: x\r\n\r\n", Some(200)),
            (b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", Some(407)),
            (b"SSH-2.0-OpenSSH\r\n\r\n", None),
            (b"HTTP/1.1 abc\r\n\r\n", None),
        ];
        for (head, status) in cases {
            assert_eq!(status_of(head), status, "{}", String::from_utf8_lossy(head));
        }
    }

    /// A proxy that answers `answer` to whatever is asked, and what it was asked.
    async fn proxy_answering(answer: &'static [u8]) -> (String, tokio::task::JoinHandle<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let asked = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let head = read_head(&mut s).await.unwrap();
            s.write_all(answer).await.unwrap();
            String::from_utf8(head).unwrap()
        });
        (addr, asked)
    }

    #[tokio::test]
    async fn the_tunnel_asks_for_the_instance_with_the_proxy_login() {
        let (addr, asked) = proxy_answering(b"HTTP/1.1 200 Connection established\r\n\r\n").await;
        let via = Via {
            proxy: addr,
            auth: Some(basic("ann:s3cret")),
        };
        tunnel(&via, "llembas.example.org", 443).await.unwrap();
        let asked = asked.await.unwrap();
        assert!(
            asked.starts_with("CONNECT llembas.example.org:443 HTTP/1.1\r\n"),
            "{asked}"
        );
        assert!(asked.contains("Host: llembas.example.org:443\r\n"), "{asked}");
        assert!(asked.contains(&format!(
            "Proxy-Authorization: {}\r\n",
            basic("ann:s3cret").to_str().unwrap()
        )));
    }

    #[tokio::test]
    async fn refusals_are_sentences() {
        for (answer, said) in [
            (
                &b"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"[..],
                "asks for a login (407)",
            ),
            (
                &b"HTTP/1.1 403 Forbidden\r\n\r\n"[..],
                "refused the tunnel to [::1]:8443 (403)",
            ),
            (&b"garbage\r\n\r\n"[..], "no HTTP status"),
        ] {
            let (addr, _asked) = proxy_answering(answer).await;
            let via = Via {
                proxy: addr,
                auth: None,
            };
            let e = tunnel(&via, "::1", 8443).await.unwrap_err().to_string();
            assert!(e.contains(said), "{e}");
        }
        let via = Via {
            proxy: "127.0.0.1:1".into(),
            auth: None,
        };
        let e = tunnel(&via, "a", 1).await.unwrap_err();
        assert!(matches!(e, ProxyError::Unreachable { .. }), "{e}");
    }
}
