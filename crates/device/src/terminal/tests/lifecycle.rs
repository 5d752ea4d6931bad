//! Sizes, refusals, limits, hangups and flow control.

use super::*;

#[tokio::test]
async fn sizes_are_clamped_and_resize_reaches_the_shell() {
    let mut h = Harness::new("/bin/bash", &[]);
    let answer = h.open(json!({ "cols": 5, "rows": 1000 })).await.unwrap();
    let [cols, rows] = [
        decisions::Decisions::built_in().terminal.cols[0],
        decisions::Decisions::built_in().terminal.rows[1],
    ];
    assert_eq!(
        (answer["cols"].as_u64(), answer["rows"].as_u64()),
        (Some(cols.into()), Some(rows.into()))
    );
    let id = answer["terminalId"].as_str().unwrap().to_string();
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "stty size\r").await;
    h.until("the first size", &id, |h| {
        h.text(&id).contains(&format!("{rows} {cols}"))
    })
    .await;
    h.terminals
        .resize(params(
            method::TerminalResize,
            json!({ "terminalId": id, "cols": 100, "rows": 30 }),
        ))
        .await
        .unwrap();
    h.send(&id, "stty size\r").await;
    h.until("the new size", &id, |h| h.text(&id).contains("30 100"))
        .await;
    let unknown = h
        .terminals
        .resize(params(
            method::TerminalResize,
            json!({ "terminalId": "t99", "cols": 100, "rows": 30 }),
        ))
        .await;
    assert_eq!(unknown.unwrap_err().code, rpc::INVALID_PARAMS);
}

#[tokio::test]
async fn refusals_and_the_limit_per_link() {
    let mut h = Harness::new("/bin/sh", &[]);
    let outside = tempfile::tempdir().unwrap();
    let refused = h.open(json!({ "cwd": outside.path() })).await.unwrap_err();
    assert_eq!(refused.code, rpc::INVALID_PARAMS);
    assert!(
        refused.message.contains("outside the folders"),
        "{}",
        refused.message
    );

    let mut off = h.settings();
    off.remote.terminal = false;
    let refused = h
        .terminals
        .open(params(method::TerminalOpen, json!({})), &off)
        .await
        .unwrap_err();
    assert!(
        refused.code == rpc::INVALID_PARAMS && refused.message.contains("remote.terminal: true"),
        "{refused}"
    );
    let mut remote_off = h.settings();
    remote_off.remote.enabled = false;
    let refused = h
        .terminals
        .open(params(method::TerminalOpen, json!({})), &remote_off)
        .await
        .unwrap_err();
    assert!(refused.message.contains("Remote work is off"), "{refused}");
    let mut no_roots = h.settings();
    no_roots.remote.roots.clear();
    let refused = h
        .terminals
        .open(params(method::TerminalOpen, json!({})), &no_roots)
        .await
        .unwrap_err();
    assert!(refused.message.contains("allows no folders"), "{refused}");
    let bad = h.open(json!({ "cwd": "relative/dir" })).await.unwrap_err();
    assert!(bad.message.contains("not an absolute path"), "{bad}");

    let max = decisions::Decisions::built_in().terminal.max_per_link;
    let mut ids = Vec::new();
    for _ in 0..max {
        ids.push(h.open_id().await);
    }
    assert_eq!(ids, (1..=max).map(|n| format!("t{n}")).collect::<Vec<_>>());
    assert_eq!(h.terminals.open_count(), max);
    let fifth = h.open(json!({})).await.unwrap_err();
    assert_eq!(fifth.code, rpc::INVALID_PARAMS);
    assert!(fifth.message.contains(&max.to_string()), "{fifth}");

    h.terminals
        .close(params(method::TerminalClose, json!({ "terminalId": ids[0] })))
        .await
        .unwrap();
    assert_eq!(h.terminals.open_count(), max - 1);
    let again = h.open_id().await;
    assert_eq!(again, format!("t{}", max + 1), "ids are never reused");
    h.until("the closed one's exit", &ids[0], |h| {
        h.exit_code(&ids[0]).is_some()
    })
    .await;
    let closed = h
        .terminals
        .input(params(
            method::TerminalInput,
            json!({ "terminalId": ids[0], "data": "" }),
        ))
        .await
        .unwrap_err();
    assert!(closed.message.contains("no terminal t1"), "{closed}");
}

/// The processes (not zombies) whose session is `sid`, from /proc.
fn session_members(sid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<libc::pid_t>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name's closing parenthesis: state, ppid, pgrp, session.
        let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() > 3 && fields[0] != "Z" && fields[3] == sid.to_string() {
            members.push(pid);
        }
    }
    members
}

