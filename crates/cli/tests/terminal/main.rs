//! Remote terminals end to end: the real `lembas service run` against the reference peer, a real
//! bash in a real PTY.

#[path = "../common/mod.rs"]
mod common;
mod window;

use base64::Engine;
use common::*;
use lembas_peer::{LinkHandle, Peer, PeerConfig};
use serde_json::json;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(15);
const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

async fn linked(terminal: bool) -> (Peer, Home, Service, LinkHandle) {
    linked_with(terminal, false).await
}

/// As [`linked`]; `require_trust` as given, and nothing trusted.
async fn linked_with(terminal: bool, require_trust: bool) -> (Peer, Home, Service, LinkHandle) {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    home.config_for(
        &peer.url(),
        &format!(
            "remote:\n  enabled: true\n  terminal: {terminal}\n  require_trust: {require_trust}\n  roots:\n    - {}\n",
            work.display()
        ),
    );
    // A known shell with no user startup files of note.
    std::fs::write(home.path().join(".bashrc"), "PS1='$ '\n").unwrap();
    let service = home.service_with_env(&[("SHELL", "/bin/bash")]);
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    (peer, home, service, link)
}

async fn input(link: &mut LinkHandle, id: &str, text: &str) {
    link.notify(
        "_lembas/terminal/input",
        json!({ "terminalId": id, "data": B64.encode(text) }),
    )
    .await
    .unwrap();
}

/// All a terminal wrote, and how far the test has read it.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    read: usize,
}

