//! Bad input and faults: each gets a clear answer and loses nothing.

use super::*;
use lembas_peer::{ModelReply, Part};

#[tokio::test(flavor = "multi_thread")]
async fn session_new_refuses_what_it_must() {
    let mut l = linked("").await;
    let work = l.work.clone();
    let unknown = l
        .new_session_at(&work, json!({ "lembas_model": "example/nope" }))
        .await;
    assert_eq!(
        error_of(&unknown),
        (
            -32602,
            "The instance does not serve example/nope to this device.".into()
        )
    );
    let outside = l
        .new_session_at(Path::new("/"), json!({ "lembas_model": MODEL }))
        .await;
    let (code, message) = error_of(&outside);
    assert_eq!(code, -32602);
    assert!(message.contains("outside the folders"), "{message}");
    let no_model = l.new_session_at(&work, json!({})).await;
    assert_eq!(error_of(&no_model).0, -32602);
    // The embedding model is not a chat model.
    let embed = l
        .new_session_at(&work, json!({ "lembas_model": "example/embed" }))
        .await;
    assert_eq!(error_of(&embed).0, -32602);
    let ok = l
        .new_session_at(
            &work,
            json!({ "lembas_model": MODEL, "mode": "auto", "effort": "extreme" }),
        )
        .await;
    let result = &ok["result"];
    assert!(result["sessionId"].as_str().unwrap().starts_with("ses_"));
    assert_eq!(result["sessionId"].as_str().unwrap().len(), 30);
    assert_eq!(
        result["modes"]["currentModeId"], "edit",
        "auto lowered to max_mode"
    );
    assert_eq!(
        result["_meta"]["lembas"],
        json!({ "model": MODEL, "mode": "edit", "effort": "default", "instance": true })
    );
    validate_acp("NewSessionResponse", result).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_for_unknown_sessions_and_bad_blocks_are_refused() {
    let mut l = linked("").await;
    let unknown = l.prompt("ses_00000000000000000000000000", "hi", "t").await;
    let (code, message) = error_of(&unknown);
    assert_eq!(code, -32602);
    assert!(
        message.contains("no session ses_00000000000000000000000000"),
        "{message}"
    );
    let traversal = l.prompt("../../etc", "hi", "t2").await;
    assert_eq!(error_of(&traversal).0, -32602);
    let session = l.new_session("edit").await;
    let image = l
        .link
        .request("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "image", "data": "", "mimeType": "image/png" }] }), WAIT)
        .await
        .unwrap();
    assert_eq!(error_of(&image).0, -32602);
    let block = l.prompt(&session, &"x".repeat(10_485_761), "t3").await;
    let (code, message) = error_of(&block);
    assert_eq!(code, -32602);
    assert!(message.contains("at most 10485760 bytes"), "{message}");
    let nine = json!({ "type": "text", "text": "y".repeat(9_000_000) });
    let over = l
        .link
        .request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [nine, nine, nine] }),
            WAIT,
        )
        .await
        .unwrap();
    let (code, message) = error_of(&over);
    assert_eq!(code, -32602);
    assert!(message.contains("at most 26214400 bytes"), "{message}");
    assert!(l.model().requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_that_became_a_symlink_out_of_the_roots_refuses_the_prompt() {
    let mut l = linked("").await;
    let project = l.work.join("proj");
    std::fs::create_dir(&project).unwrap();
    let answer = l.new_session_at(&project, json!({ "lembas_model": MODEL })).await;
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    std::fs::remove_dir(&project).unwrap();
    std::os::unix::fs::symlink("/tmp", &project).unwrap();
    let refused = l.prompt(&session, "hi", "t").await;
    assert_eq!(error_of(&refused).0, -32602, "{refused}");
    assert!(l.model().requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_tool_calls_go_back_to_the_model_and_the_turn_goes_on() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::ToolCall {
                id: "call_bad".into(),
                name: "read".into(),
                arguments: "{\"path\": ".into(),
            },
            Part::ToolCall {
                id: "call_none".into(),
                name: "teleport".into(),
                arguments: "{}".into(),
            },
            Part::ToolCall {
                id: "call_missing".into(),
                name: "read".into(),
                arguments: "{\"path\":\"missing.txt\"}".into(),
            },
        ],
        finish_reason: "tool_calls".into(),
    });
    l.model().push(reply_text("I will stop guessing."));
    let answer = l.prompt(&session, "go", "t").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let second = &l.model().requests()[1];
    let results: Vec<(String, String)> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(results[0].1.contains("not valid JSON"), "{results:?}");
    assert!(results[1].1.contains("teleport"), "{results:?}");
    assert!(!results[2].1.is_empty());
    let failed = updates(&l.link)
        .iter()
        .filter(|u| u["status"] == "failed")
        .count();
    assert_eq!(failed, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_busy_model_is_retried_then_the_turn_fails_with_a_sentence() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Error {
        status: 429,
        retry_after: Some(0),
        message: "slow down".into(),
    });
    l.model().push(reply_text("after the wait"));
    let answer = l.prompt(&session, "hi", "t-ok").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(l.model().requests().len(), 2);
    for _ in 0..3 {
        l.model().push(ModelReply::Error {
            status: 503,
            retry_after: Some(0),
            message: "down".into(),
        });
    }
    let failed = l.prompt(&session, "again", "t-fail").await;
    let (code, message) = error_of(&failed);
    assert_eq!(code, -32603);
    assert_eq!(failed["error"]["data"]["reason"], "model");
    assert!(message.contains(MODEL) && message.contains("503"), "{message}");
    assert!(event_types(&l.link).contains(&"error".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_midway_fails_the_turn_clearly() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Cut {
        parts: vec![Part::Text("half a sen".into())],
    });
    let failed = l.prompt(&session, "hi", "t").await;
    let (code, message) = error_of(&failed);
    assert_eq!(code, -32603);
    assert!(message.contains("broke off"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn length_ends_the_turn_with_max_tokens() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::Stream {
        parts: vec![Part::Text("and so on and".into())],
        finish_reason: "length".into(),
    });
    let answer = l.prompt(&session, "hi", "t").await;
    assert_eq!(answer["result"]["stopReason"], "max_tokens");
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_a_running_command_and_its_group_at_once() {
    let mut l = linked("  max_mode: auto\n").await;
    let session = l.new_session("auto").await;
    let marker = l.work.join("sleeper-pid");
    let command = format!("echo $$ > {}; sleep 300 & sleep 300", marker.display());
    l.model().push(ModelReply::tool_call(
        "call_s",
        "bash",
        json!({ "command": command }),
    ));
    let id = l.send_prompt(&session, "sleep", "t").await;
    assert!(eventually(WAIT, || marker.exists()
        && !std::fs::read_to_string(&marker).unwrap().trim().is_empty()));
    let pid: i32 = std::fs::read_to_string(&marker).unwrap().trim().parse().unwrap();
    let started = std::time::Instant::now();
    l.link
        .notify("session/cancel", json!({ "sessionId": session }))
        .await
        .unwrap();
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    // Long before the sleeps would have ended by themselves (a fifth of their 300 s).
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "cancel took {:?}",
        started.elapsed()
    );
    // The whole group is gone: bash and both sleeps.
    assert!(
        eventually(Duration::from_secs(5), || unsafe { libc_kill(-pid, 0) } != 0),
        "the group outlived the cancel"
    );
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_never_ends_is_stopped_by_its_timeout() {
    let mut l = linked("  max_mode: auto\n").await;
    let session = l.new_session("auto").await;
    l.model().push(ModelReply::tool_call(
        "call_t",
        "bash",
        json!({ "command": "echo start; sleep 300", "timeout_s": 1 }),
    ));
    l.model().push(reply_text("It hung."));
    let answer = l.prompt(&session, "hang", "t").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let tool = l.model().requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    let content = tool["content"].as_str().unwrap();
    assert!(
        content.contains("start") && content.contains("did not finish in time"),
        "{content}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_approval_is_denied_and_settled() {
    let mut l = linked("  approval_timeout: 1\n").await;
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_late",
        "write",
        json!({ "path": "late.txt", "content": "x" }),
    ));
    l.model().push(reply_text("Nobody answered."));
    let id = l.send_prompt(&session, "write", "t").await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let settled = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        settled["params"],
        json!({ "sessionId": session, "toolCallId": "call_late" })
    );
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert!(!l.work.join("late.txt").exists());
}
