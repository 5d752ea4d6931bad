//! The window's view of the remote terminals, through the control socket of the real service: the
//! list, the replay ring and the live pushes, typing, and Hang up (the instance hears the exit).

use super::*;
use lembas_device::control::params::Streams;
use lembas_device::control::{Client, Subscription};
use serde_json::Value;

/// The ring each terminal keeps for the window (256 KiB).
const RING: usize = 256 * 1024;

async fn control(home: &Home) -> Client {
    Client::connect_control(home.socket(), &home.cookie())
        .await
        .expect("the service's control socket")
}

async fn call(client: &mut Client, method: &str, params: Value) -> Value {
    client
        .call(method, params)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// Reads `terminal/*` pushes until the output of `id` from `from` holds `want`; what it read of
/// that terminal (gaps are where the subscriber skipped).
async fn pushed_until(pushes: &mut Subscription, id: &str, from: u64, want: &str) -> (String, u64) {
    let mut text = Vec::new();
    let mut next = from;
    let end = Instant::now() + WAIT;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let (method, params) = tokio::time::timeout(left, pushes.next_notification())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{want:?} was not pushed; got {:?}",
                    String::from_utf8_lossy(&text)
                )
            })
            .expect("the subscription goes on");
        if method != "terminal/output" || params["id"] != id {
            continue;
        }
        let offset = params["offset"].as_u64().unwrap();
        let data = B64.decode(params["data"].as_str().unwrap()).unwrap();
        if offset + data.len() as u64 <= next {
            continue;
        }
        assert!(
            offset >= next || offset == from,
            "pushes go forward: {offset} after {next}"
        );
        next = offset + data.len() as u64;
        text.extend(data);
        if String::from_utf8_lossy(&text).contains(want) {
            return (String::from_utf8_lossy(&text).into_owned(), next);
        }
    }
}

