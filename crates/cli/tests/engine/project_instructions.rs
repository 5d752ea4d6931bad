//! Project instructions through the link: a trusted project's `AGENTS.md` and a subfolder's
//! `CLAUDE.md` reach the model after the device's own text, outer first, read again each turn.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn agents_md_reaches_the_model_after_the_system_text() {
    let mut l = linked("").await;
    let sub = l.work.join("app");
    std::fs::create_dir_all(l.work.join(".git")).unwrap();
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(l.work.join("AGENTS.md"), "Always run the tests.\n").unwrap();
    std::fs::write(sub.join("CLAUDE.md"), "The app is in TypeScript.\n").unwrap();
    let answer = l
        .new_session_at(&sub, json!({ "mode": "edit", "lembas_model": MODEL }))
        .await;
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    l.model().push(reply_text("Understood."));
    let answer = l.prompt(&session, "hello", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let system = system_text(&l);
    let ours = system.find("You are LLeMbas").unwrap();
    let theirs = system
        .find("## Project instructions\n\n### AGENTS.md\n\nAlways run the tests.\n\n### app/CLAUDE.md\n\nThe app is in TypeScript.")
        .unwrap_or_else(|| panic!("{system}"));
    assert!(ours < theirs);

    // Changed between turns: the next turn reads it again.
    std::fs::write(l.work.join("AGENTS.md"), "Never push.\n").unwrap();
    l.model().push(reply_text("Noted."));
    l.prompt(&session, "again", "turn-2").await;
    let system = system_text(&l);
    assert!(
        system.contains("Never push.") && !system.contains("Always run"),
        "{system}"
    );
}
