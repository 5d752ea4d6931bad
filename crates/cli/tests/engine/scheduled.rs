//! Scheduled turns (docs/protocol.md "Scheduled work on a linked computer"): the gate judged at every request,
//! the schedule's mode held for the turn, approvals that wait the schedule's time, the outcome.

use super::*;
use lembas_peer::{ModelReply, Part};

fn texts() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../device/decisions.json");
    let decisions: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    decisions["scheduled"]["texts"].clone()
}

fn scheduled(mode: Option<&str>, wait_s: u64) -> Value {
    let mut s = json!({ "schedule_id": "sched1", "run_id": "run7", "title": "Waybread check", "approval_wait_s": wait_s });
    if let Some(mode) = mode {
        s["mode"] = json!(mode);
    }
    s
}

impl Linked {
    pub(crate) async fn scheduled_session(&mut self, mode: Option<&str>) -> Value {
        let work = self.work.clone();
        self.new_session_at(&work, json!({ "mode": "plan", "lembas_model": MODEL, "lembas": { "scheduled": scheduled(mode, 1800) } }))
            .await
    }

    pub(crate) async fn run(&mut self, session: &str, text: &str, mode: Option<&str>, wait_s: u64) -> u64 {
        self.link
            .send_request(
                "session/prompt",
                json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }],
                        "_meta": { "lembas": { "turnId": "run7", "scheduled": scheduled(mode, wait_s) } } }),
            )
            .await
            .unwrap()
    }
}

