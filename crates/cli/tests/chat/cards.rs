//! Cards at the terminal beyond an approval: a question answered by number, a plan approved, a
//! shared chat's card waiting at both ends (LLeMbas answers first; the link drops while it waits),
//! a card arriving while the person types.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_question_is_answered_by_number_and_the_model_reads_the_answer() {
    let d = linked().await;
    d.peer.model().push(ModelReply::tool_call(
        "call_q",
        "ask_user",
        json!({ "why": "to pick a store", "questions": [
            { "header": "DB", "question": "Which database?", "options": [{ "label": "SQLite" }, { "label": "Postgres" }] }
        ] }),
    ));
    d.peer.model().push(ModelReply::text("Postgres it is."));
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("set up storage");
    t.keys(&["Enter"]);
    let card = t.wait_for("DB: Which database?", WAIT);
    assert!(
        card.contains("1. SQLite") && card.contains("2. Postgres"),
        "{card}"
    );
    assert!(card.contains("to pick a store"), "{card}");
    read_the_card();
    t.keys(&["2"]);
    t.wait_for("Postgres it is.", WAIT);
    assert!(read_by_model(&d.peer.model(), "call_q").contains("Postgres"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_is_approved_with_a() {
    let d = linked().await;
    d.peer.model().push(ModelReply::tool_call(
        "call_p",
        "plan_submit",
        json!({ "text": "1. Read the notes\n2. Count them" }),
    ));
    d.peer
        .model()
        .push(ModelReply::text("Going ahead with the plan."));
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("/mode plan");
    t.keys(&["Enter"]);
    t.wait_for("· plan ·", WAIT);
    t.type_text("plan the counting");
    t.keys(&["Enter"]);
    let card = t.wait_for("a: Approve · r: Revise with feedback", WAIT);
    assert!(card.contains("2. Count them"), "{card}");
    read_the_card();
    t.keys(&["a"]);
    t.wait_for("Going ahead with the plan.", WAIT);
    assert!(
        read_by_model(&d.peer.model(), "call_p")
            .to_lowercase()
            .contains("approved")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shared_chats_card_answered_in_llembas_is_taken_down_here() {
    let mut d = linked().await;
    d.peer.model().push(ModelReply::tool_call(
        "call_s",
        "bash",
        json!({ "command": "rm -f gone.txt && echo gone" }),
    ));
    d.peer.model().push(ModelReply::text("Removed."));
    let t = chat(&d.home, &["--share"]);
    let screen = ready(&t);
    assert!(screen.contains("· shared ·"), "{screen}");
    t.type_text("remove gone.txt");
    t.keys(&["Enter"]);
    t.wait_for("a: Allow once", WAIT);
    let card = d
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(card["params"]["_meta"]["lembas"]["patient"], true, "{card}");
    let answer = json!({ "outcome": { "outcome": "selected", "optionId": "once" } });
    d.link.answer(card["id"].clone(), answer).await.unwrap();
    let screen = t.wait_for("Removed.", WAIT);
    assert!(screen.contains("answered in LLeMbas"), "{screen}");
    assert!(!screen.contains("a: Allow once"), "{screen}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_link_dropping_while_a_card_waits_leaves_it_to_answer_here() {
    let d = linked().await;
    d.peer.model().push(ModelReply::tool_call(
        "call_l",
        "bash",
        json!({ "command": "rm -f old.txt && echo cleaned" }),
    ));
    d.peer.model().push(ModelReply::text("Cleaned."));
    let t = chat(&d.home, &["--share"]);
    ready(&t);
    t.type_text("clean up");
    t.keys(&["Enter"]);
    t.wait_for("a: Allow once", WAIT);
    let Device {
        peer,
        home,
        _service,
        link,
    } = d;
    link.drop_tcp();
    let screen = t.wait_for("no link", WAIT);
    assert!(screen.contains("a: Allow once"), "the card stays:\n{screen}");
    read_the_card();
    t.keys(&["a"]);
    t.wait_for("Cleaned.", WAIT);
    drop((peer, home));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_card_arriving_while_typing_keeps_the_text_and_tab_goes_to_it() {
    let d = linked().await;
    d.peer.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("One moment.".into()),
            Part::Hang,
            Part::ToolCall {
                id: "call_t".into(),
                name: "bash".into(),
                arguments: json!({ "command": "rm -f draft.txt && echo dropped" }).to_string(),
            },
        ],
        finish_reason: "tool_calls".into(),
    });
    d.peer.model().push(ModelReply::text("Dropped."));
    let t = chat(&d.home, &["--no-share"]);
    ready(&t);
    t.type_text("tidy up");
    t.keys(&["Enter"]);
    t.wait_for("One moment.", WAIT);
    t.type_text("and then do");
    t.wait_for("› and then do", WAIT);
    d.peer.model().release();
    let screen = t.wait_for("Tab: answer the card", WAIT);
    assert!(screen.contains("› and then do"), "the text stays:\n{screen}");
    // Typed on: the keys go to the line, not the card.
    t.type_text(" more");
    t.wait_for("› and then do more", WAIT);
    // Gone to with Tab, the card takes its keys at once.
    t.keys(&["Tab"]);
    t.wait_for("a: Allow once", WAIT);
    t.keys(&["a"]);
    let screen = t.wait_for("Dropped.", WAIT);
    assert!(
        screen.contains("› and then do more"),
        "the text is still there:\n{screen}"
    );
}
