//! `lembas sessions list|delete|prune` against a store filled through the library, in a temporary home,
//! with no service running.

mod common;

use std::process::Output;

use common::{Home, Lembas};
use lembas_device::store::{SessionHeader, Store, TurnEntry, new_session_id};
use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// A session with a title record and `messages` messages, its turns and an attachment.
fn session(store: &Store, cwd: &str, title: &str, messages: usize) -> String {
    let id = new_session_id();
    let mut log = store
        .create(
            &id,
            &SessionHeader {
                cwd: cwd.to_string(),
                created_ms: Some(1_700_000_000_000u64),
                model: "m".to_string(),
                ..SessionHeader::default()
            },
        )
        .unwrap();
    let mut records = vec![json!({ "type": "title", "title": title })];
    records.extend((0..messages).map(|n| json!({ "type": "message", "role": "user", "text": n })));
    log.append(&records).unwrap();
    store
        .merge_turns(
            &id,
            &[TurnEntry {
                turn_id: "t1".into(),
                state: "done".into(),
                answer: Some(serde_json::from_value(json!({ "stopReason": "end_turn" })).unwrap()),
                updated_ms: 1,
            }],
        )
        .unwrap();
    let attachments = store.attachments_dir(&id).unwrap();
    std::fs::create_dir_all(&attachments).unwrap();
    std::fs::write(attachments.join("a.txt"), "x").unwrap();
    id
}

#[test]
fn list_shows_every_session_newest_first() {
    let home = Home::new();
    let out = ok(home.run(&["sessions", "list"]));
    assert_eq!(text(&out.stdout).trim(), "No sessions on this computer.");
    assert_eq!(json_of(&ok(home.run(&["sessions", "list", "--json"]))), json!([]));

    let store = Store::at(
        home.state(),
        &lembas_device::decisions::Decisions::built_in().turns,
    );
    let first = session(&store, "/work/one", "First chat", 2);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = session(&store, "/work/two", "Second chat", 5);

    let list = json_of(&ok(home.run(&["sessions", "list", "--json"])));
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], second.as_str(), "newest first");
    assert_eq!(list[0]["title"], "Second chat");
    assert_eq!(list[0]["cwd"], "/work/two");
    assert_eq!(list[0]["messages"], 5);
    assert_eq!(list[0]["created_ms"], 1_700_000_000_000u64);
    assert!(list[0]["updated_ms"].as_u64().unwrap() >= list[1]["updated_ms"].as_u64().unwrap());
    assert_eq!(list[1]["id"], first.as_str());
    assert_eq!(list[1]["messages"], 2);

    let out = text(&ok(home.run(&["sessions", "list"])).stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    for (line, (id, title, cwd)) in lines.iter().zip([
        (&second, "Second chat", "/work/two"),
        (&first, "First chat", "/work/one"),
    ]) {
        assert!(line.starts_with(id.as_str()), "{line}");
        assert!(line.contains(title) && line.contains(cwd), "{line}");
        assert!(line.ends_with("just now"), "{line}");
    }
}

#[test]
fn delete_removes_the_session_and_keeps_the_delete_for_the_next_link() {
    let home = Home::new();
    let store = Store::at(
        home.state(),
        &lembas_device::decisions::Decisions::built_in().turns,
    );
    let gone = session(&store, "/work/one", "Going", 1);
    let stays = session(&store, "/work/two", "Staying", 1);

    let out = ok(home.run(&["sessions", "delete", &gone]));
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!("Deleted session {gone}")) && said.contains("Going"),
        "{said}"
    );

    assert!(!store.exists(&gone));
    assert!(store.load_turns(&gone).unwrap().is_empty());
    assert!(!store.attachments_dir(&gone).unwrap().exists());
    assert!(store.exists(&stays));
    assert_eq!(store.load_turns(&stays).unwrap().len(), 1);
    // The file itself, as the service and the next link read it.
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(home.state().join("deleted.json")).unwrap()).unwrap();
    assert_eq!(kept, json!([gone]));

    let list = json_of(&ok(home.run(&["sessions", "list", "--json"])));
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["id"], stays.as_str());

    let out = ok(home.run(&["sessions", "delete", &stays, "--json"]));
    assert_eq!(
        json_of(&out),
        json!({ "event": "done", "sessionId": stays, "deleted": true })
    );
    assert_eq!(store.deleted_pending().unwrap(), vec![gone, stays]);
    assert_eq!(json_of(&ok(home.run(&["sessions", "list", "--json"]))), json!([]));
}