fn refusal(answer: &Value) -> (String, String) {
    (
        answer["error"]["message"].as_str().unwrap_or("").to_string(),
        answer["error"]["data"]["reason"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_word_for_word() {
    let mut l = linked("  max_mode: auto\n").await;
    let off = l.scheduled_session(None).await;
    assert_eq!(
        refusal(&off),
        (
            texts()["off"].as_str().unwrap().to_string(),
            "scheduled_off".into()
        )
    );
    // Accept scheduled work on: plan is refused, a folder outside the roots is a folder refusal.
    let mut l = linked("  max_mode: auto\n  scheduled: true\n").await;
    let plan = l.scheduled_session(Some("plan")).await;
    assert_eq!(
        refusal(&plan),
        (texts()["plan"].as_str().unwrap().to_string(), "plan".into())
    );
    let outside = l
        .new_session_at(
            Path::new("/"),
            json!({ "lembas_model": MODEL, "lembas": { "scheduled": scheduled(None, 60) } }),
        )
        .await;
    assert_eq!(refusal(&outside).1, "folder");
    // A session made while it was on is refused at the prompt once it is off.
    let session = l.scheduled_session(None).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let config = std::fs::read_to_string(l.home.config())
        .unwrap()
        .replace("  scheduled: true\n", "");
    l.home.write_config(&config);
    // The limits changed: the device closes the link once nothing works and dials again.
    l.link = relink(&l.peer).await;
    let id = l.run(&session, "check", None, 60).await;
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(
        refusal(&answer),
        (
            texts()["off"].as_str().unwrap().to_string(),
            "scheduled_off".into()
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_schedules_mode_is_lowered_to_max_mode_and_meta_mode_is_ignored() {
    for (max, cases) in [
        (
            "manual",
            [("manual", "manual"), ("edit", "manual"), ("auto", "manual")],
        ),
        ("edit", [("manual", "manual"), ("edit", "edit"), ("auto", "edit")]),
        ("auto", [("manual", "manual"), ("edit", "edit"), ("auto", "auto")]),
    ] {
        let mut l = linked(&format!("  max_mode: {max}\n  scheduled: true\n")).await;
        for (asked, want) in cases {
            let answer = l.scheduled_session(Some(asked)).await;
            assert_eq!(
                answer["result"]["modes"]["currentModeId"], want,
                "{asked} under {max}: {answer}"
            );
        }
        let absent = l.scheduled_session(None).await;
        let want = if max == "manual" { "manual" } else { "edit" };
        assert_eq!(
            absent["result"]["modes"]["currentModeId"], want,
            "no mode under {max}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn outcomes_ok_silent_failed_and_cancelled() {
    let mut l = linked("  scheduled: true\n").await;
    let session = l.scheduled_session(None).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let cases = [
        (
            ModelReply::text("All the waybread is wrapped."),
            "ok",
            "All the waybread is wrapped.",
            Value::Null,
        ),
        (
            ModelReply::text("Nothing new today.\n\n[SILENT]"),
            "silent",
            "Nothing new today.\n\n[SILENT]",
            Value::Null,
        ),
        (
            ModelReply::Stream {
                parts: vec![],
                finish_reason: "stop".into(),
            },
            "failed",
            "",
            texts()["no_reply"].clone(),
        ),
    ];
    for (i, (reply, status, text, error)) in cases.into_iter().enumerate() {
        l.model().push(reply);
        let answer = l
            .link
            .request(
                "session/prompt",
                json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "check" }],
                        "_meta": { "lembas": { "turnId": format!("run-{i}"), "scheduled": scheduled(None, 60) } } }),
                WAIT,
            )
            .await
            .unwrap();
        let outcome = &answer["result"]["_meta"]["lembas"]["scheduled"];
        assert_eq!(
            outcome,
            &json!({ "run_id": "run7", "status": status, "text": text, "error": error }),
            "{answer}"
        );
    }
    // A model that fails: a result with the error's text, not a JSON-RPC error.
    l.model().push(ModelReply::Error {
        status: 400,
        retry_after: None,
        message: "bad request".into(),
    });
    let failed = l
        .link
        .request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "check" }],
                    "_meta": { "lembas": { "turnId": "run-err", "scheduled": scheduled(None, 60) } } }),
            WAIT,
        )
        .await
        .unwrap();
    let outcome = &failed["result"]["_meta"]["lembas"]["scheduled"];
    assert_eq!(outcome["status"], "failed", "{failed}");
    assert!(outcome["error"].as_str().unwrap().contains("400"), "{failed}");
    // Cancelled mid-stream.
    l.model().push(ModelReply::Stream {
        parts: vec![Part::Text("half".into()), Part::Hang],
        finish_reason: "stop".into(),
    });
    let id = l.run(&session, "check", None, 60).await;
    assert!(eventually(WAIT, || l.model().requests().len() == 5));
    l.link
        .notify("session/cancel", json!({ "sessionId": session }))
        .await
        .unwrap();
    let cancelled = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(cancelled["result"]["stopReason"], "cancelled");
    assert_eq!(
        cancelled["result"]["_meta"]["lembas"]["scheduled"]["status"], "cancelled",
        "{cancelled}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_scheduled_approval_waits_the_schedules_time_then_denies() {
    // LEMBAS_APPROVAL_WAIT_MIN_S lowers the least wait (60 s) for this test only.
    let mut l = linked_with_env("  scheduled: true\n", &[("LEMBAS_APPROVAL_WAIT_MIN_S", "1")]).await;
    let session = l.scheduled_session(Some("manual")).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    l.model().push(ModelReply::tool_call(
        "call_s",
        "write",
        json!({ "path": "report.txt", "content": "x" }),
    ));
    l.model().push(reply_text("Could not write the report."));
    let id = l.run(&session, "write the report", Some("manual"), 1).await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    validate_acp("RequestPermissionRequest", &card["params"]).unwrap();
    assert_eq!(
        card["params"]["_meta"]["lembas"]["scheduled"],
        json!({ "schedule_id": "sched1", "run_id": "run7", "wait_s": 1 })
    );
    assert!(card["params"]["_meta"]["lembas"].get("patient").is_none());
    let settled = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(settled["params"]["toolCallId"], "call_s");
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(
        answer["result"]["_meta"]["lembas"]["scheduled"]["status"], "ok",
        "{answer}"
    );
    let tool = l.model().requests()[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    // The wait's own sentence, not words put in a person's mouth.
    let denied = texts()["denied"].as_str().unwrap().replace("{{minutes}}", "0");
    assert_eq!(tool["content"], json!(denied), "{tool}");
    assert!(!l.work.join("report.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scheduled_card_is_listed_with_its_schedule_and_denied_from_the_shell() {
    let mut l = linked("  scheduled: true\n").await;
    let session = l.scheduled_session(Some("manual")).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    l.model().push(ModelReply::tool_call(
        "call_sched",
        "bash",
        json!({ "command": "touch ran.txt" }),
    ));
    l.model().push(reply_text("Could not run it."));
    let id = l.run(&session, "run it", Some("manual"), 1800).await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let listed = tokio::task::block_in_place(|| l.home.run(&["approvals", "--json"]));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["id"], "call_sched", "{listed}");
    assert_eq!(listed[0]["command"], "touch ran.txt");
    assert_eq!(
        listed[0]["scheduled"],
        json!({ "schedule_id": "sched1", "run_id": "run7", "title": "Waybread check", "wait_s": 1800 })
    );
    let text = tokio::task::block_in_place(|| l.home.run(&["approvals"]));
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("\u{201c}Waybread check\u{201d}, run run7") && text.contains("$ touch ran.txt"),
        "{text}"
    );
    let denied = tokio::task::block_in_place(|| l.home.run(&["approvals", "deny", "call_sched", "--json"]));
    assert!(denied.status.success(), "{denied:?}");
    let settled = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(settled["params"]["toolCallId"], "call_sched");
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(
        answer["result"]["_meta"]["lembas"]["scheduled"]["status"], "ok",
        "{answer}"
    );
    assert!(!l.work.join("ran.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_resent_after_a_dropped_link_runs_once() {
    let mut l = linked("  scheduled: true\n").await;
    let session = l.scheduled_session(None).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("checking ".into()),
            Part::Hang,
            Part::Text("done".into()),
        ],
        finish_reason: "stop".into(),
    });
    l.run(&session, "check", None, 60).await;
    assert!(eventually(WAIT, || l.model().requests().len() == 1));
    let mut l = l.linked_again().await;
    l.model().release();
    let id = l.run(&session, "check", None, 60).await;
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(
        answer["result"]["_meta"]["lembas"]["scheduled"]["text"], "checking done",
        "{answer}"
    );
    assert_eq!(l.model().requests().len(), 1, "the run ran twice");
}
