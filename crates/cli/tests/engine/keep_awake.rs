//! Keeping the computer awake while remote work runs (`remote.keep_awake`), against a login manager
//! and a power daemon of the test's own on a private bus the device takes as its system bus: the
//! `sleep:idle` inhibitor is held while a background job runs after its turn and released when the
//! job (and the machine turn its end brings) is over; `never` holds none, nor does `on_power` on
//! battery, each saying why in `lembas status`; turning `always` on while the job runs takes one.

use super::jobs::background;
use super::*;
use lembas_testkit::login_manager::LoginManager;

const AUTO: &str = "  max_mode: auto\n";

fn status_json(l: &Linked) -> Value {
    let out = l.home.run(&["status", "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn waited(within: Duration, f: impl FnMut() -> bool) -> bool {
    tokio::task::block_in_place(|| eventually(within, f))
}

/// A device on `bus` with `keep_awake` lines, and a job of a finished turn that runs until the
/// file `go` in the work folder is removed (the machine turn its end brings is answered).
async fn a_job_running(bus: &LoginManager, extra: &str) -> Linked {
    let mut l = linked_with_env(
        &format!("{AUTO}{extra}"),
        &[("DBUS_SYSTEM_BUS_ADDRESS", bus.address())],
    )
    .await;
    let session = l.new_session("auto").await;
    std::fs::write(l.work.join("go"), "").unwrap();
    l.model().push(background(
        "call_bg",
        "while [ -e go ]; do sleep 0.05; done",
        "wait for go",
    ));
    l.model().push(reply_text("It runs."));
    l.model().push(reply_text("Noted: it ended."));
    let answer = l.prompt(&session, "start it", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    l
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inhibitor_is_held_while_a_job_runs_and_gone_when_it_ends() {
    let bus = LoginManager::start(false).await.unwrap();
    let l = a_job_running(&bus, "").await;
    // The turn is over; the job alone keeps the computer awake.
    let held = waited(WAIT, || {
        status_json(&l)["status"]["keep_awake"]
            == json!({ "held": true, "why": "1 job running, on mains power" })
    });
    assert!(held, "{}", status_json(&l));
    assert_eq!(bus.held(), 1, "{:?}", bus.inhibitors());
    let first = &bus.inhibitors()[0];
    assert_eq!(
        (first.what.as_str(), first.who.as_str(), first.mode.as_str()),
        ("sleep:idle", "LLeMbas", "block")
    );
    assert!(first.why.contains("running"), "{first:?}");
    let text = String::from_utf8_lossy(&l.home.run(&["status"]).stdout).to_string();
    assert!(
        text.contains("Keeping this computer awake: 1 job running, on mains power."),
        "{text}"
    );

    std::fs::remove_file(l.work.join("go")).unwrap();
    let released = waited(WAIT, || {
        bus.held() == 0 && status_json(&l)["status"]["keep_awake"].is_null()
    });
    assert!(released, "{:?} {}", bus.inhibitors(), status_json(&l));
    // Gone, and no other taken after: the work is over.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(bus.held(), 0, "{:?}", bus.inhibitors());
}

#[tokio::test(flavor = "multi_thread")]
async fn never_holds_none() {
    let bus = LoginManager::start(false).await.unwrap();
    let l = a_job_running(&bus, "  keep_awake: never\n").await;
    let said = waited(WAIT, || {
        status_json(&l)["status"]["keep_awake"]
            == json!({ "held": false, "why": "1 job running; remote.keep_awake is never" })
    });
    assert!(said, "{}", status_json(&l));
    assert_eq!(bus.inhibitors(), []);
    std::fs::remove_file(l.work.join("go")).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn on_battery_on_power_holds_none_until_always_is_chosen() {
    let bus = LoginManager::start(true).await.unwrap();
    let l = a_job_running(&bus, "").await;
    let said = waited(WAIT, || {
        status_json(&l)["status"]["keep_awake"]
            == json!({
                "held": false,
                "why": "1 job running; on battery (remote.keep_awake: on_power)"
            })
    });
    assert!(said, "{}", status_json(&l));
    assert_eq!(bus.inhibitors(), []);
    let text = String::from_utf8_lossy(&l.home.run(&["status"]).stdout).to_string();
    assert!(
        text.contains("Not keeping this computer awake: 1 job running; on battery"),
        "{text}"
    );

    // The person chooses always: the running device takes the inhibitor without a restart.
    assert!(l.home.run(&["remote", "keep-awake", "always"]).status.success());
    assert!(waited(WAIT, || bus.held() == 1), "{:?}", bus.inhibitors());
    std::fs::remove_file(l.work.join("go")).unwrap();
    assert!(waited(WAIT, || bus.held() == 0), "{:?}", bus.inhibitors());
}
