//! What the tests share (dev only): a temporary home laid out as a person's ([`Home`]), the device
//! token put in the real keychain through the function login uses ([`store_token`]), a link from
//! the reference peer already past hello and initialize ([`linked`]), polling ([`eventually`]),
//! and a freedesktop notification server of the test's own ([`notifications`]). Run the tests
//! inside `scripts/with-keyring` (a private D-Bus session with a Secret Service), as
//! `scripts/test` does.

mod home;
pub mod notifications;

pub use home::Home;

use lembas_peer::{LinkHandle, Peer};
use std::time::{Duration, Instant};

/// Puts `token` in the OS keychain (the same entry and function login uses). Tests running at once
/// in one keychain must agree on it.
pub fn store_token(token: &str) {
    let token = lembas_device::keychain::Token::new(token).expect("a test token is one line of text");
    lembas_device::keychain::store(&token)
        .expect("the tests need a Secret Service: run them through scripts/with-keyring");
}

/// The peer's next link, past `_lembas/hello` and `initialize`.
pub async fn linked(peer: &Peer, within: Duration) -> anyhow::Result<LinkHandle> {
    let mut link = peer.next_link(within).await?;
    link.hello(within).await?;
    link.initialize(within).await?;
    Ok(link)
}

/// Polls until `f` is true, at most `within`; whether it became true.
pub fn eventually(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    f()
}

/// What `program --version` prints (trimmed), run with no display: it must answer before opening
/// one.
pub fn version_of(program: &str) -> String {
    let out = std::process::Command::new(program)
        .arg("--version")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("the program runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