fn replay(answer: &Value) -> (String, u64) {
    let bytes = B64.decode(answer["data"].as_str().unwrap()).unwrap();
    assert!(
        bytes.len() <= RING,
        "the ring holds at most 256 KiB, not {}",
        bytes.len()
    );
    (
        String::from_utf8_lossy(&bytes).into_owned(),
        answer["offset"].as_u64().unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_lists_replays_follows_types_into_and_hangs_up_a_terminal() {
    let (_peer, home, _service, mut link) = linked(true).await;
    let mut window = control(&home).await;
    let mut pushes = control(&home)
        .await
        .subscribe_with(Streams {
            terminals: true,
            ..Streams::default()
        })
        .await
        .unwrap();
    assert_eq!(call(&mut window, "terminals/list", json!({})).await, json!([]));

    let opened = link
        .request("_lembas/terminal/open", json!({}), WAIT)
        .await
        .unwrap();
    let id = opened["result"]["terminalId"].as_str().unwrap().to_string();
    let mut screen = Screen::default();
    screen.until(&mut link, "\u{1b}]133;B", WAIT).await;

    let listed = call(&mut window, "terminals/list", json!({})).await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["cwd"], opened["result"]["cwd"]);
    assert_eq!(listed[0]["shell"], "bash");

    // What the instance sees, the window sees: in the replay, and pushed live from its offset.
    let (_, from) = replay(&call(&mut window, "terminals/replay", json!({ "id": id })).await);
    input(&mut link, &id, "printf 'mark-%s\\n' window\r").await;
    screen.until(&mut link, "mark-window", WAIT).await;
    let (pushed, _) = pushed_until(&mut pushes, &id, from, "mark-window").await;
    assert!(pushed.contains("mark-window"), "{pushed}");
    let (replayed, offset) = replay(&call(&mut window, "terminals/replay", json!({ "id": id })).await);
    assert!(
        replayed.contains("mark-window") && replayed.contains("\u{1b}]7;file://"),
        "{replayed:?}"
    );
    assert!(offset >= from + "mark-window".len() as u64);

    // Typed from the window (Type here too): the shell runs it, and the instance sees it.
    call(
        &mut window,
        "terminals/write",
        json!({ "id": id, "data": "echo typed-$((6*7))\r" }),
    )
    .await;
    screen.until(&mut link, "typed-42", WAIT).await;

    // A flood: the ring keeps the newest 256 KiB, the offset counts every byte.
    input(
        &mut link,
        &id,
        "head -c 1500000 /dev/zero | tr '\\0' x; echo; echo flood-$((1+1))\r",
    )
    .await;
    screen.until(&mut link, "flood-2", Duration::from_secs(60)).await;
    let (replayed, offset) = replay(&call(&mut window, "terminals/replay", json!({ "id": id })).await);
    assert!(offset > 1_500_000, "{offset}");
    assert!(
        replayed.len() > 200_000 && replayed.contains("flood-2"),
        "{}",
        replayed.len()
    );

    // Unknown terminals are refused with a sentence.
    let unknown = window.call("terminals/replay", json!({ "id": "t99" })).await;
    let said = format!("{unknown:?}");
    assert!(said.contains("No terminal t99 is open"), "{said}");
    let bad = window.call("terminals/hang_up", json!({})).await;
    assert!(format!("{bad:?}").contains("-32602"), "{bad:?}");

    // Hang up: the instance hears the exit, the window hears it too, and the list is empty.
    call(&mut window, "terminals/hang_up", json!({ "id": id })).await;
    let exit = link
        .recv_notification("_lembas/terminal/exit", WAIT)
        .await
        .unwrap();
    assert_eq!(exit["params"]["terminalId"], id.as_str());
    let end = Instant::now() + WAIT;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let (method, params) = tokio::time::timeout(left, pushes.next_notification())
            .await
            .expect("terminal/exit is pushed")
            .unwrap();
        if method == "terminal/exit" {
            assert_eq!(params["id"], id.as_str());
            break;
        }
    }
    assert_eq!(call(&mut window, "terminals/list", json!({})).await, json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_window_that_reads_nothing_never_holds_the_link_back_and_is_told_it_skipped() {
    let (_peer, home, _service, mut link) = linked(true).await;
    let mut pushes = control(&home)
        .await
        .subscribe_with(Streams {
            terminals: true,
            ..Streams::default()
        })
        .await
        .unwrap();
    let opened = link
        .request("_lembas/terminal/open", json!({}), WAIT)
        .await
        .unwrap();
    let id = opened["result"]["terminalId"].as_str().unwrap().to_string();
    let mut screen = Screen::default();
    screen.until(&mut link, "\u{1b}]133;B", WAIT).await;

    // More than the window's socket, outbox and stream hold together, while it reads nothing: the
    // instance still gets every byte.
    input(
        &mut link,
        &id,
        "head -c 24000000 /dev/zero | tr '\\0' x; echo; echo flood-$((2+1))\r",
    )
    .await;
    screen.until(&mut link, "flood-3", Duration::from_secs(120)).await;

    // The window then finds out it skipped: told so, or output that jumps past what it read.
    let mut next: Option<u64> = None;
    let end = Instant::now() + WAIT;
    let skipped = loop {
        let left = end.saturating_duration_since(Instant::now());
        let Ok(Some((method, params))) = tokio::time::timeout(left, pushes.next_notification()).await else {
            break false;
        };
        match method.as_str() {
            "terminal/missed" => break true,
            "terminal/output" => {
                let offset = params["offset"].as_u64().unwrap();
                let len = B64.decode(params["data"].as_str().unwrap()).unwrap().len() as u64;
                if next.is_some_and(|n| offset > n) {
                    break true;
                }
                assert!(
                    next.is_none_or(|n| offset == n),
                    "never backwards: {offset} after {next:?}"
                );
                next = Some(offset + len);
            }
            _ => {}
        }
    };
    assert!(skipped, "a window that read nothing of 24 MB is told it skipped");
    // Its replay is whole and current.
    let mut window = control(&home).await;
    let (replayed, offset) = replay(&call(&mut window, "terminals/replay", json!({ "id": id })).await);
    assert!(offset > 24_000_000 && replayed.contains("flood-3"), "{offset}");
}
