//! What the tests share (dev only): a temporary home laid out as a person's ([`Home`]) with its
//! config said by what it holds ([`Config`]), the device token put in the real keychain through
//! the function login uses ([`store_token`], [`Home::store_token`]), a runtime hosted in the test
//! and linked to a reference peer of its own ([`linked_runtime`]), a link from the reference peer
//! already past hello and initialize ([`linked`]), an engine in the test's process whose model is a
//! script ([`ScriptedEngine`]), polling ([`eventually`]), and a freedesktop notification server of
//! the test's own ([`notifications`]). Run the tests
//! inside `scripts/with-keyring` (a private D-Bus session with a Secret Service), as
//! `scripts/test` does.

mod config;
mod home;
pub mod login_manager;
pub mod notifications;
mod scripted_engine;

pub use config::Config;
pub use home::Home;
pub use scripted_engine::{ScriptedEngine, ShownCall};

use lembas_device::link::AtFinal;
use lembas_device::runtime::Runtime;
use lembas_peer::{LinkHandle, Peer, PeerConfig};
use std::time::{Duration, Instant};

/// Puts `token` in the person's keychain entry, the one a `lembas` or `lembas-desktop` run in a
/// [`Home`] reads. Tests running such programs at once in one keychain must agree on it; a runtime
/// the test hosts itself has an entry of its own ([`Home::store_token`]).
pub fn store_token(token: &str) {
    let token = lembas_device::keychain::Token::new(token).expect("a test token is one line of text");
    let dirs = lembas_device::paths::Dirs::from_env();
    lembas_device::keychain::Keychain::of(&dirs)
        .store(&token)
        .expect("the tests need a Secret Service: run them through scripts/with-keyring");
}

/// The peer's next link, past `_lembas/hello` and `initialize`.
pub async fn linked(peer: &Peer, within: Duration) -> anyhow::Result<LinkHandle> {
    let mut link = peer.next_link(within).await?;
    link.hello(within).await?;
    link.initialize(within).await?;
    Ok(link)
}

/// A runtime this test hosts in a home of its own, linked to a reference peer of its own: tests
/// holding one each run side by side in one process.
pub struct LinkedRuntime {
    pub home: Home,
    pub peer: Peer,
    pub runtime: Runtime,
    /// The peer's side of the runtime's link, past hello and initialize.
    pub link: LinkHandle,
}

/// Starts a reference peer that takes `token`, a home whose config is `config` made from the
/// peer's URL and the home, the token in the home's keychain entry, and a runtime in the home that
/// holds the device lock as `what`; returns once the link is past initialize.
pub async fn linked_runtime(
    token: &str,
    what: &str,
    config: impl FnOnce(&str, &Home) -> Config,
) -> anyhow::Result<LinkedRuntime> {
    let within = Duration::from_secs(20);
    let home = Home::new();
    let peer = Peer::start(PeerConfig::with_token(token)).await?;
    home.write(&config(&peer.url(), &home));
    home.store_token(token);
    let runtime = Runtime::start_with(home.setup(), what, AtFinal::Stop)?;
    let link = linked(&peer, within).await?;
    Ok(LinkedRuntime {
        home,
        peer,
        runtime,
        link,
    })
}

/// `command`'s output, where its program is a copy the test has just written. A test on another
/// thread that forks while the copy is still open for writing holds it open in its child until
/// that child's exec, and starting the copy in that moment fails with "Text file busy" (ETXTBSY):
/// that, and only that, is tried again, for at most a second.
pub fn output_of_fresh_copy(command: &mut std::process::Command) -> std::process::Output {
    for _ in 0..100 {
        match command.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(Duration::from_millis(10))
            }
            started => return started.expect("the copied program starts"),
        }
    }
    panic!("the copied program stayed busy (ETXTBSY) for a second: {command:?}")
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
