//! `lembas chat` as a person drives it: the real binary in a real terminal (tmux), the real runtime
//! (`lembas service run`, or the one the chat hosts itself), the reference peer as the instance and
//! its scripted model. Run inside `scripts/with-keyring`.

mod cards;
#[path = "../common/mod.rs"]
mod common;
mod composer;
mod sharing;
mod tmux;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;
use lembas_peer::{LinkHandle, ModelReply, Part, Peer, PeerConfig};
use serde_json::json;
use tmux::Tmux;

const WAIT: Duration = Duration::from_secs(20);

/// A linked device (`lembas service run` against the peer), remote work on in `<home>/work`.
struct Device {
    peer: Peer,
    home: Home,
    _service: Service,
    link: LinkHandle,
}

async fn linked() -> Device {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    home.config_with_work(&peer.url(), "");
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    Device {
        peer,
        home,
        _service: service,
        link,
    }
}

/// `lembas chat <args>` in a 100×30 terminal, in the home's `work` folder.
fn chat(home: &Home, args: &[&str]) -> Tmux {
    chat_sized(home, args, 100, 30)
}

fn chat_sized(home: &Home, args: &[&str], width: u16, height: u16) -> Tmux {
    let work = home.work();
    let mut all = vec!["chat", "-C", work.to_str().unwrap()];
    all.extend(args);
    let env: Vec<(&str, std::path::PathBuf)> = home.env().into_iter().collect();
    Tmux::start(
        &home.path(),
        width,
        height,
        &env,
        env!("CARGO_BIN_EXE_lembas"),
        &all,
    )
}

/// A card takes no key in its first 0.3 s (a key meant for the line must not answer it): a person
/// reads it first.
fn read_the_card() {
    std::thread::sleep(Duration::from_millis(400));
}

