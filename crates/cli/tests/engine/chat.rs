//! Chats started at this computer (ENGINE.md "Chats started at this computer"): a control client
//! plays the front end (`lembas chat`, the window's composer) against the real service, the
//! reference peer plays LLeMbas over the link. Shared, the chat is announced (again on every
//! link), its cards wait at both ends and the first answer wins, a prompt from the instance runs
//! in it, and it is left on unshare, close, the connection's end or the folder leaving the roots;
//! not shared, nothing of it goes over the link.

use super::*;
use lembas_device::control::calls::call;
use lembas_device::control::chat::params::{
    ChatAnswerParams, ConfigureParams, OpenParams, PromptParams, ShareParams,
};
use lembas_device::control::params::{SessionParams, Streams};
use lembas_device::control::{CallError, Client, Subscription};
use lembas_protocol::card::CardAnswer;
use std::time::Instant;

/// A front end: one connection that holds chats and hears every session's pushes.
async fn front_end(home: &Home) -> Subscription {
    Client::connect_control(home.socket(), &home.cookie())
        .await
        .expect("the service's control socket")
        .subscribe_with(Streams {
            sessions: true,
            ..Streams::default()
        })
        .await
        .expect("subscribed")
}

/// The next push named `method` whose params match.
async fn pushed(front: &mut Subscription, method: &str, matches: impl Fn(&Value) -> bool) -> Value {
    let end = Instant::now() + WAIT;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let (name, params) = tokio::time::timeout(left, front.next_notification())
            .await
            .unwrap_or_else(|_| panic!("no {method} push came"))
            .expect("the subscription goes on");
        if name == method && matches(&params) {
            return params;
        }
    }
}

fn open_in(cwd: &Path, share: Option<bool>) -> OpenParams {
    OpenParams {
        cwd: Some(cwd.display().to_string()),
        model: Some(MODEL.into()),
        share,
        ..OpenParams::default()
    }
}

fn reason(e: &CallError) -> String {
    match e {
        CallError::Rpc(e) => {
            assert_eq!(e.code, -32602, "{e:?}");
            e.data
                .as_ref()
                .and_then(|d| d["reason"].as_str())
                .unwrap_or("")
                .to_string()
        }
        other => panic!("not an error answer: {other}"),
    }
}

/// Every message on the link naming `session`.
fn about(link: &LinkHandle, session: &str) -> Vec<Value> {
    link.received()
        .into_iter()
        .filter(|m| m.to_string().contains(session))
        .collect()
}

