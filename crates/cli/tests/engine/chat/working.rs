//! Working in a chat at this computer: a local chat outside the roots, continuing the latest,
//! the completions, steering and stopping, and the refusals of bad requests.

use super::*;
use lembas_device::control::Client;
use lembas_device::control::calls::call;
use lembas_device::control::chat::params::{
    ChatAnswerParams, ConfigureParams, OpenParams, PromptParams, SteerParams,
};
use lembas_device::control::params::SessionParams;
use lembas_protocol::card::CardAnswer;

#[tokio::test(flavor = "multi_thread")]
async fn bad_chat_requests_are_refused_with_their_reason() {
    let l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let mut other = front_end(&l.home).await;
    let missing = front
        .ask(call::ChatOpen, open_in(&l.work.join("no-such-folder"), None))
        .await
        .unwrap_err();
    assert_eq!(reason(&missing), "folder");
    let unknown = front
        .ask(
            call::ChatOpen,
            OpenParams {
                session_id: Some("ses_nope".into()),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&unknown), "unknown");

    let no_model = front
        .ask(
            call::ChatOpen,
            OpenParams {
                model: Some("nope/none".into()),
                ..open_in(&l.work, None)
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&no_model), "model");
    let relative = front
        .ask(
            call::ChatOpen,
            OpenParams {
                cwd: Some("work".into()),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&relative), "folder");
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(false)))
        .await
        .unwrap();
    let held = other
        .ask(
            call::ChatOpen,
            OpenParams {
                session_id: Some(opened.session_id.clone()),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&held), "held");
    let not_held = other
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: opened.session_id.clone(),
                text: "hi".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&not_held), "not_held");
    let no_card: CardAnswer = serde_json::from_value(json!({ "outcome": "dismissed" })).unwrap();
    let not_open = front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: opened.session_id.clone(),
                tool_call_id: "call_none".into(),
                answer: no_card,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&not_open), "not_open");
    let no_model = front
        .ask(
            call::ChatConfigure,
            ConfigureParams {
                session_id: opened.session_id.clone(),
                model: Some("nope/none".into()),
                mode: None,
                effort: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&no_model), "model");
    let not_running = front
        .ask(
            call::ChatSteer,
            SteerParams {
                session_id: opened.session_id.clone(),
                text: "faster".into(),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&not_running), "not_running");
    // The first connection closes it; the other may then take it.
    front
        .ask(
            call::ChatClose,
            SessionParams {
                session_id: opened.session_id.clone(),
            },
        )
        .await
        .unwrap();
    other
        .ask(
            call::ChatOpen,
            OpenParams {
                session_id: Some(opened.session_id.clone()),
                share: Some(false),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn latest_continues_the_last_chat_in_the_folder_with_its_timeline_and_completions_answer() {
    let l = linked("").await;
    std::fs::create_dir_all(l.work.join("src")).unwrap();
    std::fs::write(l.work.join("src/main.rs"), "fn main() {}\n").unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(false)))
        .await
        .unwrap();
    assert!(
        opened.commands.iter().any(|c| c.name == "compact"),
        "{:?}",
        opened.commands
    );
    l.model().push(reply_text("First answer."));
    prompt(&mut front, &opened.session_id, "first").await;
    turn_running(&mut front, &opened.session_id, false).await;
    let found = front
        .ask(
            call::ChatFiles,
            serde_json::from_value(json!({ "sessionId": opened.session_id, "query": "main" })).unwrap(),
        )
        .await
        .unwrap();
    assert!(found.files.iter().any(|f| f.path == "src/main.rs"), "{found:?}");
    let commands = front
        .ask(
            call::ChatCommands,
            serde_json::from_value(json!({ "sessionId": opened.session_id })).unwrap(),
        )
        .await
        .unwrap();
    assert!(commands.commands.iter().any(|c| c.name == "undo"));
    let models = front
        .ask(call::ChatModels, lembas_protocol::session::Empty {})
        .await
        .unwrap();
    assert!(models.iter().any(|m| m.id == MODEL), "{models:?}");
    front
        .ask(
            call::ChatClose,
            SessionParams {
                session_id: opened.session_id.clone(),
            },
        )
        .await
        .unwrap();

    let again = front
        .ask(
            call::ChatOpen,
            OpenParams {
                latest: true,
                share: Some(false),
                ..open_in(&l.work, None)
            },
        )
        .await
        .unwrap();
    assert_eq!(again.session_id, opened.session_id);
    assert_eq!(again.timeline.turns.len(), 1, "{:?}", again.timeline);
    assert_eq!(again.timeline.turns[0].prompt, "first");
    assert!(again.timeline.turns[0].reply.contains("First answer."));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_chat_outside_the_roots_works_in_its_folder_under_the_ceiling_and_stays_here() {
    let mut l = linked("").await;
    let other = l.home.path().join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.md"), "notes\n").unwrap();
    let mut front = front_end(&l.home).await;
    // No model named: the login's default.
    let opened = front
        .ask(
            call::ChatOpen,
            OpenParams {
                cwd: Some(other.display().to_string()),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(opened.model, MODEL);
    assert!(
        !opened.sharing.shared && opened.sharing.refused.is_some(),
        "{:?}",
        opened.sharing
    );
    let session = opened.session_id.clone();
    // The ceiling holds for the person at the keyboard too.
    let configured = front
        .ask(
            call::ChatConfigure,
            ConfigureParams {
                session_id: session.clone(),
                model: None,
                mode: Some(lembas_protocol::Mode::Auto),
                effort: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(configured.mode, lembas_protocol::Mode::Edit);
    let found = front
        .ask(
            call::ChatFiles,
            serde_json::from_value(json!({ "sessionId": session, "query": "notes" })).unwrap(),
        )
        .await
        .unwrap();
    assert!(found.files.iter().any(|f| f.path == "notes.md"), "{found:?}");

    l.model().push(ModelReply::tool_call(
        "call_w",
        "write",
        json!({ "path": "made.txt", "content": "made here\n" }),
    ));
    l.model().push(reply_text("Written."));
    prompt(&mut front, &session, "write made.txt").await;
    turn_running(&mut front, &session, false).await;
    assert_eq!(
        std::fs::read_to_string(other.join("made.txt")).unwrap(),
        "made here\n"
    );
    let named: Vec<Value> = about(&l.link, &session)
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .collect();
    assert_eq!(named, Vec::<Value>::new());
    let status = session_status(&mut l, &session).await;
    assert_eq!(status["held"], "terminal");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_steer_from_the_front_end_reaches_the_running_turns_next_step_and_esc_stops_it() {
    let l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(false)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    l.model().push(ModelReply::Stream {
        parts: vec![
            lembas_peer::Part::ToolCall {
                id: "call_1".into(),
                name: "ls".into(),
                arguments: "{}".into(),
            },
            lembas_peer::Part::Hang,
        ],
        finish_reason: "tool_calls".into(),
    });
    l.model().push(ModelReply::Stream {
        parts: vec![
            lembas_peer::Part::Text("looking… ".into()),
            lembas_peer::Part::Hang,
        ],
        finish_reason: "stop".into(),
    });
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.clone(),
                text: "list".into(),
                turn_id: Some("t1".into()),
            },
        )
        .await
        .unwrap();
    turn_running(&mut front, &session, true).await;
    let steered = front
        .ask(
            call::ChatSteer,
            SteerParams {
                session_id: session.clone(),
                text: "only src".into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(steered.queued, 1);
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
    assert_eq!(last_user["content"], "only src");
    // Esc: the window's Stop, for the front end too.
    let mut stopper = Client::connect_control(l.home.socket(), &l.home.cookie())
        .await
        .unwrap();
    stopper
        .ask(
            call::SessionsStop,
            SessionParams {
                session_id: session.clone(),
            },
        )
        .await
        .unwrap();
    turn_running(&mut front, &session, false).await;
    l.model().release();
}