/// The status line says the chat is ready for words.
fn ready(t: &Tmux) -> String {
    t.wait_for("· ready", WAIT)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turns_streamed_answer_shows() {
    let d = linked().await;
    d.peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Reasoning("Thinking it over.".into()),
            Part::Text("Hello from the scripted model.".into()),
        ],
        finish_reason: "stop".into(),
    });
    let t = chat(&d.home, &["--no-share"]);
    let first = ready(&t);
    assert!(
        first.contains("~/work"),
        "the status line names the folder:\n{first}"
    );
    assert!(first.contains("link up"), "{first}");
    t.type_text("say hello");
    t.keys(&["Enter"]);
    let screen = t.wait_for("Hello from the scripted model.", WAIT);
    assert!(screen.contains("› say hello"), "{screen}");
    assert!(screen.contains("Thinking it over."), "{screen}");
    ready(&t);
    t.type_text("/quit");
    t.keys(&["Enter"]);
    t.wait_for("[exited 0]", WAIT);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_card_shows_its_headline_and_keys_and_a_allows_it_once() {
    let d = linked().await;
    d.peer.model().push(ModelReply::tool_call(
        "call_a",
        "bash",
        json!({ "command": "touch made-by-agent.txt && echo made" }),
    ));
    d.peer.model().push(ModelReply::text("It is made."));
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("make a file");
    t.keys(&["Enter"]);
    let card = t.wait_for("d: Deny · a: Allow once · A: Allow for this chat", WAIT);
    assert!(card.contains("Waiting for you"), "{card}");
    assert!(card.contains("$ touch made-by-agent.txt && echo made"), "{card}");
    // The device's headline, never the model's words.
    assert!(card.contains("Run"), "{card}");
    assert!(
        !d.home.work().join("made-by-agent.txt").exists(),
        "ran before the answer"
    );
    read_the_card();
    t.keys(&["a"]);
    let screen = t.wait_for("It is made.", WAIT);
    assert!(
        !screen.contains("d: Deny · a: Allow once"),
        "the card stays:\n{screen}"
    );
    assert!(d.home.work().join("made-by-agent.txt").exists());
    assert!(read_by_model(&d.peer.model(), "call_a").contains("made"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_job_shows_while_it_runs_and_its_end_is_noted() {
    let d = linked().await;
    std::fs::write(d.home.work().join("go"), "").unwrap();
    // The job waits for a file the test takes away, so it surely runs past its turn.
    d.peer.model().push(ModelReply::tool_call(
        "call_bg",
        "bash",
        json!({ "command": "while [ -e go ]; do sleep 0.05; done; exit 3", "background": true,
                "description": "wait for go" }),
    ));
    d.peer.model().push(ModelReply::text("It runs."));
    // The turn the job's end starts.
    d.peer.model().push(ModelReply::text("It ended."));
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("start the job");
    t.keys(&["Enter"]);
    let screen = t
        .wait_until(WAIT, |s| s.contains("Allow once") || s.contains("A job runs"))
        .unwrap();
    if screen.contains("Allow once") {
        read_the_card();
        t.keys(&["a"]);
    }
    let screen = t.wait_for("A job runs", WAIT);
    assert!(screen.contains("⟳ wait for go (job_"), "{screen}");
    std::fs::remove_file(d.home.work().join("go")).unwrap();
    let screen = t.wait_for("It ended.", WAIT);
    assert!(screen.contains("Job done (job_"), "{screen}");
    assert!(screen.contains("exit 3): wait for go"), "{screen}");
    assert!(!screen.contains("A job runs"), "{screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn esc_cancels_the_running_turn() {
    let d = linked().await;
    d.peer.model().push(ModelReply::Stream {
        parts: vec![Part::Text("Starting a long answer".into()), Part::Hang],
        finish_reason: "stop".into(),
    });
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("write a long story");
    t.keys(&["Enter"]);
    t.wait_for("Starting a long answer", WAIT);
    t.wait_for("· working", WAIT);
    t.keys(&["Escape"]);
    ready(&t);
    d.peer.model().release();
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_opens_the_latest_chat_in_the_folder() {
    let d = linked().await;
    d.peer.model().push(ModelReply::text("Noted: kiwi."));
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("remember kiwi");
    t.keys(&["Enter"]);
    t.wait_for("Noted: kiwi.", WAIT);
    ready(&t);
    t.type_text("/quit");
    t.keys(&["Enter"]);
    t.wait_for("[exited 0]", WAIT);
    drop(t);
    let again = chat(&d.home, &["-c", "--no-share"]);
    let screen = again.wait_for("Noted: kiwi.", WAIT);
    assert!(screen.contains("› remember kiwi"), "{screen}");
    drop(again);
    let fresh = chat(&d.home, &["--no-share"]);
    let screen = ready(&fresh);
    assert!(!screen.contains("kiwi"), "a chat without -c is new:\n{screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_too_small_asks_for_room_and_a_resize_storm_leaves_it_working() {
    let d = linked().await;
    d.peer.model().push(ModelReply::text("Still here."));
    let t = chat_sized(&d.home, &["--no-share"], 20, 5);
    t.wait_for("Make the terminal", WAIT);
    for i in 0..60u16 {
        t.resize(10 + (i * 7) % 120, 3 + (i * 5) % 40);
    }
    t.resize(100, 30);
    ready(&t);
    t.type_text("are you there");
    t.keys(&["Enter"]);
    t.wait_for("Still here.", WAIT);
}

#[tokio::test(flavor = "multi_thread")]
async fn ten_megabytes_pasted_keep_the_input_line_quick() {
    let d = linked().await;
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    let pasted = "0123456789abcdef ".repeat(10 * 1024 * 1024 / 17);
    t.paste(&pasted, &d.home.path());
    t.type_text("END");
    let started = Instant::now();
    t.wait_until(Duration::from_secs(60), |screen| {
        screen.contains("0123456789abcdef END")
    })
    .unwrap_or_else(|screen| panic!("the typed end never showed after the paste:\n{screen}"));
    // After the paste was read, a keystroke echoes at once.
    let typed = Instant::now();
    t.type_text("Z");
    t.wait_for("ENDZ", Duration::from_secs(5));
    assert!(
        typed.elapsed() < Duration::from_secs(2),
        "a keystroke after a 10 MB paste took {:?} (the paste {:?})",
        typed.elapsed(),
        started.elapsed()
    );
    t.keys(&["C-u"]);
    t.wait_until(WAIT, |screen| !screen.contains("ENDZ")).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_runtime_running_the_chat_hosts_one_and_says_so() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    home.config_with_work(&peer.url(), "");
    peer.model().push(ModelReply::text("Answered without a service."));
    let t = chat(&home, &["--no-share"]);
    let screen = ready(&t);
    assert!(screen.contains("runtime in this terminal"), "{screen}");
    t.type_text("hello");
    t.keys(&["Enter"]);
    t.wait_for("Answered without a service.", WAIT);
    // Its log goes to the log file, never on the screen.
    assert!(!t.screen().contains(" INFO "), "{}", t.screen());
    t.type_text("/quit");
    t.keys(&["Enter"]);
    t.wait_for("[exited 0]", WAIT);
    assert!(
        !Path::new(&home.socket()).exists()
            || std::os::unix::net::UnixStream::connect(home.socket()).is_err(),
        "the hosted runtime stopped with the chat"
    );
}

/// The README's picture of `lembas chat` (docs/screenshots/lembas-chat.txt), taken from the screen
/// of a real chat waiting on a card; written again with `LEMBAS_GENERATE=1`.
#[tokio::test(flavor = "multi_thread")]
async fn the_readme_screenshot_is_a_real_screen() {
    let d = linked().await;
    std::fs::write(d.home.work().join("notes.txt"), "one\ntwo\n").unwrap();
    d.peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Reasoning("They want the notes counted, then tidied.".into()),
            Part::Text("Counting the lines first.".into()),
            Part::ToolCall {
                id: "call_1".into(),
                name: "bash".into(),
                arguments: json!({ "command": "wc -l notes.txt" }).to_string(),
            },
        ],
        finish_reason: "tool_calls".into(),
    });
    d.peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("Two lines. Removing the old copy next.".into()),
            Part::ToolCall {
                id: "call_2".into(),
                name: "bash".into(),
                arguments: json!({ "command": "rm -f notes.old && echo removed" }).to_string(),
            },
        ],
        finish_reason: "tool_calls".into(),
    });
    d.peer
        .model()
        .push(ModelReply::text("Done: notes.txt has 2 lines."));
    let t = chat_sized(&d.home, &["--no-share"], 92, 24);
    ready(&t);
    t.type_text("count the lines in notes.txt and remove notes.old");
    t.keys(&["Enter"]);
    let screen = t.wait_for("a: Allow once", WAIT);
    assert!(
        screen.contains("2 notes.txt"),
        "the first command's output shows:\n{screen}"
    );
    assert!(screen.contains("$ rm -f notes.old && echo removed"), "{screen}");
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/screenshots/lembas-chat.txt");
    let shot: String = screen.lines().map(|l| format!("{}\n", l.trim_end())).collect();
    if std::env::var_os("LEMBAS_GENERATE").is_some() {
        std::fs::write(&kept, &shot).unwrap();
    }
    assert!(
        kept.exists(),
        "docs/screenshots/lembas-chat.txt: run with LEMBAS_GENERATE=1"
    );
    read_the_card();
    t.keys(&["a"]);
    t.wait_for("Done: notes.txt has 2 lines.", WAIT);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_twice_leaves_and_a_refusal_before_the_screen_is_a_line() {
    let d = linked().await;
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("half a thought");
    t.keys(&["C-c"]);
    let screen = t.wait_for("Ctrl-C again to leave", WAIT);
    assert!(
        !screen.contains("half a thought"),
        "the first Ctrl-C clears the line:\n{screen}"
    );
    t.keys(&["C-c"]);
    t.wait_for("[exited 0]", WAIT);
    drop(t);
    let refused = chat(&d.home, &["--model", "no/such-model"]);
    let screen = refused.wait_for("[exited 1]", WAIT);
    assert!(screen.contains("lembas: cannot open the chat:"), "{screen}");
}
