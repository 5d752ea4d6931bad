//! Jobs obey the limits at every moment (docs/protocol.md "The sandbox under every command"): a
//! job whose session's folder leaves the roots, whose mode falls to plan, or that runs when
//! remote work is turned off or Stop all is pressed is stopped, its processes gone, and the model
//! is told why: at once in a machine turn where the session may still work, else as soon as the
//! limits let it work again.

use super::control::{Raw, socket_ready};
use super::jobs::{background, started_id, until};
use super::*;

const AUTO: &str = "  max_mode: auto\n";
/// What the job runs: a line appended every 50 ms, for as long as it lives.
const TICKING: &str = "while :; do echo tick >> ticks; sleep 0.05; done";

/// A session in auto mode whose job is seen writing `ticks`; the session's and the job's ids.
async fn ticking(l: &mut Linked) -> (String, String) {
    let session = l.new_session("auto").await;
    l.model().push(background("call_tick", TICKING, "tick"));
    l.model().push(reply_text("Ticking."));
    let answer = l.prompt(&session, "start ticking", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let id = started_id(l, "call_tick");
    let ticks = l.work.join("ticks");
    until("the job writes", || size(&ticks) > 0).await;
    (session, id)
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Waits until `ticks` stops growing: the job's processes are gone.
async fn stops_growing(l: &Linked) {
    let ticks = l.work.join("ticks");
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let before = size(&ticks);
        tokio::time::sleep(Duration::from_millis(400)).await;
        if size(&ticks) == before {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the job still writes {}",
            ticks.display()
        );
    }
}

/// Whether any request the model got holds `text` in a message.
fn model_read(l: &Linked, text: &str) -> bool {
    l.model().requests().iter().any(|request| {
        request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains(text)))
    })
}

/// Waits until the model has read `note`; the service's log says why not when it never does.
async fn told(l: &Linked, note: &str) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !model_read(l, note) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the model was never told {note:?}\n{}",
            l.service.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The job's end note as the model reads it: stopped, and why.
fn stopped_note(id: &str, why: &str) -> String {
    format!("[job {id} ended] tick: stopped because {why}")
}

/// The config the test started with, `from` in it replaced by `to`.
fn config(l: &Linked, from: &str, to: &str) {
    l.home
        .config_for(&l.peer.url(), &remote(&l.work, AUTO).replace(from, to));
}

/// The config the test started with, again.
fn config_restored(l: &Linked) {
    l.home.config_for(&l.peer.url(), &remote(&l.work, AUTO));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_stops_when_max_mode_falls_to_plan() {
    let mut l = linked(AUTO).await;
    let (_session, id) = ticking(&mut l).await;
    l.model().push(reply_text("Noted."));
    config(&l, "max_mode: auto", "max_mode: plan");
    stops_growing(&l).await;
    let note = stopped_note(&id, "the mode fell to plan");
    told(&l, &note).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_stops_when_its_session_turns_to_plan() {
    let mut l = linked(AUTO).await;
    let (session, id) = ticking(&mut l).await;
    l.model().push(reply_text("Noted."));
    let set = l
        .link
        .request(
            "session/set_mode",
            json!({ "sessionId": session, "modeId": "plan" }),
            WAIT,
        )
        .await
        .unwrap();
    assert!(set.get("error").is_none(), "{set}");
    stops_growing(&l).await;
    let note = stopped_note(&id, "the mode fell to plan");
    told(&l, &note).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_stops_when_its_folder_leaves_the_roots() {
    let mut l = linked(AUTO).await;
    let (_session, id) = ticking(&mut l).await;
    let elsewhere = l.home.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let work = l.work.display().to_string();
    config(
        &l,
        &format!("    - {work}\n"),
        &format!("    - {}\n", elsewhere.display()),
    );
    stops_growing(&l).await;
    let note = stopped_note(&id, "its session's folder is no longer one remote work may use");
    assert!(
        !model_read(&l, &note),
        "a session outside the roots does not work"
    );
    // Told once the folder is back.
    l.model().push(reply_text("Noted."));
    config_restored(&l);
    told(&l, &note).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_stops_when_remote_work_is_turned_off() {
    let mut l = linked(AUTO).await;
    let (_session, id) = ticking(&mut l).await;
    let asked = l.model().requests().len();
    config(&l, "enabled: true", "enabled: false");
    stops_growing(&l).await;
    assert_eq!(
        l.model().requests().len(),
        asked,
        "no turn runs with remote work off"
    );
    l.model().push(reply_text("Noted."));
    config_restored(&l);
    let note = stopped_note(&id, "remote work was turned off");
    told(&l, &note).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_stops_when_stop_all_is_pressed() {
    let mut l = linked(AUTO).await;
    let (_session, id) = ticking(&mut l).await;
    socket_ready(&l.home).await;
    let mut control = Raw::connect(&l.home).await;
    let asked = l.model().requests().len();
    control
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"remote/stop"}"#)
        .await;
    let stopped = control.answer().await;
    assert_eq!(stopped["result"]["remote_enabled"], false, "{stopped}");
    stops_growing(&l).await;
    assert_eq!(l.model().requests().len(), asked, "no turn runs after Stop all");
    l.model().push(reply_text("Noted."));
    config_restored(&l);
    let note = stopped_note(&id, "the person pressed Stop all remote work");
    told(&l, &note).await;
}
