//! The window's process lifecycle and the tray's socket, as the tray runs them, without a display:
//! the window's executable is a stand-in window (a shell script) that writes down its arguments and
//! each line the tray sends it, and "closes" (exits) on a `show` line. Covered: one tray per user
//! (a second claim finds the first), `window/open` from a second launch starts the window on its
//! view, a second open brings the running one forward instead of starting another, the tray reaps
//! a window that ended and starts a fresh one on the next open, the socket's answers to bad params
//! and an unknown method. (The window's own calls go to the runtime's control socket.)

use std::path::Path;
use std::time::Duration;

use lembas_desktop::tray_socket::{self, Claim, Served};
use lembas_desktop::window::WindowProcess;
use lembas_device::control::{CallError, Client};
use lembas_device::rpc;
use lembas_protocol::view::View;
use lembas_testkit::Home;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(10);

async fn until(what: &str, mut probe: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !probe() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn read(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_window_process_at_a_time_opened_from_a_second_launch() {
    let kit = Home::new();
    let home = kit.path();
    let runtime_dir = kit.runtime_dir();
    let log = home.join("window.log");
    let fake = home.join("fake-window");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"started $*\" >> '{log}'\nwhile read -r line; do\n  echo \"line $line\" >> '{log}'\n  case \"$line\" in *show*) exit 0;; esac\ndone\n",
            log = log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dirs = kit.dirs();

    let Ok(Claim::First { lock, listener }) = tray_socket::claim(&dirs) else {
        panic!("the first launch must become the tray");
    };
    assert!(
        matches!(tray_socket::claim(&dirs), Ok(Claim::Running)),
        "a second launch must find the first"
    );
    let socket = tray_socket::path(&dirs);
    assert!(
        socket.starts_with(runtime_dir.join("lembas")),
        "{}",
        socket.display()
    );
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the tray's socket is its user's only");

    let window = WindowProcess::new(fake.clone());
    tokio::spawn(tray_socket::serve(
        listener,
        Served {
            window: window.clone(),
        },
    ));

    // A second launch asks for the window (on a view, as a clicked notification would).
    tray_socket::ask_to_open(&dirs, Some(View::Activity))
        .await
        .unwrap();
    until("the window process starts", || read(&log).contains("started")).await;
    let started = read(&log);
    assert!(
        started.contains(r#"started --view {"view":"activity"}"#),
        "{started}"
    );
    assert!(window.is_open());

    // Asked again: the running window comes forward, on the new view; no second process.
    let card = View::Card {
        tool_call_id: "t9".into(),
    };
    tray_socket::ask_to_open(&dirs, Some(card)).await.unwrap();
    until("the open window is told to come forward", || {
        read(&log).contains(r#"line {"show":{"view":"card","tool_call_id":"t9"}}"#)
    })
    .await;
    // The stand-in closes on that line: the tray reaps it.
    until("the tray reaps the window that closed", || !window.is_open()).await;
    assert_eq!(read(&log).matches("started").count(), 1, "{}", read(&log));

    // The next open starts a fresh window process.
    window.open(None).unwrap();
    until("a fresh window starts", || {
        read(&log).matches("started").count() == 2
    })
    .await;
    assert!(read(&log).ends_with("started \n"), "{}", read(&log));

    // The socket's answers to what it does not take.
    let mut client = Client::connect_at(socket.clone()).await.unwrap();
    match client
        .call(tray_socket::WINDOW_OPEN, json!({ "view": "nowhere" }))
        .await
    {
        Err(CallError::Rpc(e)) => assert_eq!(e.code, rpc::INVALID_PARAMS, "{}", e.message),
        other => panic!("a view that is not one must be refused: {other:?}"),
    }
    match client.call("desktop/format_disk", json!({})).await {
        Err(CallError::Rpc(e)) => assert_eq!(e.code, rpc::METHOD_NOT_FOUND),
        other => panic!("an unknown method must be refused: {other:?}"),
    }
    drop(lock);
}
