use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;
use tokio::sync::broadcast;

use super::*;
use crate::events::{DeviceEvent, LinkState};
use lembas_protocol::event::TaskState;
use lembas_protocol::prompt::StopReason;

fn turn_end() -> DeviceEvent {
    DeviceEvent::Turn {
        session_id: "ses_a".into(),
        turn_id: "t1".into(),
        state: TaskState::End,
        stop_reason: Some(StopReason::EndTurn),
        cwd: "/work".into(),
    }
}

fn link(state: LinkState) -> DeviceEvent {
    DeviceEvent::Link {
        link: state,
        error: None,
    }
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_line_is_at_ms_then_kind_then_the_events_fields() {
    let mut lines = Lines::default();
    assert_eq!(
        lines.line(&turn_end(), 1_700_000_000_123).unwrap(),
        r#"{"at_ms":1700000000123,"kind":"turn","session_id":"ses_a","turn_id":"t1","state":"end","stop_reason":"end_turn","cwd":"/work"}"#
    );
    let call = DeviceEvent::ToolCall {
        session_id: "ses_a".into(),
        tool_call_id: "call_1".into(),
        tool: "bash".into(),
        title: "touch x".into(),
        decision: "ask".into(),
        answered_by: Some("client".into()),
        outcome: "completed".into(),
        command: Some("touch y".into()),
        changed_files: Vec::new(),
    };
    let line = lines.line(&call, 7).unwrap();
    assert_eq!(
        line,
        r#"{"at_ms":7,"kind":"tool_call","session_id":"ses_a","tool_call_id":"call_1","tool":"bash","title":"touch x","decision":"ask","answered_by":"client","outcome":"completed","command":"touch y"}"#
    );
    // A line reads back as the event it came from, and one written before `command` and
    // `changed_files` were kept still reads.
    let back: DeviceEvent = serde_json::from_str(&line).unwrap();
    assert_eq!(back, call);
    let older = r#"{"at_ms":7,"kind":"tool_call","session_id":"ses_a","tool_call_id":"call_1","tool":"bash","title":"touch x","decision":"ask","answered_by":"client","outcome":"completed"}"#;
    let older: DeviceEvent = serde_json::from_str(older).unwrap();
    assert!(matches!(older, DeviceEvent::ToolCall { command: None, .. }));
    assert_eq!(line::missed(3, 9), r#"{"at_ms":9,"kind":"missed","count":3}"#);
}

#[test]
fn a_watch_line_keeps_how_it_ended_never_what_it_printed() {
    // What `_lembas/monitor` answers has the output's start and its hash; the event has neither.
    let outcome = crate::monitor::WatchOutcome {
        watched: lembas_protocol::scheduled::Watched {
            hash: Some("sha256:ab".into()),
            exit: Some(0),
            timed_out: false,
            excerpt: "hunter2".into(),
            truncated: false,
            bytes: 8,
            duration_ms: 12,
        },
        sandbox_refusal: None,
    };
    let watch = DeviceEvent::Watch {
        cwd: "/work".into(),
        command: "cat secrets.txt".into(),
        outcome: outcome.end(),
    };
    let line = Lines::default().line(&watch, 1).unwrap();
    assert!(!line.contains("hunter2") && !line.contains("sha256"), "{line}");
    let line: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        line["outcome"],
        json!({ "exit": 0, "timed_out": false, "truncated": false, "bytes": 8, "duration_ms": 12 })
    );
    assert_eq!(line["command"], "cat secrets.txt");
    // A line an earlier version wrote with the output in it still reads, without it.
    let old = json!({ "kind": "watch", "cwd": "/w", "command": "c", "outcome": { "hash": "sha256:ab",
        "exit": 3, "timed_out": false, "excerpt": "hunter2", "truncated": false, "bytes": 8, "duration_ms": 12 } });
    let DeviceEvent::Watch { outcome, .. } = serde_json::from_value(old).unwrap() else {
        panic!("a watch line reads as a watch");
    };
    assert_eq!(outcome.phrase(), "failed (exit 3)");
}

#[test]
fn the_link_is_logged_when_it_goes_up_or_down_not_at_every_redial() {
    let mut lines = Lines::default();
    let states = [
        LinkState::Starting,
        LinkState::Connecting,
        LinkState::Offline { retry_in_ms: 100 },
        LinkState::Connecting,
        LinkState::Offline { retry_in_ms: 200 },
        LinkState::Connecting,
        LinkState::Linked,
        LinkState::Offline { retry_in_ms: 100 },
        LinkState::Connecting,
        LinkState::Linked,
        LinkState::Stopped,
    ];
    let logged: Vec<String> = states
        .into_iter()
        .filter_map(|s| lines.line(&link(s), 0))
        .map(|l| serde_json::from_str::<Value>(&l).unwrap()["link"]["state"].to_string())
        .collect();
    assert_eq!(
        logged,
        [
            r#""offline""#,
            r#""linked""#,
            r#""offline""#,
            r#""linked""#,
            r#""stopped""#
        ]
    );
}

fn small(dir: &Path, max_bytes: u64, kept_files: u32) -> LogFile {
    LogFile::new(
        dir.join("activity.jsonl"),
        Rotation {
            max_bytes,
            kept_files,
        },
    )
}

#[test]
fn the_decided_limits_are_read_from_the_decisions() {
    let numbers = &crate::decisions::Decisions::built_in().activity;
    let limits = Rotation::decided(numbers);
    assert_eq!(limits.max_bytes, numbers.max_bytes);
    assert_eq!(limits.kept_files, numbers.kept_files);
    assert_eq!(
        default_file(&crate::paths::Dirs::from_env(), numbers).limits(),
        limits
    );
}

#[test]
fn rotates_before_the_limit_keeping_one_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = small(dir.path(), 100, 1);
    // 20 lines of 25 bytes (with the newline): four fit in 100 bytes.
    for n in 0..20 {
        log.append(&format!(r#"{{"at_ms":{},"kind":"x"}}"#, 100 + n))
            .unwrap();
    }
    let current = std::fs::metadata(log.path()).unwrap().len();
    assert!(current <= 100, "{current}");
    let old = old_file(log.path(), 1);
    assert!(std::fs::metadata(&old).unwrap().len() <= 100);
    assert!(!old_file(log.path(), 2).exists(), "only one old file is kept");
    // The two files hold the newest eight lines, in order.
    let mut kept: Vec<u64> = read_lines(&old)
        .into_iter()
        .chain(read_lines(log.path()))
        .map(|l| l["at_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(kept, (112..120).collect::<Vec<_>>());
    // A line longer than the limit still gets written, in a file of its own.
    let long = format!(r#"{{"at_ms":99,"kind":"{}"}}"#, "y".repeat(200));
    log.append(&long).unwrap();
    kept = read_lines(log.path())
        .into_iter()
        .map(|l| l["at_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(kept, [99]);
}

#[test]
fn rotation_keeps_as_many_old_files_as_decided() {
    let dir = tempfile::tempdir().unwrap();
    let log = small(dir.path(), 30, 3);
    for n in 0..10 {
        log.append(&format!(r#"{{"at_ms":{n},"kind":"x"}}"#)).unwrap();
    }
    let at = |p: &Path| read_lines(p)[0]["at_ms"].as_u64().unwrap();
    assert_eq!(at(log.path()), 9);
    assert_eq!(at(&old_file(log.path(), 1)), 8);
    assert_eq!(at(&old_file(log.path(), 3)), 6);
    assert!(!old_file(log.path(), 4).exists());

    let none_kept = small(&dir.path().join("b"), 30, 0);
    std::fs::create_dir_all(dir.path().join("b")).unwrap();
    for n in 0..3 {
        none_kept
            .append(&format!(r#"{{"at_ms":{n},"kind":"x"}}"#))
            .unwrap();
    }
    assert_eq!(at(none_kept.path()), 2);
    assert!(!old_file(none_kept.path(), 1).exists());
}

#[cfg(unix)]
#[test]
fn the_file_is_only_the_users() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let log = small(&dir.path().join("gone/again"), 100, 1);
    // The state folder is made again when it was removed.
    log.append("{}").unwrap();
    let mode = std::fs::metadata(log.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn newest_reads_back_newest_first_over_both_files_and_counts_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = small(dir.path(), 100, 1);
    for n in 0..6 {
        log.append(&format!(r#"{{"at_ms":{},"kind":"x"}}"#, 100 + n))
            .unwrap();
    }
    log.append("not json").unwrap();
    log.append(r#"{"kind":"no time"}"#).unwrap();
    let at = |n: &Newest| -> Vec<u64> { n.lines.iter().map(|l| l["at_ms"].as_u64().unwrap()).collect() };
    let three = newest(log.path(), 1, 3).unwrap();
    assert_eq!(at(&three), [105, 104, 103]);
    assert_eq!(three.unreadable, 2);
    let all = newest(log.path(), 1, 50).unwrap();
    assert_eq!(at(&all), [105, 104, 103, 102, 101, 100]);
    // Lines that rotated past the kept file are gone: the two files hold 114 to 119.
    for n in 6..20 {
        log.append(&format!(r#"{{"at_ms":{},"kind":"x"}}"#, 100 + n))
            .unwrap();
    }
    let kept = newest(log.path(), 1, 50).unwrap();
    assert_eq!(at(&kept), (114..120).rev().collect::<Vec<_>>());
    assert_eq!(kept.unreadable, 0);
    let none = newest(&dir.path().join("nothing.jsonl"), 1, 10).unwrap();
    assert!(none.lines.is_empty() && none.unreadable == 0);
}

#[test]
fn each_line_says_what_happened_in_a_sentence() {
    let mut lines = Lines::default();
    let text =
        |event: DeviceEvent, lines: &mut Lines| describe(&parse(&lines.line(&event, 0).unwrap()).unwrap());
    assert_eq!(text(turn_end(), &mut lines), "Turn t1 of ses_a ended (end_turn)");
    // A turn's state and stop reason are logged by their wire names, and such lines read back.
    let logged = lines.line(&turn_end(), 0).unwrap();
    assert!(
        logged.contains(r#""state":"end","stop_reason":"end_turn""#),
        "{logged}"
    );
    let started =
        r#"{"at_ms":1,"kind":"turn","session_id":"ses_a","turn_id":"t2","state":"start","stop_reason":null}"#;
    assert_eq!(describe(&parse(started).unwrap()), "Turn t2 of ses_a started");
    let failed =
        r#"{"at_ms":1,"kind":"turn","session_id":"ses_a","turn_id":"t2","state":"end","stop_reason":null}"#;
    assert_eq!(describe(&parse(failed).unwrap()), "Turn t2 of ses_a failed");
    assert_eq!(
        text(
            DeviceEvent::Link {
                link: LinkState::Offline { retry_in_ms: 100 },
                error: Some("the dial timed out".into())
            },
            &mut lines
        ),
        "Link down: the dial timed out"
    );
    // A tool call names what it did, not only the model's words for it.
    let call =
        |tool: &str, outcome: &str, command: Option<&str>, changed_files: &[&str]| DeviceEvent::ToolCall {
            session_id: "ses_a".into(),
            tool_call_id: "call_1".into(),
            tool: tool.into(),
            title: "Tidy up".into(),
            decision: "ask".into(),
            answered_by: Some("client".into()),
            outcome: outcome.into(),
            command: command.map(str::to_string),
            changed_files: changed_files.iter().map(|f| f.to_string()).collect(),
        };
    assert_eq!(
        text(call("bash", "completed", Some("rm -r build"), &[]), &mut lines),
        "bash call_1 (Tidy up): ask, answered by client, completed; ran `rm -r build`"
    );
    assert_eq!(
        text(call("bash", "denied", Some("sudo true"), &[]), &mut lines),
        "bash call_1 (Tidy up): ask, answered by client, denied; refused `sudo true`"
    );
    assert_eq!(
        text(call("edit", "completed", None, &["/w/a.rs"]), &mut lines),
        "edit call_1 (Tidy up): ask, answered by client, completed; changed /w/a.rs"
    );
    assert_eq!(
        text(call("read", "completed", None, &[]), &mut lines),
        "read call_1 (Tidy up): ask, answered by client, completed"
    );
    assert_eq!(
        describe(&parse(&line::missed(2, 0)).unwrap()),
        "2 events could not be logged"
    );
    // A kind from a newer version is shown by its fields.
    assert_eq!(
        describe(&parse(r#"{"at_ms":1,"kind":"file_shown","path":"a.txt"}"#).unwrap()),
        r#"{"path":"a.txt"}"#
    );
    assert_eq!(clock(1_700_000_000_123), "22:13:20");
    assert_eq!(clock(0), "00:00:00");
}

/// Waits until `path` holds `n` lines.
async fn lines_reach(path: &Path, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let lines = read_lines(path);
        if lines.len() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    read_lines(path)
}

#[tokio::test]
async fn the_writer_writes_every_event_and_what_was_queued_before_it_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (events, _) = broadcast::channel(16);
    let writer = spawn(events.subscribe(), small(dir.path(), 10_000, 1));
    events.send(link(LinkState::Connecting)).unwrap();
    events.send(link(LinkState::Linked)).unwrap();
    events.send(turn_end()).unwrap();
    events.send(link(LinkState::Stopped)).unwrap();
    writer.finish().await;
    let kinds: Vec<Value> = read_lines(&dir.path().join("activity.jsonl"))
        .into_iter()
        .map(|l| json!([l["kind"], l["link"]["state"]]))
        .collect();
    assert_eq!(
        kinds,
        [
            json!(["link", "linked"]),
            json!(["turn", null]),
            json!(["link", "stopped"])
        ]
    );
}

#[tokio::test]
async fn events_the_writer_fell_behind_on_are_counted_in_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let (events, _) = broadcast::channel(2);
    let writer = spawn(events.subscribe(), small(dir.path(), 10_000, 1));
    // The test's thread sends all of them before the writer first runs.
    for _ in 0..10 {
        events.send(turn_end()).unwrap();
    }
    writer.finish().await;
    let lines = read_lines(&dir.path().join("activity.jsonl"));
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["missed", "turn", "turn"]);
    assert_eq!(lines[0]["count"], 8);
}

#[tokio::test]
async fn the_writer_goes_on_when_the_file_is_removed_or_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activity.jsonl");
    let (events, _) = broadcast::channel(16);
    let writer = spawn(events.subscribe(), small(dir.path(), 10_000, 1));
    events.send(turn_end()).unwrap();
    assert_eq!(lines_reach(&path, 1).await.len(), 1);

    // Removed: the next line makes it again.
    std::fs::remove_file(&path).unwrap();
    events.send(turn_end()).unwrap();
    assert_eq!(lines_reach(&path, 1).await.len(), 1);

    // Unwritable (a folder stands where the file was): lines are counted, then said.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    events.send(turn_end()).unwrap();
    events.send(turn_end()).unwrap();
    // Both taken by the writer, then time for the second write to fail too.
    while !events.is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    std::fs::remove_dir(&path).unwrap();
    events.send(link(LinkState::Linked)).unwrap();
    writer.finish().await;
    let lines = read_lines(&path);
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["missed", "link"]);
    assert_eq!(lines[0]["count"], 2);
}
