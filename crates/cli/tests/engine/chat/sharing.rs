//! Sharing a chat started at this computer: announced with the spec's fields and again on every
//! link, left on unshare, close, the front end's end or the folder leaving the roots; not shared,
//! nothing of it reaches the link; `chat.share` decides a new chat's sharing.

use super::*;
use lembas_device::control::calls::call;
use lembas_device::control::chat::params::{OpenParams, PromptParams, ShareParams};
use lembas_device::control::params::SessionParams;

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
    let status = session_status(&mut l, &session).await;
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
    turn_running(&mut front, &session, false).await;
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
    let status = session_status(&mut l, &session).await;
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
    prompt(&mut front, &local.session_id, "stay here").await;
    let chunk = pushed(&mut front, "session/update", |p| {
        p["session_id"] == local.session_id.as_str() && p["update"]["sessionUpdate"] == "agent_message_chunk"
    })
    .await;
    assert!(chunk["update"]["content"]["text"].is_string());
    turn_running(&mut front, &local.session_id, false).await;
    // Held here and not shared: the instance's status says terminal and nothing more, its prompt
    // is refused, and no message on the link named it.
    let status = session_status(&mut l, &local.session_id).await;
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
