//! The window's view of the sessions, through the control socket of the real service: the list with
//! what is live, a chat's timeline (each step's command or diff, what allowed it, its result), the
//! updates pushed live, Stop (the window's, and Stop all remote work) ending the client's turn as
//! cancelled, "Allow for this chat" taken back, and Put back.

use super::*;
use lembas_device::control::params::Streams;
use lembas_device::control::{Client, Subscription};
use lembas_peer::Part;
use std::time::Instant;

async fn control(home: &Home) -> Client {
    Client::connect_control(home.socket(), &home.cookie())
        .await
        .expect("the service's control socket")
}

async fn call(client: &mut Client, method: &str, params: Value) -> Value {
    client
        .call(method, params)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// The next `session/update` push of `session` whose update matches.
async fn pushed(pushes: &mut Subscription, session: &str, matches: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + WAIT;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let (method, params) = tokio::time::timeout(left, pushes.next_notification())
            .await
            .expect("the update was pushed")
            .expect("the subscription goes on");
        if method == "session/update" && params["session_id"] == session && matches(&params["update"]) {
            return params["update"].clone();
        }
    }
}

/// A turn that waits in the model until released.
fn hanging(l: &Linked) {
    l.model().push(ModelReply::Stream {
        parts: vec![
            Part::Text("working… ".into()),
            Part::Hang,
            Part::Text("done".into()),
        ],
        finish_reason: "stop".into(),
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn the_window_follows_a_session_live_and_reads_its_transcript_with_decisions() {
    let mut l = linked("").await;
    let mut window = control(&l.home).await;
    let mut pushes = control(&l.home)
        .await
        .subscribe_with(Streams {
            sessions: true,
            ..Streams::default()
        })
        .await
        .unwrap();
    let session = l.new_session("manual").await;
    l.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "seen.txt", "content": "seen\n" }),
    ));
    l.model().push(reply_text("Written it."));
    let id = l.send_prompt(&session, "write seen.txt", "t1").await;

    let said = pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "user_message_chunk"
    })
    .await;
    assert_eq!(said["content"]["text"], "write seen.txt");
    let asked = pushed(&mut pushes, &session, |u| u["sessionUpdate"] == "tool_call").await;
    assert_eq!(asked["toolCallId"], "call_w");
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    // Listed while it works: first, with its model and mode.
    let listed = call(&mut window, "sessions/list", json!({})).await;
    let first = &listed[0];
    assert_eq!(first["id"], session.as_str());
    assert_eq!(
        (first["running"].clone(), first["open"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(
        (first["model"].as_str(), first["mode"].as_str()),
        (Some(MODEL), Some("manual"))
    );
    assert_eq!(first["scheduled"], false);
    assert!(
        first["cwd"].is_string() && first["updated_ms"].is_u64(),
        "the old fields stay: {first}"
    );

    // Allowed from this computer: the decision says so, pushed and in the transcript.
    call(
        &mut window,
        "approvals/answer",
        json!({ "id": "call_w", "answer": "allow" }),
    )
    .await;
    let decided = pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "_lembas_decision"
    })
    .await;
    assert_eq!(decided["decision"]["answeredBy"], "desktop", "{decided}");
    assert_eq!(decided["decision"]["answer"], "once", "{decided}");
    let chunk = pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "agent_message_chunk"
    })
    .await;
    assert!(chunk["content"]["text"].is_string());
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    pushed(&mut pushes, &session, |u| {
        u["sessionUpdate"] == "_lembas_turn" && u["running"] == false
    })
    .await;

    let timeline = call(&mut window, "sessions/timeline", json!({ "session_id": session })).await;
    assert_eq!(timeline["session_id"], session.as_str());
    assert_eq!(timeline["running"], false);
    let turn = &timeline["turns"][0];
    assert_eq!(turn["prompt"], "write seen.txt", "{timeline}");
    assert!(
        turn["reply"].as_str().unwrap().contains("Written it."),
        "{timeline}"
    );
    let step = &turn["steps"][0];
    assert_eq!(step["tool_call_id"], "call_w", "{timeline}");
    assert_eq!(
        (
            step["decided"]["decision"].as_str(),
            step["decided"]["answered_by"].as_str(),
            step["decided"]["answer"].as_str(),
            step["result"]["status"].as_str(),
        ),
        (Some("ask"), Some("desktop"), Some("once"), Some("completed")),
        "{timeline}"
    );
    // The change as the device made it, and the copy Put back would restore.
    assert_eq!(step["did"]["kind"], "change", "{timeline}");
    assert!(
        step["did"]["diff"].as_str().unwrap().contains("+seen"),
        "{timeline}"
    );
    assert!(
        turn["kept"][0].as_str().unwrap().ends_with("seen.txt"),
        "{timeline}"
    );

    // Bad or unknown sessions are refused with a sentence.
    let unknown = window
        .call("sessions/timeline", json!({ "session_id": "ses_nope" }))
        .await;
    assert!(
        format!("{unknown:?}").contains("There is no session ses_nope"),
        "{unknown:?}"
    );
    let bad = window.call("sessions/timeline", json!({ "id": "x" })).await;
    assert!(format!("{bad:?}").contains("-32602"), "{bad:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_in_the_window_cancels_the_running_turn() {
    let mut l = linked("").await;
    let mut window = control(&l.home).await;
    let session = l.new_session("edit").await;
    let idle = window
        .call("sessions/stop", json!({ "session_id": session }))
        .await;
    assert!(format!("{idle:?}").contains("Nothing is running"), "{idle:?}");

    hanging(&l);
    let id = l.send_prompt(&session, "long job", "t-stop").await;
    l.model().next_request(WAIT).await.unwrap();
    let stopped = call(&mut window, "sessions/stop", json!({ "session_id": session })).await;
    assert_eq!(stopped["stopped"], true);
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    l.model().release();
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_all_remote_work_cancels_the_running_turn() {
    let mut l = linked("").await;
    let mut window = control(&l.home).await;
    let session = l.new_session("edit").await;
    hanging(&l);
    let id = l.send_prompt(&session, "long job", "t-all").await;
    l.model().next_request(WAIT).await.unwrap();
    let stopped = call(&mut window, "remote/stop", json!({})).await;
    assert_eq!(
        (
            stopped["remote_enabled"].clone(),
            stopped["stopped_turns"].clone()
        ),
        (json!(false), json!(1))
    );
    // The turn's answer goes out before the link ends.
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    l.model().release();
}

fn reason(error: Result<Value, lembas_device::control::CallError>) -> String {
    match error {
        Err(lembas_device::control::CallError::Rpc(e)) => {
            format!(
                "{} {}",
                e.data
                    .as_ref()
                    .map(|d| d["reason"].to_string())
                    .unwrap_or_default(),
                e.message
            )
        }
        other => panic!("refused, not {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn grants_are_listed_and_taken_back_and_put_back_restores_the_files_turns_changed() {
    let mut l = linked("").await;
    let mut window = control(&l.home).await;
    let session = l.new_session("manual").await;
    std::fs::write(l.work.join("a.txt"), "one\n").unwrap();

    // Turn 1: a command allowed for this chat in LLeMbas, then one its answer allows without a card.
    let mkdir = |id: &str, path: &str| {
        ModelReply::tool_call(
            id,
            "bash",
            json!({ "command": format!("mkdir -p {path}"), "description": "Make a folder" }),
        )
    };
    l.model().push(mkdir("c1", "made"));
    l.model().push(mkdir("c2", "made/deeper"));
    l.model().push(reply_text("Made."));
    let (answer, cards) = l
        .prompt_answering(&session, "make folders", "t1", "session")
        .await;
    assert_eq!(
        (answer["result"]["stopReason"].as_str(), cards),
        (Some("end_turn"), 1),
        "{answer}"
    );
    // Turns 2 and 3 change a.txt, each allowed once.
    for (turn, text) in [("t2", "two"), ("t3", "three")] {
        l.model().push(ModelReply::tool_call(
            &format!("w{turn}"),
            "write",
            json!({ "path": "a.txt", "content": format!("{text}\n") }),
        ));
        l.model().push(reply_text("Written."));
        let (_, cards) = l
            .prompt_answering(&session, &format!("write {text}"), turn, "once")
            .await;
        assert_eq!(cards, 1);
    }
    assert_eq!(std::fs::read_to_string(l.work.join("a.txt")).unwrap(), "three\n");

    let timeline = call(&mut window, "sessions/timeline", json!({ "session_id": session })).await;
    let steps = &timeline["turns"][0]["steps"];
    let first = &steps[0];
    assert_eq!(
        first["did"],
        json!({ "kind": "command", "command": "mkdir -p made" }),
        "{timeline}"
    );
    assert_eq!(first["agent_says"], "Make a folder");
    assert!(
        first["headline"]
            .as_str()
            .unwrap()
            .starts_with("Run a command in"),
        "{timeline}"
    );
    let decided = &first["decided"];
    assert_eq!(
        (
            decided["decision"].as_str(),
            decided["answered_by"].as_str(),
            decided["answer"].as_str(),
            decided["mode"].as_str()
        ),
        (Some("ask"), Some("client"), Some("session"), Some("manual")),
        "{timeline}"
    );
    assert!(
        decided["answered_ms"]
            .as_u64()
            .is_some_and(|ms| ms > 1_600_000_000_000),
        "{timeline}"
    );
    let second = &steps[1]["decided"];
    assert_eq!(
        (second["decision"].as_str(), second["granted"].as_bool()),
        (Some("allow"), Some(true)),
        "{timeline}"
    );
    assert!(
        second["reason"]
            .as_str()
            .unwrap()
            .contains("Allowed for this chat"),
        "{timeline}"
    );
    assert_eq!(steps[1]["result"]["status"], "completed");
    assert_eq!(
        timeline["grants"],
        json!([{ "kind": "command", "pattern": "mkdir -p *" }])
    );
    let write = &timeline["turns"][2]["steps"][0];
    let diff = write["did"]["diff"].as_str().unwrap();
    assert!(diff.contains("-two") && diff.contains("+three"), "{diff}");
    let kept = |t: &Value, n: usize| t["turns"][n]["kept"].as_array().map_or(0, Vec::len);
    assert_eq!(
        (kept(&timeline, 0), kept(&timeline, 1), kept(&timeline, 2)),
        (0, 1, 1),
        "{timeline}"
    );

    // Put back from turn 2: turn 3's copy, then turn 2's: a.txt as it was before both.
    let done = call(
        &mut window,
        "sessions/undo",
        json!({ "session_id": session, "turn_id": "t2" }),
    )
    .await;
    assert_eq!(done["files"].as_array().map(Vec::len), Some(1), "{done}");
    assert_eq!(std::fs::read_to_string(l.work.join("a.txt")).unwrap(), "one\n");
    let after = call(&mut window, "sessions/timeline", json!({ "session_id": session })).await;
    assert_eq!((kept(&after, 1), kept(&after, 2)), (0, 0), "{after}");
    assert!(after["turns"][1]["put_back"]["at_ms"].is_u64(), "{after}");
    assert!(
        after["turns"][2]["put_back"]["files"][0]
            .as_str()
            .unwrap()
            .ends_with("a.txt"),
        "{after}"
    );
    // The conversation stays: nothing was rewound.
    assert_eq!(after["turns"][2]["rewound"], false);
    let again = window
        .call("sessions/undo", json!({ "session_id": session, "turn_id": "t2" }))
        .await;
    assert!(reason(again).contains("\"undo\""));
    let unknown = window
        .call("sessions/undo", json!({ "session_id": session, "turn_id": "t9" }))
        .await;
    assert!(reason(unknown).contains("There is no turn t9"));

    // Taken back: the next such command asks again.
    let left = call(
        &mut window,
        "sessions/revoke",
        json!({ "session_id": session, "grant": { "kind": "command", "pattern": "mkdir -p *" } }),
    )
    .await;
    assert_eq!(left, json!([]));
    let twice = window
        .call(
            "sessions/revoke",
            json!({ "session_id": session, "grant": { "kind": "command", "pattern": "mkdir -p *" } }),
        )
        .await;
    assert!(reason(twice).contains("\"not_open\""));
    let odd = window
        .call(
            "sessions/revoke",
            json!({ "session_id": session, "grant": { "kind": "everything" } }),
        )
        .await;
    assert!(format!("{odd:?}").contains("-32602"), "{odd:?}");
    l.model().push(mkdir("c4", "made/again"));
    l.model().push(reply_text("Asked."));
    let (_, cards) = l.prompt_answering(&session, "once more", "t4", "deny").await;
    assert_eq!(cards, 1, "the grant was taken back, so it asks");
    assert!(!l.work.join("made/again").exists());
}
