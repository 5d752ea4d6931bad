//! `/undo`: the last turn leaves the conversation and the files its `write` and `edit` calls
//! changed are put back from the copies kept beside the session, within the limits as they are now.

use super::commands::{command_updates, lembas, texts, write};
use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn undo_takes_back_the_last_turn_and_puts_its_files_back() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    write(&l.work.join("a.txt"), "original\n");
    // Turn 1 creates kept.txt.
    l.model().push(ModelReply::tool_call(
        "call_1",
        "write",
        json!({ "path": "kept.txt", "content": "one" }),
    ));
    l.model().push(reply_text("Wrote kept.txt."));
    l.prompt(&session, "first", "t1").await;
    // Turn 2 edits a.txt twice and creates new/b.txt.
    l.model().push(ModelReply::tool_call(
        "call_2",
        "edit",
        json!({ "path": "a.txt", "old_string": "original", "new_string": "changed" }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_3",
        "write",
        json!({ "path": "new/b.txt", "content": "bee" }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_4",
        "write",
        json!({ "path": "a.txt", "content": "changed twice\n" }),
    ));
    l.model().push(reply_text("Changed things."));
    l.prompt(&session, "change things", "t2").await;
    assert_eq!(
        std::fs::read_to_string(l.work.join("a.txt")).unwrap(),
        "changed twice\n"
    );
    let requests = l.model().requests().len();

    let answer = l.prompt(&session, "/undo", "t3").await;
    let undone = lembas(&answer);
    assert_eq!(undone["command"], "undo", "{answer}");
    assert_eq!(undone["undone"]["prompt"], "change things");
    let a = l.work.join("a.txt").display().to_string();
    let b = l.work.join("new/b.txt").display().to_string();
    assert_eq!(undone["undone"]["files"], json!([a, b]));
    assert_eq!(
        std::fs::read_to_string(l.work.join("a.txt")).unwrap(),
        "original\n"
    );
    assert!(!l.work.join("new/b.txt").exists());
    assert_eq!(std::fs::read_to_string(l.work.join("kept.txt")).unwrap(), "one");
    assert_eq!(
        l.model().requests().len(),
        requests,
        "nothing was sent to the model"
    );

    // The undone turn is out of the conversation.
    l.model().push(reply_text("Fine."));
    l.prompt(&session, "next", "t4").await;
    let request = l.model().requests().last().cloned().unwrap();
    let users: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["first", "next"]);

    // Undo again: t4 (no files), then t1 (kept.txt goes), then nothing is left.
    let answer = l.prompt(&session, "/undo", "t5").await;
    assert_eq!(
        lembas(&answer)["undone"],
        json!({ "prompt": "next", "files": [] })
    );
    let answer = l.prompt(&session, "/undo", "t6").await;
    assert_eq!(lembas(&answer)["undone"]["prompt"], "first");
    assert!(!l.work.join("kept.txt").exists());
    let answer = l.prompt(&session, "/undo", "t7").await;
    assert_eq!(lembas(&answer)["undone"], Value::Null, "{answer}");
    assert_eq!(lembas(&answer)["message"], texts()["undo_nothing"]);

    // The copies live beside the session and go with it.
    l.model().push(ModelReply::tool_call(
        "call_5",
        "write",
        json!({ "path": "c.txt", "content": "see" }),
    ));
    l.model().push(reply_text("Done."));
    l.prompt(&session, "write c", "t8").await;
    let copies = l.home.state().join("copies").join(&session);
    assert!(copies.is_dir());
    // Copies gone (pruned): the answer says the files stay as they are.
    std::fs::remove_dir_all(&copies).unwrap();
    let answer = l.prompt(&session, "/undo", "t9").await;
    assert_eq!(
        lembas(&answer)["undone"],
        json!({ "prompt": "write c", "files": [] })
    );
    assert_eq!(lembas(&answer)["message"], texts()["undo_unkept"], "{answer}");
    assert_eq!(std::fs::read_to_string(l.work.join("c.txt")).unwrap(), "see");
    l.model().push(ModelReply::tool_call(
        "call_6",
        "write",
        json!({ "path": "d.txt", "content": "dee" }),
    ));
    l.model().push(reply_text("Done."));
    l.prompt(&session, "write d", "t10").await;
    assert!(copies.is_dir());
    let deleted = l
        .link
        .request("_lembas/session/delete", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(deleted["result"]["deleted"], true);
    assert!(!copies.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_leaves_files_the_limits_no_longer_let_it_write() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    write(&l.work.join("a.txt"), "original");
    l.model().push(ModelReply::tool_call(
        "call_1",
        "write",
        json!({ "path": "a.txt", "content": "changed" }),
    ));
    l.model().push(reply_text("Changed."));
    l.prompt(&session, "change a", "t1").await;
    // The person narrows remote work to plan: nothing may be written from the link now.
    l.home
        .config_for(&l.peer.url(), &remote(&l.work, "  max_mode: plan\n"));
    l.link = relink(&l.peer).await;
    // The session, taken over by the new link, has its commands told there.
    assert!(eventually(WAIT, || command_updates(&l.link, &session).len() == 1));
    let answer = l.prompt(&session, "/undo", "t2").await;
    let a = l.work.join("a.txt").display().to_string();
    assert_eq!(
        lembas(&answer)["undone"],
        json!({ "prompt": "change a", "files": [] }),
        "{answer}"
    );
    let expected = texts()["undo_left"].as_str().unwrap().replace("{{files}}", &a);
    assert_eq!(lembas(&answer)["message"], expected.as_str());
    assert_eq!(std::fs::read_to_string(l.work.join("a.txt")).unwrap(), "changed");
}
