//! An approval card answered on the desktop: the runtime the app runs, linked to the reference peer,
//! a turn that asks, and `Engine::answer_card` (what the control endpoint's approvals/answer
//! calls). The first answer wins and the client is told to take its card down. Needs a Secret
//! Service (run it through scripts/with-keyring, as scripts/test does).

use crate::WAIT;
use lembas_peer::ModelReply;
use lembas_protocol::permission::ApprovalOption;
use lembas_testkit::{Config, LinkedRuntime, linked_runtime};
use serde_json::json;

const TOKEN: &str = "desktop-answer-token-5e1f";

#[tokio::test(flavor = "multi_thread")]
async fn the_desktop_answers_a_card_first_and_the_client_is_told() {
    let LinkedRuntime {
        home,
        peer,
        runtime,
        mut link,
    } = linked_runtime(TOKEN, "desktop answer test", |url, home| {
        Config::linked_to(url).work_in(&home.work())
    })
    .await
    .unwrap();
    let work = home.work();
    let session = link.new_session(&work, "manual", WAIT).await.unwrap();
    peer.model().push(ModelReply::tool_call(
        "call_desk",
        "write",
        json!({ "path": "from-desktop.txt", "content": "yes" }),
    ));
    peer.model().push(ModelReply::text("Written."));
    let id = link.prompt(&session, "write").await.unwrap();
    let card = link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let cards = runtime.engine.cards();
    assert_eq!(cards.len(), 1);
    assert_eq!(cards[0].tool_call_id(), "call_desk");
    assert_eq!(cards[0].session_id(), session);

    assert!(
        runtime
            .engine
            .answer_card("call_desk", ApprovalOption::Once)
            .await,
        "the open card takes the desktop's answer"
    );
    let settled = link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        settled["params"],
        json!({ "sessionId": session, "toolCallId": "call_desk" })
    );
    // Answers after the first change nothing: the client's late one, the desktop's second.
    link.answer(
        card["id"].clone(),
        json!({ "outcome": { "outcome": "selected", "optionId": "deny" } }),
    )
    .await
    .unwrap();
    assert!(
        !runtime
            .engine
            .answer_card("call_desk", ApprovalOption::Deny)
            .await
    );
    let answer = link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(work.join("from-desktop.txt")).unwrap(),
        "yes"
    );
    assert!(runtime.engine.cards().is_empty());
    runtime.stop().await;
}
