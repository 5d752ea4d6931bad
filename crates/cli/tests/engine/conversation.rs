//! Steering a running turn, rewinding to an earlier turn, compacting the conversation.

use super::turns::eventually_status;
use super::*;
use lembas_peer::{ModelReply, Part};

#[tokio::test(flavor = "multi_thread")]
async fn steer_reaches_the_next_step_and_what_came_too_late_is_unsent() {
    let mut l = linked("  max_mode: auto\n").await;
    let session = l.new_session("auto").await;
    let refused = l
        .link
        .request(
            "_lembas/steer",
            json!({ "sessionId": session, "text": "hello?" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(error_of(&refused).0, -32602, "nothing runs: {refused}");
    // Step 1 hangs after a tool call; the steer arrives meanwhile and is in step 2's request.
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::ToolCall {
                id: "call_1".into(),
                name: "ls".into(),
                arguments: "{}".into(),
            },
            Part::Hang,
        ],
        finish_reason: "tool_calls".into(),
    });
    l.model().push(ModelReply::Stream {
        parts: vec![Part::Text("ok, ".into()), Part::Hang, Part::Text("done".into())],
        finish_reason: "stop".into(),
    });
    let id = l.send_prompt(&session, "list", "t").await;
    eventually_status(&mut l, &session, |s| s["turnId"] == "t").await;
    let steered = l
        .link
        .request(
            "_lembas/steer",
            json!({ "sessionId": session, "text": "only the src folder", "messageId": "m1" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(steered["result"], json!({ "queued": 1 }));
    l.model().release();
    assert!(eventually(WAIT, || l.model().requests().len() == 2));
    let second = l.model().requests()[1].clone();
    let last_user = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap();
    assert_eq!(last_user["content"], "only the src folder");
    // This one comes while the last step streams: the turn ends before taking it in.
    l.link
        .request(
            "_lembas/steer",
            json!({ "sessionId": session, "text": "and tests" }),
            WAIT,
        )
        .await
        .unwrap();
    l.model().release();
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(
        answer["result"]["_meta"]["lembas"]["unsent"],
        json!(["and tests"]),
        "{answer}"
    );
    let steered_event = l
        .link
        .received()
        .into_iter()
        .find(|m| m["method"] == "_lembas/event" && m["params"]["event"]["type"] == "steered")
        .unwrap();
    assert_eq!(steered_event["params"]["event"]["ids"], json!(["m1"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn rewind_takes_the_turn_and_later_ones_out_and_keeps_files() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text("one"));
    l.prompt(&session, "first", "t1").await;
    l.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "kept.txt", "content": "stays" }),
    ));
    l.model().push(reply_text("two"));
    l.prompt(&session, "second", "t2").await;
    l.model().push(reply_text("three"));
    l.prompt(&session, "third", "t3").await;
    let unknown = l
        .link
        .request(
            "_lembas/session/rewind",
            json!({ "sessionId": session, "turnId": "nope" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(error_of(&unknown).0, -32602);
    let rewound = l
        .link
        .request(
            "_lembas/session/rewind",
            json!({ "sessionId": session, "turnId": "t2" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(rewound["result"], json!({ "reverted": 2 }));
    assert_eq!(std::fs::read_to_string(l.work.join("kept.txt")).unwrap(), "stays");
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    let texts: Vec<&str> = history["result"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["first", "one"]);
    l.model().push(reply_text("again"));
    l.prompt(&session, "second, differently", "t4").await;
    let request = l.model().requests().last().cloned().unwrap();
    let contents: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .skip(1)
        .collect();
    assert_eq!(contents, ["first", "one", "second, differently"]);
    // Read back after a restart, the rewind holds.
    l.service.signal(15);
    l.service.wait_exit(WAIT);
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    l.link = relink(&l.peer).await;
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    let texts: Vec<&str> = history["result"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["first", "one", "second, differently", "again"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn compact_replaces_the_conversation_with_the_models_summary() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text("The answer is 42."));
    l.prompt(&session, "What is the answer?", "t1").await;
    // While a turn works, compact is refused.
    l.model().push(ModelReply::Stream {
        parts: vec![Part::Hang],
        finish_reason: "stop".into(),
    });
    let id = l.send_prompt(&session, "wait", "t2").await;
    eventually_status(&mut l, &session, |s| s["turnId"] == "t2").await;
    let busy = l
        .link
        .request("_lembas/session/compact", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(error_of(&busy).0, -32602);
    l.model().release();
    l.link.recv_answer(id, WAIT).await.unwrap();
    l.model().push(reply_text("We found the answer: 42."));
    let compacted = l
        .link
        .request("_lembas/session/compact", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(
        compacted["result"],
        json!({ "summary": "We found the answer: 42." })
    );
    let summary_request = l.model().requests().last().cloned().unwrap();
    assert!(summary_request.get("tools").is_none());
    assert!(event_types(&l.link).contains(&"compacted".to_string()));
    l.model().push(reply_text("Still 42."));
    l.prompt(&session, "And now?", "t3").await;
    let request = l.model().requests().last().cloned().unwrap();
    let messages = request["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "system, the summary, the new prompt (asked for at rest: the last request is not kept): {messages:?}"
    );
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .contains("We found the answer: 42.")
    );
    // A turn folded into the compaction cannot be rewound to; the one after it can.
    let folded = l
        .link
        .request(
            "_lembas/session/rewind",
            json!({ "sessionId": session, "turnId": "t1" }),
            WAIT,
        )
        .await
        .unwrap();
    let (code, message) = error_of(&folded);
    assert_eq!(code, -32602);
    assert!(message.contains("compaction"), "{message}");
    let rewound = l
        .link
        .request(
            "_lembas/session/rewind",
            json!({ "sessionId": session, "turnId": "t3" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(rewound["result"]["reverted"], 1, "{rewound}");
}

/// The person's words of each turn in `_lembas/session/history`.
async fn history_texts(l: &mut Linked, session: &str) -> Vec<Value> {
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    history["result"]["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("{history}"))
        .iter()
        .filter(|t| t["role"] == "user")
        .map(|t| t["text"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_history_keeps_every_turn_through_a_compaction_and_a_restart() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text("The answer is 42."));
    l.prompt(&session, "What is the answer?", "t1").await;
    l.model().push(reply_text("We found the answer: 42."));
    l.prompt(&session, "/compact", "t2").await;
    l.model().push(reply_text("Still 42."));
    l.prompt(&session, "And now?", "t3").await;
    // The model was sent the summary; the history is the turns as they happened, and no turn the
    // person never typed.
    let sent = l.model().requests().last().cloned().unwrap();
    assert!(
        sent["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("We found the answer: 42.")
    );
    let wanted = [json!("What is the answer?"), json!("And now?")];
    assert_eq!(history_texts(&mut l, &session).await, wanted);
    // Reopened from the store: both as they were.
    l.service.signal(15);
    l.service.wait_exit(WAIT);
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    l.link = relink(&l.peer).await;
    assert_eq!(history_texts(&mut l, &session).await, wanted);
    l.model().push(reply_text("42 again."));
    l.prompt(&session, "Once more?", "t4").await;
    let sent = l.model().requests().last().cloned().unwrap();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        5,
        "system, summary, t3's two, the new prompt: {messages:?}"
    );
    // Rewinding takes a turn out of both.
    let rewound = l
        .link
        .request(
            "_lembas/session/rewind",
            json!({ "sessionId": session, "turnId": "t4" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(rewound["result"]["reverted"], 1, "{rewound}");
    assert_eq!(history_texts(&mut l, &session).await, wanted);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_steer_during_compact_waits_for_the_next_turn_and_a_failed_turn_gives_its_steers_back() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(reply_text("First answer."));
    l.prompt(&session, "first", "t1").await;
    // /compact asks the model for a summary: it hangs while a steer comes.
    l.model().push(ModelReply::Stream {
        parts: vec![Part::Text("A summary".into()), Part::Hang],
        finish_reason: "stop".into(),
    });
    let compact = l.send_prompt(&session, "/compact", "t2").await;
    eventually_status(&mut l, &session, |s| s["turnId"] == "t2").await;
    let steered = l
        .link
        .request(
            "_lembas/steer",
            json!({ "sessionId": session, "text": "mind the tests" }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(
        steered["result"],
        json!({ "queued": 1, "nextTurn": true }),
        "{steered}"
    );
    l.model().release();
    let answer = l.link.recv_answer(compact, WAIT).await.unwrap();
    assert!(
        answer["result"]["_meta"]["lembas"].get("unsent").is_none(),
        "{answer}"
    );
    // The next turn takes it in at its first step.
    l.model().push(reply_text("Minded."));
    l.prompt(&session, "go on", "t3").await;
    let request = l.model().requests().last().cloned().unwrap();
    let users: Vec<Value> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(users.last(), Some(&json!("mind the tests")), "{users:?}");

    // A turn whose stream is cut fails; the steer it never took in comes back with the error.
    l.model().push(ModelReply::Cut {
        parts: vec![Part::Text("half".into()), Part::Hang],
    });
    let failing = l.send_prompt(&session, "again", "t4").await;
    eventually_status(&mut l, &session, |s| s["turnId"] == "t4").await;
    l.link
        .request(
            "_lembas/steer",
            json!({ "sessionId": session, "text": "too late" }),
            WAIT,
        )
        .await
        .unwrap();
    l.model().release();
    let failed = l.link.recv_answer(failing, WAIT).await.unwrap();
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert_eq!(failed["error"]["data"]["unsent"], json!(["too late"]), "{failed}");
}

/// A step whose prompt fills more than 80 % of the model's window (its `/v1/models`
/// `context_length`) makes the next step compact first: the model then gets the summary with the
/// plan, and the person's request, verbatim. The usage event and ACP's `usage_update` say how full
/// the window is; the history keeps every call.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_window_compacts_before_the_next_step_keeping_the_task() {
    let mut l = linked("").await;
    l.peer
        .set_config(|c| c.models["data"][0]["context_length"] = json!(100));
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::tool_call(
        "call_plan",
        "plan_write",
        json!({ "plan": { "title": "Count the files", "phases": [{ "title": "All", "tasks": [{ "content": "ls" }] }] } }),
    ));
    l.model().push(reply_text("We planned to count the files."));
    l.model().push(reply_text("There are none."));
    let answer = l.prompt(&session, "How many files are there?", "t1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let requests = l.model().requests();
    assert_eq!(requests.len(), 3, "a step, the summary, the next step");
    assert!(
        requests[1].get("tools").is_none(),
        "the summary is asked with no tools"
    );
    let messages = requests[2]["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "system, the summary, the request: {messages:?}"
    );
    let summary = messages[1]["content"].as_str().unwrap();
    assert!(
        summary.starts_with("A summary of our conversation so far:\n\nWe planned to count the files.")
            && summary.contains("The plan, as kept:")
            && summary.contains("\"title\": \"Count the files\""),
        "{summary}"
    );
    assert_eq!(
        messages[2],
        json!({ "role": "user", "content": "How many files are there?" })
    );

    let events: Vec<Value> = l
        .link
        .received()
        .into_iter()
        .filter(|m| m["method"] == "_lembas/event")
        .map(|m| m["params"]["event"].clone())
        .collect();
    let compacted: Vec<&Value> = events.iter().filter(|e| e["type"] == "compacted").collect();
    assert_eq!(compacted.len(), 1, "{events:?}");
    assert_eq!(compacted[0]["summary"], "We planned to count the files.");
    let usage = events.iter().find(|e| e["type"] == "usage").unwrap();
    assert_eq!(usage["size"], 100);
    assert!(usage["used"].as_u64().unwrap() > 80, "{usage}");
    let windows: Vec<Value> = updates(&l.link)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .collect();
    assert_eq!(windows.len(), 2, "one a step");
    assert_eq!(windows[0]["size"], 100);
    // The history is the record: the plan call is there.
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert!(history.to_string().contains("call_plan"), "{history}");
}
