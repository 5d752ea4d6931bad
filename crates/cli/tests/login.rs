//! `lembas login --token-stdin` and `lembas logout` end to end: the real binary against the
//! reference peer, the token in the real keychain (run inside scripts/with-keyring).

mod common;

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

/// One request to the home's running device over its control socket (the desktop window's road).
async fn control_call(home: &Home, method: &str, params: Value) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let stream = tokio::net::UnixStream::connect(home.socket()).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    // The control cookie first, as the window's client presents it.
    let cookie = std::fs::read_to_string(home.cookie()).unwrap();
    let hello =
        json!({ "jsonrpc": "2.0", "id": 0, "method": "hello", "params": { "cookie": cookie.trim() } });
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    write
        .write_all(format!("{hello}\n{request}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    for _ in 0..2 {
        line.clear();
        tokio::time::timeout(WAIT, read.read_line(&mut line))
            .await
            .expect("an answer within the wait")
            .unwrap();
    }
    serde_json::from_str(&line).unwrap()
}

/// The error's JSON-RPC code, `data.reason` and sentence.
fn error_of(answer: &Value) -> (i64, &str, &str) {
    let error = &answer["error"];
    (
        error["code"].as_i64().unwrap_or_default(),
        error["data"]["reason"].as_str().unwrap_or_default(),
        error["message"].as_str().unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_logs_in_and_out_through_the_running_device() {
    let _turn = KEYCHAIN.lock().await;
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    home.config_for(&peer.url(), "");
    let mut service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let server = peer.url();

    // Each refusal with the code the window branches on; the token is never echoed.
    let wrong = control_call(
        &home,
        "login",
        json!({ "server": server, "token": "not-the-token" }),
    )
    .await;
    let (code, reason, message) = error_of(&wrong);
    assert_eq!((code, reason), (-32602, "token_refused"), "{wrong}");
    assert!(
        message.contains(
            "does not accept this token (401): it is mistyped, expired or revoked. Get a new device token"
        ),
        "{message}"
    );
    assert!(!wrong.to_string().contains("not-the-token"), "{wrong}");
    let cases = [
        (json!({ "server": "not a server", "token": TOKEN }), "bad_server"),
        (
            json!({ "server": "http://127.0.0.1:9", "token": TOKEN }),
            "unreachable",
        ),
        (json!({ "server": server, "token": "  " }), "malformed_token"),
        (
            json!({ "server": server, "token": "two words" }),
            "malformed_token",
        ),
    ];
    for (params, code) in cases {
        let answer = control_call(&home, "login", params).await;
        assert_eq!(error_of(&answer).1, code, "{answer}");
        assert!(!answer.to_string().contains("two words"), "{answer}");
    }
    let shapeless = control_call(&home, "login", json!({ "server": server })).await;
    assert_eq!(error_of(&shapeless).0, -32602, "{shapeless}");
    assert!(
        matches!(Keychain::of(&home.dirs()).load(), Ok(t) if t.expose() == TOKEN),
        "a refused login stores nothing"
    );

    // The right token: stored, and the device dials again at once with it.
    let done = control_call(&home, "login", json!({ "server": server, "token": TOKEN })).await;
    let said = done["result"]["message"].as_str().unwrap_or_default();
    assert!(said.starts_with("Logged in again to "), "{done}");
    assert!(said.ends_with("The token is in the OS keychain."), "{said}");
    let mut again = peer.next_link(WAIT).await.unwrap();
    assert_eq!(
        again.headers.get("authorization").and_then(|h| h.to_str().ok()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    again.hello(WAIT).await.unwrap();

    // Logged out through the socket: the login and the token are gone; a headless service then
    // ends, saying how to log in (the desktop's runtime waits for a login instead).
    let out = control_call(&home, "logout", json!({})).await;
    let said = out["result"]["message"].as_str().unwrap_or_default();
    assert!(said.starts_with(&format!("Logged out of {server}")), "{out}");
    assert!(matches!(
        Keychain::of(&home.dirs()).load(),
        Err(KeychainError::Missing)
    ));
    assert_eq!(lembas_device::settings::load(&home.dirs()).unwrap().server, None);
    let ended = tokio::task::block_in_place(|| service.wait_exit(WAIT));
    assert!(ended.is_some_and(|s| !s.success()), "{}", service.log());
    assert!(service.log().contains("Not logged in"), "{}", service.log());
    assert!(
        !contains_token(service.log().as_bytes()),
        "the token is in no log"
    );
    store_token();
}

/// tests/acp-client/login.mjs: the official ACP SDK as an editor on a computer not logged in. Its
/// session/new is ACP's auth-required, with what to do; after `lembas login` in a terminal its
/// authenticate reads the login and the chat starts; its logout forgets the login as `lembas
/// logout` does.
#[tokio::test(flavor = "multi_thread")]
async fn an_editor_is_told_to_log_in_authenticates_and_logs_out() {
    let _turn = KEYCHAIN.lock().await;
    let dir = common::acp_sdk::installed_sdk();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let (seen, stderr) = common::acp_sdk::run_script_with_env(
        &dir,
        &home,
        "login.mjs",
        &[work.as_os_str(), peer.url().as_ref()],
        &[("LEMBAS_TEST_TOKEN", TOKEN)],
    );

    let initialize = &seen["initialize"];
    validate_acp("InitializeResponse", initialize).unwrap();
    assert_eq!(
        initialize["authMethods"],
        json!([{
            "id": "lembas-login",
            "name": "LLeMbas login on this computer",
            "description": "Uses the login lembas login made (the server in the config, the token in the OS keychain). Not logged in yet: run lembas login --token-stdin --server <url> in a terminal (the token from your LLeMbas instance's device page), then authenticate again."
        }, {
            "type": "terminal",
            "id": "lembas-login-terminal",
            "name": "Log in to LLeMbas in a terminal",
            "description": "Asks for your LLeMbas instance and the device token from its device page, and keeps the token in the OS keychain.",
            "args": ["--login"]
        }]),
        "the terminal method for an editor that said it runs one"
    );
    for refused in ["newBefore", "authBefore", "newLoggedOut", "promptLoggedOut"] {
        let error = &seen[refused]["error"];
        assert_eq!(error["code"], -32000, "{refused}: {seen}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("not logged in to a LLeMbas instance"),
            "{refused}: {error}"
        );
    }
    assert_eq!(seen["unknownMethod"]["error"]["code"], -32602, "{seen}");
    assert_eq!(
        seen["terminalThroughAuthenticate"]["error"]["code"], -32602,
        "{seen}"
    );
    let started = |answer: &str| {
        seen[answer]["result"]["sessionId"]
            .as_str()
            .is_some_and(|id| id.starts_with("ses_"))
    };
    // lembas login in a terminal, then authenticate.
    assert_eq!(seen["loggedIn"]["status"], 0, "{seen}");
    assert_eq!(seen["auth"], json!({ "result": {} }), "{seen}");
    assert!(started("newAfterAuth"), "{seen}");
    assert_eq!(seen["logout"], json!({ "result": {} }), "{seen}");
    // The terminal login, then a chat with no authenticate between.
    assert_eq!(seen["terminalLogin"]["status"], 0, "{seen}");
    assert!(started("newAfterTerminal"), "{seen}");
    // Forgotten as lembas logout forgets it.
    assert_eq!(seen["logoutAgain"], json!({ "result": {} }), "{seen}");
    assert!(matches!(
        Keychain::of(&home.dirs()).load(),
        Err(KeychainError::Missing)
    ));
    assert_eq!(lembas_device::settings::load(&home.dirs()).unwrap().server, None);
    assert_eq!(seen["others"], json!([]), "{seen}");
    assert_eq!(seen["exit"], json!({ "code": 0, "signal": null }), "{stderr}");
    store_token();
}

/// At a terminal the token is typed unseen (`serve --stdio --login`, an editor's terminal login):
/// the address typed before it is echoed as usual, the token is not, and the login is made.
#[tokio::test(flavor = "multi_thread")]
async fn a_token_typed_at_a_terminal_is_not_shown() {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::io::Read;
    use std::sync::{Arc, Mutex};

    let _turn = KEYCHAIN.lock().await;
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let url = peer.url().to_string();
    let env = home.env();
    let screen = tokio::task::spawn_blocking(move || {
        let size = PtySize {
            rows: 24,
            cols: 400,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system().openpty(size).unwrap();
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_lembas"));
        command.args(["serve", "--stdio", "--login"]);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = pair.slave.spawn_command(command).unwrap();
        drop(pair.slave);
        let shown = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let reading = {
            let shown = shown.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = reader.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    shown.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            })
        };
        let wait_for = |words: &str| {
            let end = std::time::Instant::now() + WAIT;
            while !String::from_utf8_lossy(&shown.lock().unwrap()).contains(words) {
                assert!(
                    std::time::Instant::now() < end,
                    "no {words:?} in {:?}",
                    shown.lock().unwrap()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        let mut keys = pair.master.take_writer().unwrap();
        wait_for("The LLeMbas instance");
        keys.write_all(format!("{url}\r").as_bytes()).unwrap();
        wait_for("it is not shown");
        keys.write_all(format!("{TOKEN}\r").as_bytes()).unwrap();
        let status = child.wait().unwrap();
        drop(keys);
        drop(pair.master);
        let _ = reading.join();
        let screen = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
        assert!(status.success(), "{screen}");
        screen
    })
    .await
    .unwrap();
    assert!(
        screen.contains(&peer.url().to_string()),
        "the address is echoed: {screen}"
    );
    assert!(!screen.contains(TOKEN), "the token was shown: {screen}");
    assert!(screen.contains("Back in the editor"), "{screen}");
    assert_eq!(Keychain::of(&home.dirs()).load().unwrap().expose(), TOKEN);
}