#[test]
fn unknown_ids_and_ids_of_the_wrong_shape_are_refused_and_change_nothing() {
    let home = Home::new();
    let store = Store::at(
        home.state(),
        &lembas_device::decisions::Decisions::built_in().turns,
    );
    let kept = session(&store, "/work/one", "Kept", 1);
    let unknown = new_session_id();

    let out = home.run(&["sessions", "delete", &unknown]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim(),
        format!("lembas: No session {unknown} on this computer.")
    );
    let out = home.run(&["sessions", "delete", &unknown, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json_of(&out)["message"],
        format!("No session {unknown} on this computer.")
    );

    for bad in ["../x", "/", &kept.to_uppercase(), &kept[..kept.len() - 1], "ses_"] {
        let out = home.run(&["sessions", "delete", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            text(&out.stderr).contains("is not a session id"),
            "{bad}: {}",
            text(&out.stderr)
        );
        let out = home.run(&["sessions", "delete", bad, "--json"]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert_eq!(json_of(&out)["event"], "error");
    }

    assert!(store.exists(&kept));
    assert!(
        !home.state().join("deleted.json").exists(),
        "nothing was deleted, nothing to tell"
    );
}

/// Sets a session's last change `days` days back, as a session left alone that long has it.
fn age(home: &Home, id: &str, days: u64) {
    let file = home.state().join("sessions").join(format!("{id}.jsonl"));
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 24 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(then)
        .unwrap();
}

#[test]
fn prune_deletes_what_went_unchanged_keeps_what_is_open_and_keeps_the_deletes_for_the_next_link() {
    let home = Home::new();
    let store = Store::at(
        home.state(),
        &lembas_device::decisions::Decisions::built_in().turns,
    );
    let old = session(&store, "/work/old", "Old", 1);
    let older = session(&store, "/work/older", "Older", 1);
    let open = session(&store, "/work/open", "Open elsewhere", 1);
    let recent = session(&store, "/work/new", "Recent", 1);
    age(&home, &old, 40);
    age(&home, &older, 90);
    age(&home, &open, 60);
    age(&home, &recent, 10);
    // Another process has it open (a running service's chat).
    let _held = store.hold(&open, "the LLeMbas service, pid 1").unwrap();

    // A dry run names them and changes nothing.
    let out = ok(home.run(&["sessions", "prune", "--older-than", "30", "--dry-run", "--json"]));
    let said = json_of(&out);
    assert_eq!(said["dryRun"], true);
    let mut listed: Vec<&str> = said["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    listed.sort();
    let mut expected = vec![old.as_str(), older.as_str(), open.as_str()];
    expected.sort();
    assert_eq!(listed, expected, "the dry run lists every old one: {said}");
    assert!(store.exists(&old) && store.exists(&older) && store.exists(&open));
    assert!(!home.state().join("deleted.json").exists());

    let out = ok(home.run(&["sessions", "prune", "--older-than", "30"]));
    let printed = text(&out.stdout);
    assert!(printed.contains("Deleted 2 sessions"), "{printed}");
    assert!(
        text(&out.stderr).contains(&format!(
            "kept {open}: This session is open in the LLeMbas service, pid 1"
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(!store.exists(&old) && !store.exists(&older));
    assert!(!store.attachments_dir(&old).unwrap().exists());
    assert!(store.exists(&open) && store.exists(&recent));
    let mut pending = store.deleted_pending().unwrap();
    pending.sort();
    let mut gone = vec![old.clone(), older.clone()];
    gone.sort();
    assert_eq!(pending, gone, "each delete is kept for the next link");

    // Nothing left that old: said, and a success.
    let out = ok(home.run(&["sessions", "prune", "--older-than", "100"]));
    assert_eq!(
        text(&out.stdout).trim(),
        "No session here is older than 100 days."
    );
    let out = home.run(&["sessions", "prune", "--older-than", "thirty"]);
    assert_eq!(out.status.code(), Some(2), "a count of days is a number");
}
