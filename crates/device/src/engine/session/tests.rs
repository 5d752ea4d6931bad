//! The session's operations that read or change more than one thing under its lock, on a real
//! session file in a temporary store.

use super::*;
use crate::engine::grants::Grant;
use crate::engine::job_board::LimitStop;
use crate::store::Store;
use crate::store::record::SessionHeader;
use tokio::sync::oneshot;

/// A session in `auto` with model `a` at medium effort, its file in `dir`.
fn session_in(dir: &tempfile::TempDir) -> Arc<Session> {
    let store = Store::at(
        dir.path().to_path_buf(),
        &crate::decisions::Decisions::built_in().turns,
    );
    let id = crate::store::ids::new_session_id();
    let header = SessionHeader {
        cwd: dir.path().display().to_string(),
        model: "a".into(),
        mode: "auto".into(),
        ..SessionHeader::default()
    };
    let log = store.create(&id, &header).expect("the session file is made");
    let state = SessionState::new(
        "a".into(),
        Mode::Auto,
        Effort::Medium,
        log,
        crate::decisions::Decisions::built_in(),
    );
    Session::new(id.as_str().into(), dir.path().to_path_buf(), state, None)
}

#[test]
fn a_model_taken_back_returns_unless_the_person_chose_another_meanwhile() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    let held = session.choose_model(Some("b".into()), Some(Effort::High));
    assert!(held.changed());
    assert_eq!(session.settings().model, "b");
    assert!(session.take_back_model(held));
    assert_eq!(
        (session.settings().model, session.settings().effort),
        ("a".to_string(), Effort::Medium)
    );

    let held = session.choose_model(Some("b".into()), None);
    session.choose_model(Some("c".into()), None);
    assert!(!session.take_back_model(held));
    assert_eq!(session.settings().model, "c");

    // A choice that changed nothing gives nothing back.
    let same = session.choose_model(Some("c".into()), None);
    assert!(!same.changed());
    assert!(!session.take_back_model(same));
}

#[test]
fn a_mode_above_the_limit_takes_the_grants_with_it() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    session.give_grant(Grant::Writes);
    let within = session.lower_to(Mode::Auto);
    assert!(!within.own_mode_fell);
    assert_eq!(session.grants_in_force(), vec![Grant::Writes]);

    let lowered = session.lower_to(Mode::Edit);
    assert!(lowered.own_mode_fell);
    assert_eq!(lowered.mode, Mode::Edit);
    assert!(session.grants_in_force().is_empty());
    // The session's own mode is the caller's to switch (recorded and told).
    assert_eq!(session.settings().mode, Mode::Auto);
    assert_eq!(session.call_terms().mode, Mode::Auto);
}

#[test]
fn a_grant_not_in_force_is_not_revoked() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    let tests = Grant::Command {
        pattern: "cargo test *".into(),
    };
    assert_eq!(session.revoke_grant(&tests), None);
    session.give_grant(Grant::Writes);
    session.give_grant(tests.clone());
    assert_eq!(session.revoke_grant(&tests), Some(vec![Grant::Writes]));
}

#[test]
fn job_notes_wait_for_the_session_to_be_at_rest() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    assert_eq!(session.take_job_notes_at_rest(), None);
    session.jobs(|board| board.note("job_1".into(), "[job job_1 ended]".into()));
    let _phase = session.accept_turn("turn_1");
    assert!(session.busy());
    assert_eq!(session.take_job_notes_at_rest(), None);
    session.set_phase("turn_1", TurnPhase::Running);
    session.set_phase(
        "turn_1",
        TurnPhase::Done(Box::new(Err(crate::rpc::RpcError::internal("x")))),
    );
    assert!(!session.busy());
    assert_eq!(
        session.take_job_notes_at_rest(),
        Some(vec![("job_1".to_string(), "[job job_1 ended]".to_string())])
    );
    assert_eq!(session.take_job_notes_at_rest(), None);
}

#[test]
fn plan_mode_stops_the_jobs_started_to_write() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    let (stop, mut stopped) = oneshot::channel();
    let info = lembas_protocol::jobs::JobInfo {
        id: "job_1".into(),
        kind: lembas_protocol::jobs::JobKind::Command,
        state: lembas_protocol::jobs::JobState::Running,
        description: "tests".into(),
        command: Some("cargo test".into()),
        started: 0,
        ended: None,
        exit: None,
        unread: 0,
    };
    session.jobs(|board| board.add(info, Mode::Auto, stop));
    session.set_mode(Mode::Edit);
    assert!(stopped.try_recv().is_err(), "edit still writes: the job runs on");
    session.set_mode(Mode::Plan);
    assert_eq!(session.settings().mode, Mode::Plan);
    assert!(stopped.try_recv().is_ok(), "in plan a job started to write stops");
    assert_eq!(session.stop_jobs_for_limits(LimitStop::StopAll), 0);
}

#[test]
fn commands_are_told_when_they_change_or_when_asked() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    let update = lembas_protocol::update::SessionUpdate::AvailableCommandsUpdate {
        available_commands: Vec::new(),
    };
    assert!(session.commands_to_tell(&update, true));
    assert!(!session.commands_to_tell(&update, true));
    assert!(session.commands_to_tell(&update, false));
}

#[test]
fn compacting_before_a_step_keeps_the_persons_last_request_and_the_plan() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    session.push_message(Some("turn_1"), ChatMessage::user("fix it"));
    session.push_message(Some("turn_1"), ChatMessage::tool("c", "ok", false));
    let plan = Plan {
        version: 1,
        title: "Fix it".into(),
        summary: String::new(),
        objectives: vec!["it works".into()],
        findings: Vec::new(),
        phases: Vec::new(),
    };
    session.replace_plan(Some(plan.clone()));

    let record = session.compact("we fixed half", true);
    assert_eq!(record.plan, Some(plan));
    let kept = record.kept.expect("the last request is kept");
    assert_eq!(kept.turn_id.as_deref(), Some("turn_1"));
    assert_eq!(kept.message, ChatMessage::user("fix it"));
    // The summary, then the request.
    assert_eq!(session.model_view(None).messages.len(), 2);

    let at_rest = session.compact("all done", false);
    assert!(at_rest.kept.is_none());
    assert_eq!(session.model_view(None).messages.len(), 1);
    // The record of the turns stays whole: the history still starts with the request.
    let first = session.history().turns.into_iter().next();
    assert!(matches!(first, Some(HistoryTurn::User { text, .. }) if text == "fix it"));
}

#[test]
fn the_last_turn_is_every_message_it_added() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let session = session_in(&dir);
    assert!(session.last_turn().is_none());
    assert!(session.is_new());
    session.push_message(Some("turn_1"), ChatMessage::user("one"));
    session.push_message(Some("turn_2"), ChatMessage::user("two"));
    session.push_message(Some("turn_2"), ChatMessage::tool("c", "ok", false));
    assert!(!session.is_new());
    let last = session.last_turn().expect("a turn");
    assert_eq!(last.turn_id, "turn_2");
    assert_eq!(last.messages.len(), 2);
    assert_eq!(session.rewind("turn_2"), 1);
    assert_eq!(session.last_turn().expect("a turn").turn_id, "turn_1");
}
