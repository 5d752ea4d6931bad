//! The input line's helpers at the terminal: `@` files and `/` commands completed, steering a
//! running turn, `/sessions` picking a kept chat, `/model` and `/effort`.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn at_completes_the_folders_files_and_slash_the_commands() {
    let d = linked().await;
    std::fs::write(d.home.work().join("notes.txt"), "one\n").unwrap();
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("read @note");
    let screen = t.wait_for("@notes.txt", WAIT);
    assert!(screen.contains("file"), "{screen}");
    t.keys(&["Tab"]);
    t.wait_for("› read @notes.txt", WAIT);
    t.keys(&["C-u"]);
    t.type_text("/sess");
    let screen = t.wait_for("/sessions", WAIT);
    assert!(screen.contains("Pick a kept chat"), "{screen}");
    // The engine's own commands are offered too.
    t.keys(&["C-u"]);
    t.type_text("/comp");
    t.wait_for("/compact", WAIT);
}

#[tokio::test(flavor = "multi_thread")]
async fn enter_while_the_agent_works_steers_the_turn() {
    let d = linked().await;
    d.peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("Looking.".into()),
            Part::Hang,
            Part::ToolCall {
                id: "call_e".into(),
                name: "bash".into(),
                arguments: json!({ "command": "echo looked" }).to_string(),
            },
        ],
        finish_reason: "tool_calls".into(),
    });
    d.peer.model().push(ModelReply::text("Steered."));
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("look around");
    t.keys(&["Enter"]);
    t.wait_for("Looking.", WAIT);
    t.wait_for("· working", WAIT);
    t.type_text("also check the tests");
    t.keys(&["Enter"]);
    let screen = t.wait_for("Steering: also check the tests", WAIT);
    assert!(!screen.contains("Could not"), "{screen}");
    d.peer.model().release();
    t.wait_for("Steered.", WAIT);
    let requests = d.peer.model().requests();
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("also check the tests"),
        "the model never read the steer: {last}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_picks_a_kept_chat_to_continue() {
    let d = linked().await;
    d.peer.model().push(ModelReply::text("Kept: mango."));
    let first = chat(&d.home, &["--no-share"]);
    ready(&first);
    first.type_text("remember mango");
    first.keys(&["Enter"]);
    first.wait_for("Kept: mango.", WAIT);
    ready(&first);
    first.type_text("/quit");
    first.keys(&["Enter"]);
    first.wait_for("[exited 0]", WAIT);
    drop(first);
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("/sessions");
    t.keys(&["Enter"]);
    let picker = t.wait_for("Chats kept here", WAIT);
    assert!(picker.contains("~/work"), "{picker}");
    t.keys(&["Enter"]);
    let screen = t.wait_for("Kept: mango.", WAIT);
    assert!(screen.contains("› remember mango"), "{screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn model_lists_the_instances_models_and_effort_changes_the_chat() {
    let d = linked().await;
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("/model");
    t.keys(&["Enter"]);
    let picker = t.wait_for("Models · Enter picks", WAIT);
    assert!(picker.contains(lembas_peer::DEFAULT_MODEL), "{picker}");
    t.keys(&["Enter"]);
    t.wait_for("Now ", WAIT);
    t.type_text("/effort high");
    t.keys(&["Enter"]);
    t.wait_for("effort high", WAIT);
}
