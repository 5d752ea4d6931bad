//! Turns that work: text streamed, tools run by the mode, approvals answered, turn ids kept.

use super::*;
use lembas_peer::{ModelReply, Part};

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_streams_text_and_thinking_and_ends() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::Reasoning("Think first.".into()),
            Part::Text("Hello there, person.".into()),
        ],
        finish_reason: "stop".into(),
    });
    let answer = l.prompt(&session, "Say hello", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(answer["result"]["_meta"]["lembas"]["turnId"], "turn-1");
    validate_acp("PromptResponse", &answer["result"]).unwrap();
    assert_eq!(streamed_text(&l.link), "Hello there, person.");
    let thoughts: String = updates(&l.link)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_thought_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(thoughts, "Think first.");
    let events = event_types(&l.link);
    for wanted in ["prompt", "task", "title", "reasoning", "text", "usage", "done"] {
        assert!(
            events.contains(&wanted.to_string()),
            "no {wanted} event in {events:?}"
        );
    }
    // The model got our system text, the person's words, and the tools.
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(request["model"], MODEL);
    assert_eq!(request["stream"], true);
    assert_eq!(request["messages"][0]["role"], "system");
    assert_eq!(request["messages"][1]["content"], "Say hello");
    let tools: Vec<&str> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read",
            "ls",
            "glob",
            "grep",
            "write",
            "edit",
            "bash",
            "ask_user",
            "plan_submit",
            "plan_write",
            "plan_update",
            "plan_clear",
            "job_list",
            "job_output",
            "job_stop",
            // The reference peer says show: true, as LLeMbas does.
            "show",
            // Its token has the `memory` scope: the instance's own tool.
            "memory",
        ]
    );
    // History and status say the same.
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    let turns = &history["result"]["turns"];
    assert_eq!(
        turns[0],
        json!({ "role": "user", "text": "Say hello", "turnId": "turn-1" })
    );
    assert_eq!(turns[1]["text"], "Hello there, person.");
    assert_eq!(turns[1]["reasoning"], "Think first.");
    assert_eq!(history["result"]["title"], "Say hello");
    let status = l
        .link
        .request("_lembas/session/status", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(status["result"]["busy"], false);
    assert_eq!(status["result"]["held"], "here");
    assert_eq!(status["result"]["lastTurnId"], "turn-1");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_the_mode_asks_about_waits_for_the_approval_and_runs() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::tool_call(
        "call_a",
        "bash",
        json!({ "command": "touch made-by-agent.txt && echo made" }),
    ));
    l.model().push(reply_text("It is made."));
    let id = l.send_prompt(&session, "make a file", "turn-a").await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    validate_acp("RequestPermissionRequest", &card["params"]).unwrap_or_else(|e| panic!("{e}\n{card}"));
    let params = &card["params"];
    assert_eq!(params["toolCall"]["toolCallId"], "call_a");
    assert_eq!(params["toolCall"]["kind"], "execute");
    let options: Vec<&str> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["once", "session", "deny"]);
    assert_eq!(params["_meta"]["lembas"]["always"], "touch made-by-agent.txt *");
    assert!(!params["_meta"]["lembas"]["reason"].as_str().unwrap().is_empty());
    assert!(
        !l.work.join("made-by-agent.txt").exists(),
        "ran before the approval"
    );
    l.choose(&card, "once").await;
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(l.work.join("made-by-agent.txt").exists());
    // The model read the command's output back.
    let second = &l.model().requests()[1];
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert_eq!(tool_message["tool_call_id"], "call_a");
    assert!(
        tool_message["content"].as_str().unwrap().contains("made"),
        "{tool_message}"
    );
    let statuses: Vec<String> = updates(&l.link)
        .iter()
        .filter(|u| u["toolCallId"] == "call_a")
        .map(|u| u["status"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(statuses, ["pending", "in_progress", "completed"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denial_with_feedback_reaches_the_model_and_the_turn_goes_on() {
    let mut l = linked("").await;
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "notes.txt", "content": "x" }),
    ));
    l.model().push(reply_text("Understood."));
    let id = l.send_prompt(&session, "write notes", "turn-w").await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    l.link
        .answer(
            card["id"].clone(),
            json!({ "outcome": { "outcome": "selected", "optionId": "deny" }, "_meta": { "lembas": { "feedback": "not in this folder" } } }),
        )
        .await
        .unwrap();
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert!(!l.work.join("notes.txt").exists());
    let second = &l.model().requests()[1];
    let tool = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(
        tool["content"].as_str().unwrap().contains("not in this folder"),
        "{tool}"
    );
    assert!(event_types(&l.link).contains(&"tool_denied".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_inside_the_project_run_in_edit_mode_and_show_a_diff() {
    let mut l = linked("").await;
    std::fs::write(l.work.join("a.txt"), "one\ntwo\n").unwrap();
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::tool_call(
        "call_e",
        "edit",
        json!({ "path": "a.txt", "old_string": "two", "new_string": "three" }),
    ));
    l.model().push(reply_text("Edited."));
    let answer = l.prompt(&session, "edit it", "turn-e").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(l.work.join("a.txt")).unwrap(),
        "one\nthree\n"
    );
    let done = updates(&l.link)
        .into_iter()
        .find(|u| u["toolCallId"] == "call_e" && u["status"] == "completed")
        .unwrap();
    assert_eq!(done["content"][0]["type"], "diff");
    assert_eq!(done["content"][0]["oldText"], "one\ntwo\n");
    assert_eq!(done["content"][0]["newText"], "one\nthree\n");
    assert!(
        l.link
            .received()
            .iter()
            .all(|m| m["method"] != "session/request_permission")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resent_turn_id_gets_the_first_answer_without_running_again() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text("Once."));
    let first = l.prompt(&session, "hi", "turn-dup").await;
    let second = l.prompt(&session, "hi", "turn-dup").await;
    assert_eq!(first["result"], second["result"]);
    assert_eq!(l.model().requests().len(), 1, "the turn ran twice");
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_wait_their_turn_and_status_says_so() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Stream {
        parts: vec![Part::Text("first ".into()), Part::Hang],
        finish_reason: "stop".into(),
    });
    l.model().push(reply_text("second"));
    let a = l.send_prompt(&session, "one", "turn-q1").await;
    l.model().next_request(WAIT).await.unwrap();
    let b = l.send_prompt(&session, "two", "turn-q2").await;
    let status = eventually_status(&mut l, &session, |s| s["queued"] == json!(["turn-q2"])).await;
    assert_eq!(status["busy"], true);
    assert_eq!(status["turnId"], "turn-q1");
    l.model().release();
    assert_eq!(
        l.link.recv_answer(a, WAIT).await.unwrap()["result"]["stopReason"],
        "end_turn"
    );
    assert_eq!(
        l.link.recv_answer(b, WAIT).await.unwrap()["result"]["stopReason"],
        "end_turn"
    );
    // The second turn's request holds the first turn's whole exchange.
    let requests = l.model().requests();
    let texts: Vec<&str> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(texts.contains(&"first ") && texts.contains(&"two"), "{texts:?}");
}

