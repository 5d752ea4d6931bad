//! Sharing a chat from the terminal: the once-per-folder question, `/unshare`, and a shared chat
//! whose folder left the roots.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn the_share_question_is_asked_once_per_folder() {
    let d = linked().await;
    let t = chat(&d.home, &[]);
    t.wait_for("Share chats in this folder with your LLeMbas?", WAIT);
    t.keys(&["y"]);
    let screen = t.wait_for("· shared ·", WAIT);
    assert!(!screen.contains("Share chats in this folder"), "{screen}");
    t.type_text("/unshare");
    t.keys(&["Enter"]);
    t.wait_for("· local ·", WAIT);
    t.type_text("/quit");
    t.keys(&["Enter"]);
    t.wait_for("[exited 0]", WAIT);
    drop(t);
    let again = chat(&d.home, &[]);
    let screen = ready(&again);
    assert!(
        !screen.contains("Share chats in this folder"),
        "asked twice:\n{screen}"
    );
    assert!(
        screen.contains("· shared ·"),
        "the folder's answer was yes:\n{screen}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shared_chat_whose_folder_leaves_the_roots_says_why() {
    let d = linked().await;
    let t = chat(&d.home, &["--share"]);
    let screen = ready(&t);
    assert!(screen.contains("· shared ·"), "{screen}");
    let work = d.home.work();
    let removed = d.home.run(&["remote", "roots", "remove", work.to_str().unwrap()]);
    assert!(
        removed.status.success(),
        "{}",
        String::from_utf8_lossy(&removed.stderr)
    );
    let screen = t.wait_for("No longer shared:", WAIT);
    assert!(
        screen.contains("· local: "),
        "the status line says why:\n{screen}"
    );
}
