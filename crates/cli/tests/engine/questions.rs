//! The ask_user and plan_submit tools: question and plan cards over the link, cut to the numbers,
//! answered, dismissed, timed out, refused by a client that does not know them.

use super::*;
use lembas_peer::Part;

fn question(header: &str, options: &[&str]) -> Value {
    let options: Vec<Value> = options.iter().map(|o| json!({ "label": o })).collect();
    json!({ "header": header, "question": format!("{header}?"), "options": options })
}

/// Pushes `call` and an ending reply, sends a prompt; the prompt's request id.
async fn start(l: &mut Linked, session: &str, id: &str, tool: &str, args: Value) -> u64 {
    l.model().push(ModelReply::tool_call(id, tool, args));
    l.model().push(reply_text("Done."));
    l.send_prompt(session, "go", &format!("turn-{id}")).await
}

async fn ended(l: &mut Linked, prompt: u64) {
    let answer = l.link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_answered_reach_the_model() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let args = json!({ "why": "to pick", "questions": [
        question("DB", &["SQLite", "Postgres"]),
        question("Name", &["a", "b"]),
        question("Port", &["80", "8080"]),
    ] });
    let prompt = start(&mut l, &session, "call_q", "ask_user", args).await;
    let card = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    let params = &card["params"];
    assert_eq!(params["sessionId"], session.as_str());
    assert_eq!(params["toolCallId"], "call_q");
    assert_eq!(params["why"], "to pick");
    assert_eq!(params["_meta"]["lembas"]["patient"], false);
    assert_eq!(params["questions"].as_array().unwrap().len(), 3);
    l.link
        .answer(
            card["id"].clone(),
            json!({ "outcome": "answered", "answers": [
                { "kind": "options", "labels": ["Postgres"] },
                { "kind": "custom", "text": "my own name" },
                { "kind": "skipped" },
            ] }),
        )
        .await
        .unwrap();
    // A second answer to the same card is too late: the first wins.
    l.link
        .answer(card["id"].clone(), json!({ "outcome": "dismissed" }))
        .await
        .unwrap();
    ended(&mut l, prompt).await;
    let text = tool_text(&l, "call_q");
    assert!(text.contains("\"Postgres\""), "{text}");
    assert!(text.contains("\"my own name\""), "{text}");
    assert!(text.contains("[Port] Port? → no answer"), "{text}");
    let kinds: Vec<Value> = updates(&l.link)
        .iter()
        .filter(|u| u["toolCallId"] == "call_q" && u["sessionUpdate"] == "tool_call")
        .map(|u| u["kind"].clone())
        .collect();
    assert_eq!(kinds, [json!("think")]);
}