#[tokio::test]
async fn close_all_leaves_no_shell_behind() {
    let mut h = Harness::new("/bin/bash", &[(".zshrc", "")]);
    let bash = h.open_id().await;
    h.terminals.environment = h.terminals.environment.clone().set("SHELL", "/usr/bin/zsh");
    let zsh = h.open_id().await;
    for id in [&bash, &zsh] {
        h.until("a prompt", id, |h| h.count(id, "B") >= 1).await;
        // A job in the foreground, and one in the background.
        h.send(id, "sleep 1000 & sleep 1001\r").await;
    }
    let pids: Vec<_> = [&bash, &zsh]
        .iter()
        .map(|id| h.terminals.session(id).unwrap().pid())
        .collect();
    let deadline = tokio::time::Instant::now() + WAIT;
    while pids.iter().any(|&pid| session_members(pid).len() < 3) {
        assert!(tokio::time::Instant::now() < deadline, "the sleeps did not start");
        h.until("more output", &bash, |_| true).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h.terminals.close_all();
    assert_eq!(h.terminals.open_count(), 0);
    for id in [&bash, &zsh] {
        h.until("the exit", id, |h| h.exit_code(id).is_some()).await;
    }
    for pid in pids {
        let gone = unsafe { libc::kill(pid, 0) } != 0;
        assert!(gone, "the shell {pid} is still there");
        nothing_left_in(pid).await;
    }
}

/// A shell that ignores the hang-up is killed after the grace, and the job it ran in a group of its
/// own (which such a shell never hangs up) goes with it.
#[tokio::test]
async fn a_shell_deaf_to_the_hang_up_takes_its_jobs_along() {
    let mut h = Harness::new("/bin/bash", &[]);
    let id = h.open_id().await;
    h.until("a prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "trap '' HUP; sleep 1002 &\r").await;
    let pid = h.terminals.session(&id).unwrap().pid();
    let deadline = tokio::time::Instant::now() + WAIT;
    while session_members(pid).len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "the sleep did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h.terminals.close_all();
    h.until("the exit", &id, |h| h.exit_code(&id).is_some()).await;
    assert_eq!(h.exit_code(&id), Some(json!(128 + libc::SIGKILL)));
    nothing_left_in(pid).await;
}

async fn nothing_left_in(sid: libc::pid_t) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !session_members(sid).is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "left behind: {:?}",
            session_members(sid)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_flood_is_read_only_as_fast_as_the_link_sends() {
    let mut h = Harness::new("/bin/bash", &[]);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    let session = h.terminals.session(&id).unwrap();
    h.send(&id, "yes\r").await;
    // Nobody drains the queue: reading stops once the bounded lanes are full.
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut last = session.bytes_read();
    let mut steady = 0;
    while steady < 5 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the reader never stopped: {last} bytes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = session.bytes_read();
        steady = if now == last { steady + 1 } else { 0 };
        last = now;
    }
    // The bulk lane, the frame in hand and one carried over, the read queue, the chunk in hand.
    let bound = (4 + 2) * session::FRAME_MAX + (session::READ_QUEUE + 1) * session::READ_CHUNK;
    assert!(
        last > 0 && last as usize <= bound,
        "{last} bytes read while nobody sent (bound {bound})"
    );

    h.send(&id, "\x03").await;
    let ds = h.count(&id, "D;130");
    h.until("a prompt after Ctrl-C", &id, |h| {
        let marks = h.prompt_marks(&id);
        h.count(&id, "D;130") > ds && marks.last().map(String::as_str) == Some("B")
    })
    .await;
}

#[test]
fn sizes_clamp_to_the_decided_ranges() {
    let range = decisions::Decisions::built_in().terminal.cols;
    let cases = [
        (80.0, 80),
        (5.0, range[0]),
        (1e9, range[1]),
        (-3.0, range[0]),
        (f64::NAN, range[0]),
        (99.6, 100),
    ];
    for (value, want) in cases {
        assert_eq!(clamp(value, range), want, "{value}");
    }
}

#[tokio::test]
async fn bad_params_are_refused_with_a_reason() {
    let h = Harness::new("/bin/sh", &[]);
    let not_base64 = h
        .terminals
        .input(params(
            method::TerminalInput,
            json!({ "terminalId": "t1", "data": "%%%" }),
        ))
        .await
        .unwrap_err();
    assert!(not_base64.message.contains("base64"), "{not_base64}");
    let missing = request::read(method::TerminalClose, json!({})).unwrap_err();
    assert_eq!(missing.code, rpc::INVALID_PARAMS);
    let unknown = h
        .terminals
        .close(params(method::TerminalClose, json!({ "terminalId": "t7" })))
        .await
        .unwrap_err();
    assert!(unknown.message.contains("t7"), "{unknown}");
}

#[test]
fn the_handlers_can_run_as_tasks() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let (out, _queue) = channel();
    let terminals = Terminals::new(
        out,
        crate::terminal::board::Board::default(),
        &decisions::Decisions::built_in().terminal,
    );
    send_sync(&terminals);
    let settings = Settings::default();
    send(&terminals.open(params(method::TerminalOpen, json!({})), &settings));
    let id = json!({ "terminalId": "t1", "data": "", "cols": 80, "rows": 24 });
    send(&terminals.input(params(method::TerminalInput, id.clone())));
    send(&terminals.resize(params(method::TerminalResize, id.clone())));
    send(&terminals.close(params(method::TerminalClose, id)));
}
