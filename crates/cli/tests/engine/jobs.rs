//! Background jobs (capability `jobs`), through the link as LLeMbas sees it: `bash` with
//! `background: true` answers at once with the job's id; the client hears the job start and end;
//! its end is a note for the model, given as a machine turn when the session is idle; the client
//! reads the output from any character, stops a job, and finds it in the status; the limit on
//! running jobs holds; a job running when the device stops is `lost` after it starts again, and
//! leaves no process behind.

use super::*;

const AUTO: &str = "  max_mode: auto\n";

/// The next `job` event of `state` (`start`, `update`, `end`); other events are passed over.
async fn job_event(l: &mut Linked, state: &str) -> Value {
    loop {
        let event = l.link.recv_notification("_lembas/event", WAIT).await.unwrap();
        let event = &event["params"]["event"];
        if event["type"] == "job" && event["state"] == state {
            return event["job"].clone();
        }
    }
}

async fn call(l: &mut Linked, method: &str, params: Value) -> Value {
    l.link.request(method, params, WAIT).await.unwrap()
}

pub(super) fn background(id: &str, command: &str, description: &str) -> ModelReply {
    ModelReply::tool_call(
        id,
        "bash",
        json!({ "command": command, "background": true, "description": description }),
    )
}

/// The id in the tool's answer: `Started job job_…: …`.
pub(super) fn started_id(l: &Linked, call_id: &str) -> String {
    let text = tool_text(l, call_id);
    let id = text
        .split_whitespace()
        .find(|w| w.starts_with("job_"))
        .unwrap_or_else(|| panic!("no job id in {text:?}"));
    id.trim_end_matches(':').to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_runs_on_after_its_turn_and_its_end_is_a_machine_turn() {
    let mut l = linked(AUTO).await;
    let listed = l
        .link
        .received()
        .iter()
        .find_map(|m| m["result"]["_meta"]["lembas"]["capabilities"].as_array().cloned())
        .unwrap_or_default();
    assert!(listed.contains(&json!("jobs")), "{listed:?}");
    let session = l.new_session("auto").await;
    std::fs::write(l.work.join("go"), "").unwrap();
    // The job waits for a file the test writes, so the turn surely ends first.
    l.model().push(background(
        "call_bg",
        "printf 'one\\n'; while [ -e go ]; do sleep 0.05; done; printf 'two ☃\\n'; exit 3",
        "count to two",
    ));
    l.model().push(reply_text("It runs."));
    let answer = l.prompt(&session, "start it", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let id = started_id(&l, "call_bg");
    assert!(id.len() == 30 && id.starts_with("job_"), "{id}");
    let started = job_event(&mut l, "start").await;
    assert_eq!(started["id"], json!(id));
    assert_eq!(started["kind"], "command");
    assert_eq!(started["state"], "running");
    assert_eq!(started["description"], "count to two");

    let status = call(&mut l, "_lembas/session/status", json!({ "sessionId": session })).await;
    assert_eq!(status["result"]["busy"], false, "{status}");
    assert_eq!(status["result"]["jobs"][0]["id"], json!(id), "{status}");
    assert_eq!(status["result"]["jobs"][0]["state"], "running");

    // The machine turn's reply, then the job is let go.
    l.model().push(reply_text("Noted: it said two."));
    std::fs::remove_file(l.work.join("go")).unwrap();
    let ended = job_event(&mut l, "end").await;
    assert_eq!(ended["state"], "done", "{ended}");
    assert_eq!(ended["exit"], 3);
    assert_eq!(ended["unread"], 10);
    let note = format!("[job {id} ended] count to two: exit 3, 10 characters unread");
    let told = l.link.recv_notification("_lembas/event", WAIT).await.unwrap();
    assert_eq!(
        told["params"]["event"],
        json!({ "type": "job_note", "jobId": id, "text": note })
    );
    let prompt = l.link.recv_notification("_lembas/event", WAIT).await.unwrap();
    let prompt = &prompt["params"]["event"];
    assert_eq!(prompt["type"], "prompt");
    assert_eq!(prompt["machine"], true);
    assert_eq!(prompt["text"], json!(note));
    loop {
        let event = l.link.recv_notification("_lembas/event", WAIT).await.unwrap();
        if event["params"]["event"]["type"] == "done" {
            break;
        }
    }
    assert_eq!(last_message(&l), json!({ "role": "user", "content": note }));

    // The output from any character; reading it here moves nothing of the model's.
    let output = call(
        &mut l,
        "_lembas/job/output",
        json!({ "sessionId": session, "id": id }),
    )
    .await;
    assert_eq!(
        output["result"],
        json!({ "text": "one\ntwo ☃\n", "length": 10, "state": "done" })
    );
    let output = call(
        &mut l,
        "_lembas/job/output",
        json!({ "sessionId": session, "id": id, "since": 4 }),
    )
    .await;
    assert_eq!(output["result"]["text"], "two ☃\n");
    let jobs = call(&mut l, "_lembas/jobs", json!({ "sessionId": session })).await;
    assert_eq!(jobs["result"]["jobs"][0]["unread"], 10, "{jobs}");
    assert_eq!(jobs["result"]["jobs"][0]["exit"], 3);

    // A command job takes no messages and has no transcript; an unknown id is refused.
    for method in ["_lembas/job/send", "_lembas/job/transcript"] {
        let refused = call(
            &mut l,
            method,
            json!({ "sessionId": session, "id": id, "text": "hi" }),
        )
        .await;
        let (code, message) = error_of(&refused);
        assert_eq!(code, -32602);
        assert!(message.contains("is a command job"), "{message}");
    }
    for method in ["_lembas/job/output", "_lembas/job/stop"] {
        let refused = call(&mut l, method, json!({ "sessionId": session, "id": "job_nope" })).await;
        let (code, message) = error_of(&refused);
        assert_eq!(code, -32602, "{method}");
        assert!(message.contains("no job job_nope"), "{message}");
    }

    // The model reads it with job_output; its unread count goes to nothing.
    l.model().push(ModelReply::tool_call(
        "call_out",
        "job_output",
        json!({ "id": id, "since": 4 }),
    ));
    l.model()
        .push(ModelReply::tool_call("call_list", "job_list", json!({})));
    l.model().push(reply_text("Read."));
    let answer = l.prompt(&session, "read it", "turn-3").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let read = tool_text(&l, "call_out");
    assert!(
        read.contains("characters 4 to 10 of 10") && read.ends_with("two ☃\n"),
        "{read}"
    );
    let list: Value = serde_json::from_str(&tool_text(&l, "call_list")).unwrap();
    assert_eq!(list[0]["unread"], 0, "{list}");
}

#[tokio::test(flavor = "multi_thread")]
async fn jobs_stop_when_asked_and_only_so_many_run_at_once() {
    let mut l = linked(AUTO).await;
    let session = l.new_session("auto").await;
    for n in 0..5 {
        l.model().push(background(
            &format!("call_{n}"),
            &format!("sleep 100{n}"),
            &format!("sleep {n}"),
        ));
    }
    l.model().push(reply_text("Five asked for."));
    let answer = l.prompt(&session, "start five", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let refused = tool_text(&l, "call_4");
    assert!(
        refused.contains("4 jobs already run in this session"),
        "{refused}"
    );
    let ids: Vec<String> = (0..4).map(|n| started_id(&l, &format!("call_{n}"))).collect();
    let jobs = call(&mut l, "_lembas/jobs", json!({ "sessionId": session })).await;
    assert_eq!(jobs["result"]["jobs"].as_array().map(Vec::len), Some(4), "{jobs}");

    // The client stops one: answered once it is gone, and the model is told.
    l.model().push(reply_text("It was stopped."));
    let before = l.model().requests().len();
    let stopped = call(
        &mut l,
        "_lembas/job/stop",
        json!({ "sessionId": session, "id": ids[0] }),
    )
    .await;
    assert_eq!(stopped["result"], json!({ "state": "stopped" }), "{stopped}");
    let model = l.model();
    until("the machine turn", || model.requests().len() > before).await;
    assert_eq!(
        last_message(&l)["content"],
        json!(format!(
            "[job {} ended] sleep 0: stopped, 0 characters unread",
            ids[0]
        ))
    );
    until("the machine turn's end", || model.pending() == 0).await;
    let again = call(
        &mut l,
        "_lembas/job/stop",
        json!({ "sessionId": session, "id": ids[0] }),
    )
    .await;
    assert_eq!(again["result"], json!({ "state": "stopped" }), "the state it had");

    // The model stops another with job_stop; deleting the session stops the rest.
    l.model().push(ModelReply::tool_call(
        "call_stop",
        "job_stop",
        json!({ "id": ids[1] }),
    ));
    l.model().push(reply_text("Stopping."));
    l.model().push(reply_text("Told."));
    let answer = l.prompt(&session, "stop one", "turn-2").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        tool_text(&l, "call_stop").contains("Stopping"),
        "{}",
        tool_text(&l, "call_stop")
    );
    until("the second job ended", || sleeping(1001).is_empty()).await;
    assert!(!sleeping(1002).is_empty(), "the others run on");
    let deleted = call(&mut l, "_lembas/session/delete", json!({ "sessionId": session })).await;
    assert_eq!(deleted["result"]["deleted"], true, "{deleted}");
    until("every job of the deleted session ended", || {
        (1000..1005).all(|n| sleeping(n).is_empty())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_running_when_the_device_stops_is_lost_and_leaves_nothing_behind() {
    let mut l = linked(AUTO).await;
    let session = l.new_session("auto").await;
    l.model().push(background("call_bg", "sleep 1077", "sleep on"));
    l.model().push(reply_text("Running."));
    let answer = l.prompt(&session, "start it", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let id = started_id(&l, "call_bg");
    // Answered at once: the process may start a moment after the answer.
    until("the job's process runs", || !sleeping(1077).is_empty()).await;

    l.service.signal(15);
    l.service.wait_exit(WAIT);
    until("the job's process ended with the device", || {
        sleeping(1077).is_empty()
    })
    .await;
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    l.link = relink(&l.peer).await;
    let stored = call(&mut l, "_lembas/session/status", json!({ "sessionId": session })).await;
    assert_eq!(stored["result"]["held"], "none");
    assert_eq!(stored["result"]["jobs"][0]["id"], json!(id), "{stored}");
    assert_eq!(stored["result"]["jobs"][0]["state"], "lost");
    let jobs = call(&mut l, "_lembas/jobs", json!({ "sessionId": session })).await;
    assert_eq!(jobs["result"]["jobs"][0]["state"], "lost", "{jobs}");
}

/// The last message of the last request the model got.
fn last_message(l: &Linked) -> Value {
    let requests = l.model().requests();
    let last = requests.last().expect("a request");
    last["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default()
}

pub(super) async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The pids of `sleep <seconds>` processes, from /proc.
fn sleeping(seconds: u32) -> Vec<u32> {
    let wanted = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let line = std::fs::read(entry.path().join("cmdline")).ok()?;
            (line == wanted.as_bytes()).then_some(pid)
        })
        .collect()
}