#[tokio::test(flavor = "multi_thread")]
async fn seven_options_are_cut_and_a_long_label_given_whole() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let long = format!("{}END", "y".repeat(300));
    let mut seven = question("Pick", &["o1", "o2", "o3", "o4", "o5", "o6", "o7"]);
    seven["options"][0]["label"] = json!(long);
    let prompt = start(
        &mut l,
        &session,
        "call_c",
        "ask_user",
        json!({ "questions": [seven] }),
    )
    .await;
    let card = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    let options = card["params"]["questions"][0]["options"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(options.len(), 6);
    let on_card = options[0]["label"].as_str().unwrap().to_string();
    assert_eq!(on_card.chars().count(), 240);
    l.link
        .answer(
            card["id"].clone(),
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": [on_card] }] }),
        )
        .await
        .unwrap();
    ended(&mut l, prompt).await;
    let text = tool_text(&l, "call_c");
    assert!(text.contains(&long), "{text}");
    assert!(text.contains("\"o7\"") && text.contains("left out"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dismissed_question_tells_the_model() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let args = json!({ "questions": [question("DB", &["a", "b"])] });
    let prompt = start(&mut l, &session, "call_d", "ask_user", args).await;
    let card = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    l.link
        .answer(card["id"].clone(), json!({ "outcome": "dismissed" }))
        .await
        .unwrap();
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_d").contains("without answering"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_question_times_out_and_is_settled() {
    let mut l = linked("  approval_timeout: 1\n").await;
    let session = l.new_session("edit").await;
    let args = json!({ "questions": [question("DB", &["a", "b"])] });
    let prompt = start(&mut l, &session, "call_t", "ask_user", args).await;
    let _card = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    let settled = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        settled["params"],
        json!({ "sessionId": session, "toolCallId": "call_t" })
    );
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_t").contains("without answering"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_plan_switches_the_mode_lowered() {
    let mut l = linked("  max_mode: manual\n").await;
    let session = l.new_session("plan").await;
    let args = json!({ "text": "# Plan\n1. do it" });
    let prompt = start(&mut l, &session, "call_p", "plan_submit", args).await;
    let card = l.link.recv_request("_lembas/plan", WAIT).await.unwrap();
    let params = &card["params"];
    assert_eq!(params["toolCallId"], "call_p");
    assert_eq!(params["text"], "# Plan\n1. do it");
    assert_eq!(params["_meta"]["lembas"]["patient"], false);
    let path = params["path"].as_str().unwrap().to_string();
    assert!(
        path.starts_with(".agent/plans/") && path.ends_with("-plan.md"),
        "{path}"
    );
    assert_eq!(
        std::fs::read_to_string(l.work.join(&path)).unwrap(),
        "# Plan\n1. do it"
    );
    l.link
        .answer(
            card["id"].clone(),
            json!({ "outcome": "approve", "mode": "edit" }),
        )
        .await
        .unwrap();
    ended(&mut l, prompt).await;
    let modes: Vec<Value> = updates(&l.link)
        .iter()
        .filter(|u| u["sessionUpdate"] == "current_mode_update")
        .map(|u| u["currentModeId"].clone())
        .collect();
    assert_eq!(modes, [json!("manual")]);
    assert!(event_types(&l.link).contains(&"mode".to_string()));
    assert!(tool_text(&l, "call_p").contains("now in manual mode"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revised_plan_gives_the_feedback() {
    let mut l = linked("").await;
    let session = l.new_session("plan").await;
    let args = json!({ "text": "# Plan", "path": "docs/the-plan.md" });
    let prompt = start(&mut l, &session, "call_r", "plan_submit", args).await;
    let card = l.link.recv_request("_lembas/plan", WAIT).await.unwrap();
    // The model's path is a name hint: the record is a new file under .agent/plans.
    let path = card["params"]["path"].as_str().unwrap_or_default().to_string();
    assert!(
        path.starts_with(".agent/plans/") && path.ends_with("-the-plan.md"),
        "{path}"
    );
    assert!(l.work.join(&path).exists());
    assert!(!l.work.join("docs").exists());
    l.link
        .answer(
            card["id"].clone(),
            json!({ "outcome": "revise", "feedback": "add tests first" }),
        )
        .await
        .unwrap();
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_r").contains("add tests first"));
    assert!(
        !updates(&l.link)
            .iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_answers_method_not_found_gets_neither_again() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let args = json!({ "questions": [question("DB", &["a", "b"])] });
    let prompt = start(&mut l, &session, "call_n", "ask_user", args).await;
    let card = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    l.link
        .answer_error(card["id"].clone(), -32601, "Method not found")
        .await
        .unwrap();
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_n").contains("Nobody can be asked"));
    // The same link: neither card is sent again.
    let args = json!({ "questions": [question("DB", &["a", "b"])] });
    let prompt = start(&mut l, &session, "call_n2", "ask_user", args).await;
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_n2").contains("Nobody can be asked"));
    let prompt = start(
        &mut l,
        &session,
        "call_n3",
        "plan_submit",
        json!({ "text": "# P" }),
    )
    .await;
    ended(&mut l, prompt).await;
    let text = tool_text(&l, "call_n3");
    assert!(
        text.contains("saved to .agent/plans/") && text.contains("stop here"),
        "{text}"
    );
    let cards = l
        .link
        .received()
        .iter()
        .filter(|m| m["method"] == "_lembas/question" || m["method"] == "_lembas/plan")
        .count();
    assert_eq!(cards, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_client_never_gets_them() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    home.config_for(&peer.url(), &remote(&work, ""));
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let init = link
        .request(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": {} }),
            WAIT,
        )
        .await
        .unwrap();
    assert!(init.get("result").is_some(), "{init}");
    let mut l = Linked {
        peer,
        home,
        service: _service,
        link,
        work,
    };
    let session = l.new_session("edit").await;
    let args = json!({ "questions": [question("DB", &["a", "b"])] });
    let prompt = start(&mut l, &session, "call_x", "ask_user", args).await;
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_x").contains("Nobody can be asked"));
    let prompt = start(
        &mut l,
        &session,
        "call_y",
        "plan_submit",
        json!({ "text": "# P" }),
    )
    .await;
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_y").contains("stop here"));
    assert!(
        !l.link
            .received()
            .iter()
            .any(|m| m["method"] == "_lembas/question" || m["method"] == "_lembas/plan")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_question_is_shown_again_on_the_next_link() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let args = json!({ "questions": [question("DB", &["a", "b"])] });
    let _prompt = start(&mut l, &session, "call_l", "ask_user", args).await;
    let first = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    let mut l = l.linked_again().await;
    let again = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    assert_eq!(again["params"], first["params"]);
    l.link
        .answer(
            again["id"].clone(),
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": ["b"] }] }),
        )
        .await
        .unwrap();
    let model = l.model();
    assert!(eventually(WAIT, || model.requests().len() >= 2));
    assert!(tool_text(&l, "call_l").contains("→ \"b\""));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_withdraws_an_open_question() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let args = json!({ "questions": [question("DB", &["a", "b"])] });
    let prompt = start(&mut l, &session, "call_w", "ask_user", args).await;
    let _card = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    l.link
        .notify("session/cancel", json!({ "sessionId": session }))
        .await
        .unwrap();
    let settled = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(settled["params"]["toolCallId"], "call_w");
    let answer = l.link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_beyond_max_mode_decides_nothing() {
    let mut l = linked("  max_mode: plan\n").await;
    let session = l.new_session("plan").await;
    let prompt = start(
        &mut l,
        &session,
        "call_m",
        "plan_submit",
        json!({ "text": "# P" }),
    )
    .await;
    let card = l.link.recv_request("_lembas/plan", WAIT).await.unwrap();
    l.link
        .answer(
            card["id"].clone(),
            json!({ "outcome": "approve", "mode": "edit" }),
        )
        .await
        .unwrap();
    ended(&mut l, prompt).await;
    assert!(tool_text(&l, "call_m").contains("nothing was decided"));
    assert!(
        !updates(&l.link)
            .iter()
            .any(|u| u["sessionUpdate"] == "current_mode_update")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_asked_with_no_link_waits_for_the_next_one() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    // The model's step hangs until the link is gone, then asks.
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::Hang,
            Part::ToolCall {
                id: "call_n".into(),
                name: "ask_user".into(),
                arguments: json!({ "questions": [question("DB", &["a", "b"])] }).to_string(),
            },
        ],
        finish_reason: "tool_calls".into(),
    });
    l.model().push(reply_text("Done."));
    let _prompt = l.send_prompt(&session, "ask me", "turn-n").await;
    assert!(eventually(WAIT, || l.model().requests().len() == 1));
    // No link for now: the peer refuses the device's redials until told otherwise.
    l.peer.set_config(|c| c.refuse_upgrade = Some(503));
    let away = l.unlinked();
    let status = away.home.state().join("status.json");
    let linked_now = || {
        let text = std::fs::read_to_string(&status).unwrap_or_default();
        serde_json::from_str::<Value>(&text).is_ok_and(|s| s["state"] == "linked")
    };
    assert!(
        eventually(WAIT, || !linked_now()),
        "the device still says it is linked"
    );
    // The question opens with nobody to show it to; it waits rather than telling the model nobody
    // can be asked.
    away.peer.model().release();
    away.peer.set_config(|c| c.refuse_upgrade = None);
    let mut l = away.relinked().await;
    let card = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    assert_eq!(card["params"]["toolCallId"], "call_n");
    l.link
        .answer(
            card["id"].clone(),
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": ["b"] }] }),
        )
        .await
        .unwrap();
    let model = l.model();
    assert!(eventually(WAIT, || model.requests().len() >= 2));
    assert!(
        tool_text(&l, "call_n").contains("→ \"b\""),
        "{}",
        tool_text(&l, "call_n")
    );
}
