//! An editor's logins: the official SDK told to log in, authenticating and logging out, and the
//! terminal login typing the token unseen.

use super::*;

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