pub async fn eventually_status(l: &mut Linked, session: &str, ok: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let status = l
            .link
            .request("_lembas/session/status", json!({ "sessionId": session }), WAIT)
            .await
            .unwrap();
        if ok(&status["result"]) {
            return status["result"].clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "status never matched: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn set_mode_is_lowered_and_said() {
    let mut l = linked("").await;
    let session = l.new_session("plan").await;
    let answer = l
        .link
        .request(
            "session/set_mode",
            json!({ "sessionId": session, "modeId": "auto" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(answer["result"], json!({}));
    let update = updates(&l.link)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "current_mode_update")
        .unwrap();
    assert_eq!(
        update["currentModeId"], "edit",
        "auto must be lowered to max_mode edit"
    );
    assert!(event_types(&l.link).contains(&"mode".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn configure_changes_the_model_and_refuses_one_not_served() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let answer = l
        .link
        .request(
            "_lembas/configure",
            json!({ "sessionId": session, "model": "example/chat-deep", "effort": "high" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(
        answer["result"],
        json!({ "model": "example/chat-deep", "effort": "high" })
    );
    assert!(event_types(&l.link).contains(&"model".to_string()));
    let refused = l
        .link
        .request(
            "_lembas/configure",
            json!({ "sessionId": session, "model": "example/nope" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(
        error_of(&refused),
        (
            -32602,
            "The instance does not serve example/nope to this device.".into()
        )
    );
    l.model().push(reply_text("deep"));
    l.prompt(&session, "hi", "turn-c").await;
    let request = l.model().requests().last().cloned().unwrap();
    assert_eq!(request["model"], "example/chat-deep");
    assert_eq!(request["reasoning_effort"], "high");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_is_not_lembas_gets_plain_acp_only() {
    let mut l = linked("").await;
    // The same link says it again, now as a plain ACP client (an editor would).
    let init = l
        .link
        .request(
            "initialize",
            json!({ "protocolVersion": 1, "clientCapabilities": {} }),
            WAIT,
        )
        .await
        .unwrap();
    assert!(init.get("result").is_some(), "{init}");
    let session = l.new_session("edit").await;
    l.model().push(reply_text("plain"));
    let answer = l.prompt(&session, "hi", "t").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert_eq!(streamed_text(&l.link), "plain");
    assert!(event_types(&l.link).is_empty(), "{:?}", event_types(&l.link));
}

/// Answers the next approval card with `result`; the card's params.
async fn answer_card(l: &mut Linked, result: Value) -> Value {
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    l.link.answer(card["id"].clone(), result).await.unwrap();
    card["params"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrected_command_runs_instead_but_never_past_the_hardline() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::tool_call(
        "call_1",
        "bash",
        json!({ "command": "echo wrong > out.txt" }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_2",
        "bash",
        json!({ "command": "echo again > out2.txt" }),
    ));
    l.model().push(reply_text("Done."));
    let id = l.send_prompt(&session, "write", "t").await;
    let allow_with = |command: &str| json!({ "outcome": { "outcome": "selected", "optionId": "once" }, "_meta": { "lembas": { "command": command } } });
    answer_card(&mut l, allow_with("echo right > out.txt")).await;
    answer_card(&mut l, allow_with("sudo rm -rf /")).await;
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(l.work.join("out.txt")).unwrap(),
        "right\n"
    );
    assert!(!l.work.join("out2.txt").exists());
    let denied = l.model().requests()[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(
        denied["content"].as_str().unwrap().starts_with("Not done"),
        "{denied}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn always_in_this_session_covers_the_next_write_in_the_project() {
    let mut l = linked("").await;
    let session = l.new_session("manual").await;
    two_writes(&l);
    let id = l.send_prompt(&session, "write two", "t").await;
    let card = answer_card(
        &mut l,
        json!({ "outcome": { "outcome": "selected", "optionId": "session" } }),
    )
    .await;
    assert!(
        card["_meta"]["lembas"]["always"]
            .as_str()
            .unwrap()
            .contains("every write in"),
        "{card}"
    );
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(l.work.join("a.txt").exists() && l.work.join("b.txt").exists());
    assert_eq!(cards_asked(&l.link), 1, "the second write asked again");
    // Another session is not covered.
    let other = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_3",
        "write",
        json!({ "path": "c.txt", "content": "c" }),
    ));
    l.model().push(reply_text("Asked."));
    let id = l.send_prompt(&other, "write", "t2").await;
    answer_card(
        &mut l,
        json!({ "outcome": { "outcome": "selected", "optionId": "deny" } }),
    )
    .await;
    l.link.recv_answer(id, WAIT).await.unwrap();
    assert!(!l.work.join("c.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn cards_of_two_sessions_are_open_at_once_and_answered_in_any_order() {
    let mut l = linked("").await;
    let first = l.new_session("manual").await;
    let second = l.new_session("manual").await;
    // The peer answers the model's requests in the order they come; each session makes one.
    l.model().push(ModelReply::tool_call(
        "call_one",
        "write",
        json!({ "path": "one.txt", "content": "1" }),
    ));
    let a = l.send_prompt(&first, "one", "t1").await;
    let card_one = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    l.model().push(ModelReply::tool_call(
        "call_two",
        "write",
        json!({ "path": "two.txt", "content": "2" }),
    ));
    let b = l.send_prompt(&second, "two", "t2").await;
    let card_two = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(card_one["params"]["toolCall"]["toolCallId"], "call_one");
    assert_eq!(card_two["params"]["toolCall"]["toolCallId"], "call_two");
    l.model().push(reply_text("two done"));
    l.choose(&card_two, "once").await;
    assert_eq!(
        l.link.recv_answer(b, WAIT).await.unwrap()["result"]["stopReason"],
        "end_turn"
    );
    assert!(l.work.join("two.txt").exists() && !l.work.join("one.txt").exists());
    l.model().push(reply_text("one done"));
    l.choose(&card_one, "once").await;
    assert_eq!(
        l.link.recv_answer(a, WAIT).await.unwrap()["result"]["stopReason"],
        "end_turn"
    );
    assert!(l.work.join("one.txt").exists());
}