async fn status_of(l: &mut Linked, session: &str) -> Value {
    let answer = l
        .link
        .request("_lembas/session/status", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    answer["result"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shared_chat_is_announced_runs_the_instances_prompt_and_is_left() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    assert!(
        opened.sharing.shared && opened.sharing.linked,
        "{:?}",
        opened.sharing
    );
    assert_eq!(opened.sharing.refused, None);
    assert_eq!((opened.model.as_str(), opened.mode.as_str()), (MODEL, "edit"));
    assert!(opened.timeline.turns.is_empty());

    // Announced with the spec's fields.
    let announce = l
        .link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();
    // The schema covers it as an extension notification of the agent.
    validate_acp("AgentNotification", &announce).unwrap_or_else(|e| panic!("{e}: {announce}"));
    let said = &announce["params"];
    assert_eq!(said["sessionId"], session.as_str(), "{said}");
    assert_eq!(
        said["cwd"],
        std::fs::canonicalize(&l.work).unwrap().display().to_string()
    );
    assert_eq!(
        (
            said["origin"].as_str(),
            said["model"].as_str(),
            said["instance"].as_bool()
        ),
        (Some("terminal"), Some(MODEL), Some(true)),
        "{said}"
    );
    assert_eq!(
        (
            said["mode"].as_str(),
            said["effort"].as_str(),
            said["busy"].as_bool()
        ),
        (Some("edit"), Some("default"), Some(false))
    );
    let status = status_of(&mut l, &session).await;
    assert_eq!(
        (status["held"].as_str(), status["exists"].as_bool()),
        (Some("terminal"), Some(true)),
        "{status}"
    );

    // Opened again by the front end that holds it: as it was.
    let reopened = front
        .ask(
            call::ChatOpen,
            OpenParams {
                session_id: Some(session.clone()),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap();
    assert!(reopened.sharing.shared, "{:?}", reopened.sharing);

    // The front end's prompt: it streams to the front end, and the instance sees it with what
    // the person typed.
    l.model().push(reply_text("Hello from the computer."));
    let prompted = front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.clone(),
                text: "say hello".into(),
                turn_id: Some("t-front".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(prompted.turn_id, "t-front");
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
    let seen = updates(&l.link);
    assert!(
        seen.iter()
            .any(|u| u["sessionUpdate"] == "user_message_chunk" && u["content"]["text"] == "say hello"),
        "{seen:?}"
    );
    assert!(streamed_text(&l.link).contains("Hello from the computer."));
    assert!(
        seen.iter()
            .any(|u| u["sessionUpdate"] == "available_commands_update"),
        "a shared chat's commands are told as after session/new: {seen:?}"
    );

    // The instance's prompt runs in the shared chat, and the front end sees it.
    l.model().push(reply_text("Answered for the phone."));
    let answer = l.prompt(&session, "from the phone", "t-phone").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let chunk = pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "agent_message_chunk"
            && p["update"]["content"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("phone"))
    })
    .await;
    assert!(chunk["update"]["content"]["text"].is_string());

    // Again on the next link, and the front end hears the link went down and came back.
    let mut l = l.linked_again().await;
    let again = l
        .link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();
    assert_eq!(again["params"]["sessionId"], session.as_str());
    pushed(&mut front, "chat/sharing", |p| {
        p["session_id"] == session.as_str() && p["sharing"]["linked"] == true
    })
    .await;

    // Unshared: left, still available; shared again: announced; closed: left.
    let sharing = front
        .ask(
            call::ChatShare,
            ShareParams {
                session_id: session.clone(),
                share: false,
                remember: false,
            },
        )
        .await
        .unwrap();
    assert!(!sharing.shared);
    let left = l
        .link
        .recv_notification("_lembas/session/left", WAIT)
        .await
        .unwrap();
    assert_eq!(left["params"], json!({ "sessionId": session, "available": true }));
    front
        .ask(
            call::ChatShare,
            ShareParams {
                session_id: session.clone(),
                share: true,
                remember: false,
            },
        )
        .await
        .unwrap();
    l.link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();
    front
        .ask(
            call::ChatClose,
            SessionParams {
                session_id: session.clone(),
            },
        )
        .await
        .unwrap();
    let left = l
        .link
        .recv_notification("_lembas/session/left", WAIT)
        .await
        .unwrap();
    assert_eq!(left["params"], json!({ "sessionId": session, "available": true }));
    let status = status_of(&mut l, &session).await;
    assert_ne!(status["held"], "terminal", "{status}");
    assert_eq!(l.link.announced().len(), 2, "{:?}", l.link.announced());
    assert_eq!(l.link.left().len(), 2);
    assert_eq!(l.link.faults(), Vec::<String>::new());
    updates(&l.link);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_front_end_going_away_lets_go_and_a_chat_it_does_not_share_never_reaches_the_link() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let local = front
        .ask(call::ChatOpen, open_in(&l.work, Some(false)))
        .await
        .unwrap();
    let shared = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    l.link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();
    assert!(!local.sharing.shared && local.sharing.refused.is_none());

    l.model().push(reply_text("Only here."));
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: local.session_id.clone(),
                text: "stay here".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap();
    let chunk = pushed(&mut front, "session/update", |p| {
        p["session_id"] == local.session_id.as_str() && p["update"]["sessionUpdate"] == "agent_message_chunk"
    })
    .await;
    assert!(chunk["update"]["content"]["text"].is_string());
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == local.session_id.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
    // Held here and not shared: the instance's status says terminal and nothing more, its prompt
    // is refused, and no message on the link named it.
    let status = status_of(&mut l, &local.session_id).await;
    assert_eq!(status["held"], "terminal", "{status}");
    assert_eq!(status["title"], "", "{status}");
    let refused = l.prompt(&local.session_id, "let me in", "t-x").await;
    assert_eq!(error_of(&refused).0, -32602, "{refused}");
    let not_deleted = l
        .link
        .request(
            "_lembas/session/delete",
            json!({ "sessionId": local.session_id }),
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(error_of(&not_deleted).0, -32602, "{not_deleted}");
    assert!(
        l.home
            .state()
            .join("sessions")
            .join(format!("{}.jsonl", local.session_id))
            .is_file()
    );
    let named: Vec<Value> = about(&l.link, &local.session_id)
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .collect();
    assert_eq!(
        named,
        Vec::<Value>::new(),
        "nothing of an unshared chat goes over the link"
    );

    // The front end goes away (a crash too): its shared chat is left, available.
    drop(front);
    let left = l
        .link
        .recv_notification("_lembas/session/left", WAIT)
        .await
        .unwrap();
    assert_eq!(
        left["params"],
        json!({ "sessionId": shared.session_id, "available": true })
    );
    assert_eq!(l.link.faults(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_card_waits_at_both_ends_and_the_first_answer_takes_the_other_down() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    let configured = front
        .ask(
            call::ChatConfigure,
            ConfigureParams {
                session_id: session.clone(),
                model: None,
                mode: Some(lembas_protocol::Mode::Manual),
                effort: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(configured.mode, lembas_protocol::Mode::Manual);

    // First: the phone answers, the front end's card is taken down.
    l.model().push(ModelReply::tool_call(
        "call_a",
        "write",
        json!({ "path": "a.txt", "content": "a" }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_b",
        "write",
        json!({ "path": "b.txt", "content": "b" }),
    ));
    l.model().push(reply_text("Both asked."));
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.clone(),
                text: "write two".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap();
    let card = pushed(&mut front, "card", |p| p["session_id"] == session.as_str()).await;
    assert_eq!(card["card"]["toolCall"]["toolCallId"], "call_a", "{card}");
    let asked = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(asked["params"]["_meta"]["lembas"]["patient"], true, "{asked}");
    validate_acp("RequestPermissionRequest", &asked["params"]).unwrap_or_else(|e| panic!("{e}: {asked}"));
    l.choose(&asked, "once").await;
    let settled = pushed(&mut front, "card/settled", |p| p["tool_call_id"] == "call_a").await;
    assert_eq!(
        (settled["session_id"].as_str(), settled["by"].as_str()),
        (Some(session.as_str()), Some("client"))
    );

    // Then: the front end answers, the link is told to take its card down.
    pushed(&mut front, "card", |p| {
        p["card"]["toolCall"]["toolCallId"] == "call_b"
    })
    .await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    let allow: CardAnswer =
        serde_json::from_value(json!({ "outcome": { "outcome": "selected", "optionId": "once" } })).unwrap();
    front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_b".into(),
                answer: allow.clone(),
            },
        )
        .await
        .unwrap();
    let taken = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(
        taken["params"],
        json!({ "sessionId": session, "toolCallId": "call_b" })
    );
    pushed(&mut front, "card/settled", |p| {
        p["tool_call_id"] == "call_b" && p["by"] == "terminal"
    })
    .await;
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
    assert_eq!(std::fs::read_to_string(l.work.join("b.txt")).unwrap(), "b");
    // Answered already: no longer open.
    let again = front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_b".into(),
                answer: allow,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&again), "not_open");
    updates(&l.link);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shared_chat_whose_folder_leaves_the_roots_is_left_and_the_front_end_told_why() {
    let l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let other = l.home.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let mut l = l;
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    l.link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();
    // A chat outside the roots is local: it opens, and cannot be shared.
    let outside = front.ask(call::ChatOpen, open_in(&other, None)).await.unwrap();
    assert!(
        !outside.sharing.shared && outside.sharing.refused.is_some(),
        "{:?}",
        outside.sharing
    );
    let refused = front
        .ask(
            call::ChatShare,
            ShareParams {
                session_id: outside.session_id.clone(),
                share: true,
                remember: false,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "outside");

    l.home.config_for(&l.peer.url(), &remote(&other, ""));
    let told = pushed(&mut front, "chat/sharing", |p| {
        p["session_id"] == opened.session_id.as_str() && p["sharing"]["shared"] == false
    })
    .await;
    assert!(
        told["sharing"]["refused"].as_str().is_some_and(|r| !r.is_empty()),
        "{told}"
    );
    // The new roots redial the link: the left reaches the instance on the old link before it
    // ends, or right after the next one's initialize.
    let on_old = tokio::time::timeout(
        Duration::from_secs(3),
        l.link.recv_notification("_lembas/session/left", WAIT),
    )
    .await;
    let left = match on_old {
        Ok(Ok(left)) => left,
        _ => {
            let mut next = relink(&l.peer).await;
            let left = next
                .recv_notification("_lembas/session/left", WAIT)
                .await
                .unwrap();
            assert!(next.announced().is_empty(), "{:?}", next.announced());
            assert_eq!(next.faults(), Vec::<String>::new());
            left
        }
    };
    assert_eq!(
        left["params"],
        json!({ "sessionId": opened.session_id, "available": false })
    );
    assert_eq!(l.link.faults(), Vec::<String>::new());
}

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
            lembas_device::control::chat::params::SteerParams {
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
async fn a_question_waits_at_both_ends_and_the_front_ends_answer_reaches_the_model() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    let args = json!({ "questions": [{ "header": "DB", "question": "Which database?", "options": [{ "label": "SQLite" }, { "label": "Postgres" }] }] });
    l.model().push(ModelReply::tool_call("call_q", "ask_user", args));
    l.model().push(reply_text("Noted."));
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.clone(),
                text: "ask me".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap();
    let card = pushed(&mut front, "card", |p| p["session_id"] == session.as_str()).await;
    assert_eq!(card["card"]["toolCallId"], "call_q", "{card}");
    let asked = l.link.recv_request("_lembas/question", WAIT).await.unwrap();
    assert_eq!(asked["params"]["_meta"]["lembas"]["patient"], true, "{asked}");
    let answer: CardAnswer = serde_json::from_value(
        json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": ["Postgres"] }] }),
    )
    .unwrap();
    front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_q".into(),
                answer,
            },
        )
        .await
        .unwrap();
    let taken = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(taken["params"]["toolCallId"], "call_q");
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
    assert!(
        tool_text(&l, "call_q").contains("Postgres"),
        "{}",
        tool_text(&l, "call_q")
    );
    updates(&l.link);
    // The instance's late answer changes nothing: the first answer won.
    l.link
        .answer(
            asked["id"].clone(),
            json!({ "outcome": "answered", "answers": [{ "kind": "options", "labels": ["SQLite"] }] }),
        )
        .await
        .unwrap();
    assert!(!tool_text(&l, "call_q").contains("SQLite"));
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_share_decides_a_new_chats_sharing_and_the_answer_to_ask_is_kept_per_folder() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    // ask (the default): not shared until asked; the answer kept for the folder.
    let first = front.ask(call::ChatOpen, open_in(&l.work, None)).await.unwrap();
    assert!(!first.sharing.shared && first.sharing.ask, "{:?}", first.sharing);
    let sharing = front
        .ask(
            call::ChatShare,
            ShareParams {
                session_id: first.session_id.clone(),
                share: true,
                remember: true,
            },
        )
        .await
        .unwrap();
    assert!(sharing.shared && !sharing.ask, "{sharing:?}");
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(l.home.state().join("chat-share.json")).unwrap())
            .unwrap();
    let folder = std::fs::canonicalize(&l.work).unwrap().display().to_string();
    assert_eq!(kept[&folder], true, "{kept}");
    let second = front.ask(call::ChatOpen, open_in(&l.work, None)).await.unwrap();
    assert!(second.sharing.shared, "{:?}", second.sharing);
    l.link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();

    // never: not from the start, but chat/share still shares.
    l.home.config_for(
        &l.peer.url(),
        &format!("{}chat:\n  share: never\n", remote(&l.work, "")),
    );
    let mut deadline = 50;
    loop {
        let third = front.ask(call::ChatOpen, open_in(&l.work, None)).await.unwrap();
        if !third.sharing.shared {
            let shared = front
                .ask(
                    call::ChatShare,
                    ShareParams {
                        session_id: third.session_id.clone(),
                        share: true,
                        remember: false,
                    },
                )
                .await
                .unwrap();
            assert!(shared.shared);
            break;
        }
        front
            .ask(
                call::ChatClose,
                SessionParams {
                    session_id: third.session_id,
                },
            )
            .await
            .unwrap();
        deadline -= 1;
        assert!(deadline > 0, "chat.share: never was not read");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: opened.session_id.clone(),
                text: "first".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap();
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == opened.session_id.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
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
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.clone(),
                text: "write made.txt".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap();
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
    assert_eq!(
        std::fs::read_to_string(other.join("made.txt")).unwrap(),
        "made here\n"
    );
    let named: Vec<Value> = about(&l.link, &session)
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .collect();
    assert_eq!(named, Vec::<Value>::new());
    let status = status_of(&mut l, &session).await;
    assert_eq!(status["held"], "terminal");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chat_the_link_holds_is_taken_over_its_card_outlives_a_link_drop_and_a_scheduled_turns_is_never_patient()
 {
    let mut l = linked("  scheduled: true\n").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let session = l.new_session("manual").await;
    let mut front = front_end(&l.home).await;
    let taken = front
        .ask(
            call::ChatOpen,
            OpenParams {
                session_id: Some(session.clone()),
                ..OpenParams::default()
            },
        )
        .await
        .unwrap();
    assert!(
        taken.sharing.shared,
        "the instance has it already: {:?}",
        taken.sharing
    );
    assert_eq!(taken.mode, lembas_protocol::Mode::Manual);
    l.link
        .recv_notification("_lembas/session/announce", WAIT)
        .await
        .unwrap();

    l.model().push(ModelReply::tool_call(
        "call_d",
        "write",
        json!({ "path": "d.txt", "content": "d" }),
    ));
    l.model().push(reply_text("Done."));
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.clone(),
                text: "write d".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap();
    pushed(&mut front, "card", |p| {
        p["card"]["toolCall"]["toolCallId"] == "call_d"
    })
    .await;
    l.link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();

    // The link drops while the card waits at both ends: the next link gets it again, still
    // patient, and its answer takes the front end's down.
    let mut l = l.linked_again().await;
    let again = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(again["params"]["toolCall"]["toolCallId"], "call_d");
    assert_eq!(again["params"]["_meta"]["lembas"]["patient"], true, "{again}");
    l.choose(&again, "once").await;
    let settled = pushed(&mut front, "card/settled", |p| p["tool_call_id"] == "call_d").await;
    assert_eq!(settled["by"], "client");
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
    assert_eq!(std::fs::read_to_string(l.work.join("d.txt")).unwrap(), "d");

    // A scheduled turn in the shared chat: nobody is at the chat, so its card is never patient.
    l.model().push(ModelReply::tool_call(
        "call_s",
        "write",
        json!({ "path": "s.txt", "content": "s" }),
    ));
    l.model().push(reply_text("Scheduled done."));
    let run = l.run(&session, "scheduled write", Some("manual"), 60).await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert!(
        card["params"]["_meta"]["lembas"].get("patient").is_none(),
        "{card}"
    );
    assert!(
        card["params"]["_meta"]["lembas"]["scheduled"].is_object(),
        "{card}"
    );
    l.choose(&card, "deny").await;
    let answer = l.link.recv_answer(run, WAIT).await.unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    updates(&l.link);
    assert_eq!(l.link.faults(), Vec::<String>::new());
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
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == true
    })
    .await;
    let steered = front
        .ask(
            call::ChatSteer,
            lembas_device::control::chat::params::SteerParams {
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
    pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "_lembas_turn"
            && p["update"]["running"] == false
    })
    .await;
    l.model().release();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_approved_at_the_front_end_sets_the_mode_and_takes_the_links_card_down() {
    let mut l = linked("").await;
    std::fs::create_dir_all(&l.work).unwrap();
    let mut front = front_end(&l.home).await;
    let opened = front
        .ask(call::ChatOpen, open_in(&l.work, Some(true)))
        .await
        .unwrap();
    let session = opened.session_id.clone();
    front
        .ask(
            call::ChatConfigure,
            ConfigureParams {
                session_id: session.clone(),
                model: None,
                mode: Some(lembas_protocol::Mode::Plan),
                effort: None,
            },
        )
        .await
        .unwrap();
    l.model().push(ModelReply::tool_call(
        "call_p",
        "plan_submit",
        json!({ "text": "# Plan\n1. do it" }),
    ));
    l.model().push(reply_text("Planned."));
    front
        .ask(
            call::ChatPrompt,
            PromptParams {
                session_id: session.clone(),
                text: "plan it".into(),
                turn_id: None,
            },
        )
        .await
        .unwrap();
    let card = pushed(&mut front, "card", |p| p["session_id"] == session.as_str()).await;
    assert_eq!(card["card"]["text"], "# Plan\n1. do it", "{card}");
    let asked = l.link.recv_request("_lembas/plan", WAIT).await.unwrap();
    assert_eq!(asked["params"]["_meta"]["lembas"]["patient"], true, "{asked}");
    let approve: CardAnswer =
        serde_json::from_value(json!({ "outcome": "approve", "mode": "edit" })).unwrap();
    front
        .ask(
            call::ChatAnswer,
            ChatAnswerParams {
                session_id: session.clone(),
                tool_call_id: "call_p".into(),
                answer: approve,
            },
        )
        .await
        .unwrap();
    let taken = l
        .link
        .recv_notification("_lembas/permission/settled", WAIT)
        .await
        .unwrap();
    assert_eq!(taken["params"]["toolCallId"], "call_p");
    let mode = pushed(&mut front, "session/update", |p| {
        p["session_id"] == session.as_str()
            && p["update"]["sessionUpdate"] == "current_mode_update"
            && p["update"]["currentModeId"] == "edit"
    })
    .await;
    assert_eq!(mode["update"]["currentModeId"], "edit");
    updates(&l.link);
}
