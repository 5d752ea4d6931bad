//! `lembas login --token-stdin` and `lembas logout` end to end: the real binary against the
//! reference peer, the token in the real keychain (run inside scripts/with-keyring). The window's
//! login through the running device ([`window`]) and an editor's ([`editor`]) take their turns at
//! the same keychain entry, so they are in this binary.

#[path = "../common/mod.rs"]
mod common;
mod editor;
mod window;

use common::*;
use lembas_device::keychain::{Keychain, KeychainError};
use lembas_peer::{Peer, PeerConfig};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Output, Stdio};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

/// The tests of this file share one keychain entry: those that write it or check it take turns.
static KEYCHAIN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A config with comments, to show a refused login leaves it byte for byte.
const HAND_WRITTEN: &str = "# mine\nremote:\n  enabled: true   # on\nfavourite: green\n";

/// Runs `lembas login` with `stdin` as its standard input.
fn login(home: &Home, server: &str, stdin: &str, extra: &[&str]) -> Output {
    let mut args = vec!["login", "--token-stdin", "--server", server];
    args.extend_from_slice(extra);
    run_with_stdin(home.command(&args), stdin)
}

fn run_with_stdin(mut command: std::process::Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The one JSON line of `--json`.
fn json_line(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {stdout:?}");
    serde_json::from_str(lines[0]).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn contains_token(hay: &[u8]) -> bool {
    hay.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes())
}

/// A home whose processes reach no keychain: no session bus at all.
fn without_keychain(home: &Home, mut command: std::process::Command) -> std::process::Command {
    let runtime = home.path().join("no-bus");
    std::fs::create_dir_all(&runtime).unwrap();
    command
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("XDG_RUNTIME_DIR", runtime);
    command
}

#[tokio::test(flavor = "multi_thread")]
async fn login_proves_stores_and_the_service_links_with_it() {
    let _turn = KEYCHAIN.lock().await;
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let out = login(&home, &peer.url(), &format!("  {TOKEN}\n"), &["--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(r#"{"event":"done","fresh":true,"connection":"example","base_url":"#)
    );
    assert_eq!(
        json_line(&out),
        json!({
            "event": "done", "fresh": true, "connection": "example", "base_url": peer.url(),
            "version": "2.0.0", "models": ["example/chat-fast", "example/chat-deep"],
            "changes": ["server", "embedding"],
        })
    );
    let config = std::fs::read_to_string(home.config()).unwrap();
    let settings = lembas_device::settings::load(&home.dirs()).unwrap();
    let server = settings.server.unwrap();
    assert_eq!(
        (server.url.as_str(), server.connection.as_deref()),
        (peer.url().as_str(), Some("example"))
    );
    assert_eq!(settings.embedding.as_deref(), Some("example/example/embed"));
    assert_eq!(Keychain::of(&home.dirs()).load().unwrap().expose(), TOKEN);
    // The proof came first, in the spec's order, and nothing but GETs.
    let paths: Vec<String> = peer
        .http_log()
        .into_iter()
        .map(|(m, p, _)| format!("{m} {p}"))
        .collect();
    assert_eq!(
        paths,
        [
            "GET /.well-known/lembas.json",
            "GET /api/v1/instance",
            "GET /v1/models"
        ]
    );

    // The service finds the login by itself and links with that token.
    home.write_config(&format!("{config}link:\n  backoff_first_ms: 100\n"));
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    assert_eq!(
        link.headers.get("authorization").and_then(|h| h.to_str().ok()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();

    // The token is in neither the login's output, the config, the state folder, the service's
    // log, nor the service's argv or environment.
    assert!(!contains_token(&out.stdout) && !contains_token(&out.stderr));
    assert!(!contains_token(&proc_file(service.pid(), "cmdline")));
    assert!(!contains_token(&proc_file(service.pid(), "environ")));
    let files = files_under(&home.path());
    assert!(files.iter().any(|f| f.ends_with("status.json")), "{files:?}");
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(!contains_token(&bytes), "the token is in {}", file.display());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn logging_in_again_replaces_the_token_and_keeps_the_embedding() {
    let _turn = KEYCHAIN.lock().await;
    let peer = Peer::start(PeerConfig::with_token("first-token-1"))
        .await
        .unwrap();
    let home = Home::new();
    home.write_config("# chosen by hand\nembedding: mine/embed   # keep\n");
    let first = login(&home, &peer.url(), "first-token-1", &["--json"]);
    assert!(first.status.success(), "{}", text(&first.stdout));
    let first = json_line(&first);
    assert_eq!(
        (first["fresh"].clone(), first["changes"].clone()),
        (json!(true), json!(["server"]))
    );
    assert_eq!(
        Keychain::of(&home.dirs()).load().unwrap().expose(),
        "first-token-1"
    );

    peer.set_config(|c| c.token = TOKEN.to_string());
    let again = login(&home, &peer.url(), TOKEN, &["--json"]);
    let again_line = json_line(&again);
    assert_eq!(
        (again_line["fresh"].clone(), again_line["changes"].clone()),
        (json!(false), json!([]))
    );
    assert_eq!(Keychain::of(&home.dirs()).load().unwrap().expose(), TOKEN);
    let config = std::fs::read_to_string(home.config()).unwrap();
    assert!(
        config.starts_with("# chosen by hand\nembedding: mine/embed   # keep\n"),
        "{config}"
    );

    // In sentences: who, where, which models, where the token is.
    let said = login(&home, &peer.url(), TOKEN, &[]);
    assert!(said.status.success());
    let said = text(&said.stdout);
    for part in [
        "Logged in again to LLeMbas (reference peer)",
        "LLeMbas 2.0.0 as Example Person <person@example.com>",
        "Chat models: example/chat-fast, example/chat-deep.",
        "The token is in the OS keychain.",
    ] {
        assert!(said.contains(part), "{part:?} in {said}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn logout_removes_the_token_and_the_login() {
    let _turn = KEYCHAIN.lock().await;
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    assert!(login(&home, &peer.url(), TOKEN, &[]).status.success());
    let out = home.run(&["logout"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("Logged out of {}", peer.url())));
    assert!(matches!(
        Keychain::of(&home.dirs()).load(),
        Err(KeychainError::Missing)
    ));
    let settings = lembas_device::settings::load(&home.dirs()).unwrap();
    assert_eq!(settings.server, None);
    assert_eq!(settings.embedding.as_deref(), Some("example/example/embed"));
    // Logged out, the service says how to log in.
    let service = home.run(&["service", "run"]);
    assert!(!service.status.success());
    assert!(
        text(&service.stderr).contains("Not logged in"),
        "{}",
        text(&service.stderr)
    );
    // Nothing left: logging out again is fine and says so.
    let again = home.run(&["logout", "--json"]);
    assert!(again.status.success());
    assert_eq!(json_line(&again), json!({ "event": "done", "server": null }));
    store_token();
}

/// A failed login: non-zero, one error line whose message holds `part`, and nothing written.
async fn refused(config: PeerConfig, stdin: &str, part: &str) {
    let _turn = KEYCHAIN.lock().await;
    store_token();
    let peer = Peer::start(config).await.unwrap();
    let home = Home::new();
    home.write_config(HAND_WRITTEN);
    let out = login(&home, &peer.url(), stdin, &["--json"]);
    assert!(!out.status.success());
    let line = json_line(&out);
    assert_eq!(line["event"], "error", "{line}");
    let message = line["message"].as_str().unwrap();
    assert!(message.contains(part), "{part:?} in {message}");
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), HAND_WRITTEN);
    assert_eq!(
        Keychain::of(&home.dirs()).load().unwrap().expose(),
        TOKEN,
        "the keychain is untouched"
    );
    assert!(!keychain_file(&home).exists());
    // Without --json: the same sentence on stderr, nothing on stdout.
    let out = login(&home, &peer.url(), stdin, &[]);
    assert!(!out.status.success());
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains(part), "{}", text(&out.stderr));
}

fn keychain_file(home: &Home) -> std::path::PathBuf {
    home.path().join(".config/lembas/device-token")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_the_instance_does_not_accept() {
    refused(
        PeerConfig::with_token(TOKEN),
        "not-the-token",
        "does not accept this token (401): it is mistyped, expired or revoked. Get a new device token from http://127.0.0.1:",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_without_the_link_scope() {
    let mut config = PeerConfig::with_token(TOKEN);
    config.instance.as_mut().unwrap()["scope"] = json!("models memory");
    refused(
        config,
        TOKEN,
        "This token cannot link a device: http://127.0.0.1:",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_protocol_2_server_gets_the_spec_sentence() {
    let config = PeerConfig::with_token(TOKEN).protocol_2_server();
    refused(
        config,
        TOKEN,
        "runs LLeMbas 1.9.0, which speaks link protocol 1 and 2; this LLeMbas CLI needs a LLeMbas 2.0 server (protocol 3) — update the server, or use LLeMbas CLI 1.x with it",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_protocol_1_server_gets_the_spec_sentence() {
    let mut config = PeerConfig::with_token(TOKEN);
    config.discovery = json!({ "service": "lembas", "protocol": 1, "version": "1.2.0" });
    refused(
        config,
        TOKEN,
        "runs LLeMbas 1.2.0, which speaks link protocol 1 and 2; this LLeMbas CLI needs a LLeMbas 2.0 server (protocol 3)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_instance_endpoint_missing_is_an_older_server() {
    refused(
        PeerConfig::with_token(TOKEN).without_instance(),
        TOKEN,
        "is older than LLeMbas 2.0 (it has no /api/v1/instance), so this device cannot log in to it. Update the server",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_instance_answer_without_scope_is_an_older_server() {
    let mut config = PeerConfig::with_token(TOKEN);
    config
        .instance
        .as_mut()
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove("scope");
    refused(
        config,
        TOKEN,
        "is older than LLeMbas 2.0 (its /api/v1/instance says no scope)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn empty_stdin_is_refused() {
    for stdin in ["", " \n\t\n"] {
        refused(
            PeerConfig::with_token(TOKEN),
            stdin,
            "No token on standard input: pipe the device token in",
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_with_spaces_inside_is_refused() {
    refused(
        PeerConfig::with_token(TOKEN),
        &format!("{TOKEN}\nsomething else\n"),
        "The token has spaces or line breaks inside it",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_is_down_cannot_be_reached() {
    let _turn = KEYCHAIN.lock().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let home = Home::new();
    let out = login(&home, &url, TOKEN, &["--json"]);
    assert!(!out.status.success());
    let message = json_line(&out)["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with(&format!("Cannot reach {url} ("))
            && message.ends_with("Check the address and your network, then log in again."),
        "{message}"
    );
    assert!(!home.config().exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_is_never_an_argument() {
    let home = Home::new();
    let out = home.run(&["login", "--server", "https://l.example", "--json"]);
    assert!(!out.status.success());
    assert!(
        json_line(&out)["message"]
            .as_str()
            .unwrap()
            .contains("takes the device token on standard input only: add --token-stdin")
    );
    let out = home.run(&["login", "--token-stdin", "--server", "https://l.example", TOKEN]);
    assert!(!out.status.success(), "a token given as an argument is refused");
    assert!(!home.config().exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_keychain_only_an_explicit_opt_in_stores_a_file() {
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let login_without = |extra: &[&str]| {
        let mut args = vec!["login", "--token-stdin", "--server"];
        let url = peer.url();
        args.push(&url);
        args.extend_from_slice(extra);
        run_with_stdin(without_keychain(&home, home.command(&args)), TOKEN)
    };

    // No keychain and no opt-in: a sentence saying what is missing and what to do, nothing written.
    let out = login_without(&["--json"]);
    assert!(!out.status.success());
    let message = json_line(&out)["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("no OS keychain is reachable") && message.contains("--insecure-storage"),
        "{message}"
    );
    assert!(!home.config().exists() && !keychain_file(&home).exists());

    // Opted in: a 0600 file beside the config, said loudly on stderr.
    let out = login_without(&["--json", "--insecure-storage"]);
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert_eq!(json_line(&out)["event"], "done");
    let warning = text(&out.stderr);
    assert!(
        warning.starts_with("Warning: --insecure-storage keeps the device token in ")
            && warning.contains(&keychain_file(&home).display().to_string()),
        "{warning}"
    );
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(keychain_file(&home)).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::read_to_string(keychain_file(&home)).unwrap().trim(),
        TOKEN
    );
    assert!(!std::fs::read_to_string(home.config()).unwrap().contains(TOKEN));

    // The service finds the file (no keychain there either) and says so on stderr.
    let config = std::fs::read_to_string(home.config()).unwrap();
    home.write_config(&format!("{config}link:\n  backoff_first_ms: 100\n"));
    let log = home.path().join("service.log");
    let mut service = without_keychain(&home, home.command(&["service", "run"]))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let link = peer.next_link(WAIT).await;
    let _ = service.kill();
    let _ = service.wait();
    let link = link.unwrap();
    assert_eq!(
        link.headers.get("authorization").and_then(|h| h.to_str().ok()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("a plain file (logged in with --insecure-storage)"),
        "{log}"
    );
    assert!(!contains_token(log.as_bytes()));

    // Logging out removes the file.
    let out = without_keychain(&home, home.command(&["logout"]))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!keychain_file(&home).exists());
}