impl Screen {
    /// Reads output until `want` appears after what was read so far; the text up to its end.
    async fn until(&mut self, link: &mut LinkHandle, want: &str, within: Duration) -> String {
        let end = Instant::now() + within;
        loop {
            let text = String::from_utf8_lossy(&self.bytes[self.read..]).into_owned();
            if let Some(at) = text.find(want) {
                let upto = &text[..at + want.len()];
                self.read += upto.len().min(self.bytes.len() - self.read);
                return upto.to_string();
            }
            let left = end.saturating_duration_since(Instant::now());
            let frame = link
                .recv_notification("_lembas/terminal/output", left)
                .await
                .unwrap_or_else(|e| {
                    panic!(
                        "{want:?} did not come ({e}); last output: {:?}",
                        &text[text.len().saturating_sub(300)..]
                    )
                });
            self.bytes
                .extend(B64.decode(frame["params"]["data"].as_str().unwrap()).unwrap());
            // A flood must not grow the test's memory without bound.
            if self.bytes.len() - self.read > 4 << 20 {
                let skip = self.bytes.len() - self.read - (1 << 20);
                self.read += skip;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shell_over_the_link_with_flow_control() {
    let (_peer, home, service, mut link) = linked(true).await;
    let init_caps = link
        .received()
        .iter()
        .find(|m| m["result"]["_meta"]["lembas"]["capabilities"].is_array())
        .cloned();
    let caps = init_caps.unwrap()["result"]["_meta"]["lembas"]["capabilities"].clone();
    assert!(
        caps.as_array().unwrap().contains(&json!("terminal"))
            && caps.as_array().unwrap().contains(&json!("shell"))
    );
    let opened = link
        .request("_lembas/terminal/open", json!({ "cols": 10, "rows": 1000 }), WAIT)
        .await
        .unwrap();
    let r = &opened["result"];
    assert_eq!(
        r["cwd"],
        home.path().join("work").display().to_string(),
        "{opened}"
    );
    assert_eq!(
        (r["cols"].clone(), r["rows"].clone(), r["shell"].clone()),
        (json!(20), json!(300), json!("bash"))
    );
    assert_eq!(r["integration"], true);
    let id = r["terminalId"].as_str().unwrap().to_string();
    let mut screen = Screen::default();
    screen.until(&mut link, "\u{1b}]133;B", WAIT).await;
    input(&mut link, &id, "stty size; echo P\"\"ID=$$\r").await;
    let out = screen.until(&mut link, "\u{1b}]133;A", WAIT).await;
    assert!(out.contains("300 20"), "{out}");
    let pid: i32 = out
        .split("PID=")
        .nth(1)
        .unwrap()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();

    // A flood: other requests still get through, and Ctrl-C brings the prompt back.
    input(&mut link, &id, "yes\r").await;
    screen.until(&mut link, "y\r\ny\r\ny", WAIT).await;
    // Answered while the flood goes on (it never ends by itself): a request starved behind it
    // would run out the wait. How long it waits is `scripts/bench`'s.
    let places = link
        .request("_lembas/directories", json!({}), WAIT)
        .await
        .unwrap();
    assert!(places["result"]["places"].is_array(), "{places}");
    input(&mut link, &id, "\u{3}").await;
    screen.until(&mut link, "\u{1b}]133;D;130", WAIT).await;
    screen.until(&mut link, "\u{1b}]133;A", WAIT).await;

    // Limits: four per link, cwd inside the roots.
    for _ in 0..3 {
        let more = link
            .request("_lembas/terminal/open", json!({}), WAIT)
            .await
            .unwrap();
        assert!(more["result"]["terminalId"].is_string(), "{more}");
    }
    let fifth = link
        .request("_lembas/terminal/open", json!({}), WAIT)
        .await
        .unwrap();
    assert_eq!(fifth["error"]["code"], -32602, "{fifth}");
    // The link drops: every shell goes with it.
    link.drop_tcp();
    assert!(
        eventually(WAIT, || !std::path::Path::new(&format!("/proc/{pid}")).exists()),
        "the shell outlived the link"
    );
    drop(service);
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_outside_the_roots_and_absent_when_off() {
    let (_peer, home, _service, mut link) = linked(true).await;
    let outside = link
        .request("_lembas/terminal/open", json!({ "cwd": home.path() }), WAIT)
        .await
        .unwrap();
    assert_eq!(outside["error"]["code"], -32602);
    assert!(
        outside["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outside the folders"),
        "{outside}"
    );

    let (_peer, _home, _service, mut link) = linked(false).await;
    let caps = link
        .request(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": {} }),
            WAIT,
        )
        .await
        .unwrap();
    let caps = caps["result"]["_meta"]["lembas"]["capabilities"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        !caps.contains(&json!("terminal")) && !caps.contains(&json!("shell")),
        "{caps:?}"
    );
    let open = link
        .request("_lembas/terminal/open", json!({}), WAIT)
        .await
        .unwrap();
    assert_eq!(open["error"]["code"], -32601, "{open}");
}

#[tokio::test(flavor = "multi_thread")]
async fn turning_terminals_off_hangs_up_open_shells() {
    let (peer, home, _service, mut link) = linked(true).await;
    let opened = link
        .request("_lembas/terminal/open", json!({}), WAIT)
        .await
        .unwrap();
    let id = opened["result"]["terminalId"].as_str().unwrap().to_string();
    Screen::default().until(&mut link, "\u{1b}]133;A", WAIT).await;
    let text = std::fs::read_to_string(home.config())
        .unwrap()
        .replace("terminal: true", "terminal: false");
    home.write_config(&text);
    let exit = link
        .recv_notification("_lembas/terminal/exit", WAIT)
        .await
        .unwrap();
    assert_eq!(exit["params"]["terminalId"], id.as_str());
    assert_eq!(link.closed(WAIT).await.unwrap().map(|c| c.0), Some(1000));
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let init = link.initialize(WAIT).await.unwrap();
    assert!(
        !init["_meta"]["lembas"]["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("terminal"))
    );
}

/// docs/protocol.md: trust governs what a session loads from a project (its rules and commands); a shell
/// loads nothing from it, so a terminal's folder is judged by the roots alone.
#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_opens_in_the_first_root_even_when_nothing_is_trusted() {
    let (_peer, home, _service, mut link) = linked_with(true, true).await;
    let work = home.path().join("work");
    // A session there is refused: nothing is trusted.
    let session = link
        .request("session/new", json!({ "cwd": work, "mcpServers": [] }), WAIT)
        .await
        .unwrap();
    assert_eq!(session["error"]["code"], -32602, "{session}");
    assert!(
        session["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not in a trusted project"),
        "{session}"
    );
    // A terminal opens there, with no cwd (the first root) and with it named.
    let opened = link
        .request("_lembas/terminal/open", json!({}), WAIT)
        .await
        .unwrap();
    assert_eq!(opened["result"]["cwd"], work.display().to_string(), "{opened}");
    let id = opened["result"]["terminalId"].as_str().unwrap().to_string();
    let mut screen = Screen::default();
    screen.until(&mut link, "\u{1b}]133;A", WAIT).await;
    input(&mut link, &id, "pwd\n").await;
    screen
        .until(&mut link, &format!("{}\r\n", work.display()), WAIT)
        .await;
    std::fs::create_dir_all(work.join("sub")).unwrap();
    let sub = link
        .request("_lembas/terminal/open", json!({ "cwd": work.join("sub") }), WAIT)
        .await
        .unwrap();
    assert_eq!(
        sub["result"]["cwd"],
        work.join("sub").display().to_string(),
        "{sub}"
    );
    // The roots still bound it.
    let outside = link
        .request("_lembas/terminal/open", json!({ "cwd": home.path() }), WAIT)
        .await
        .unwrap();
    assert_eq!(outside["error"]["code"], -32602, "{outside}");
    assert!(
        outside["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("outside the folders"),
        "{outside}"
    );
}
