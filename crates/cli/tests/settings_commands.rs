//! The settings commands end to end: `lembas remote …`, `lembas trust|untrust`, `lembas service
//! scheduled`. Each is one change through the one write path; comments and unknown keys survive;
//! a writer killed midway leaves a valid file; a running service picks changes up by itself.

mod common;

use common::*;
use lembas_peer::{Peer, PeerConfig};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(10);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    out
}

fn json_of(out: &Output) -> Value {
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "one line: {stdout:?}");
    serde_json::from_str(&stdout).unwrap()
}

fn folders(home: &Home) -> (PathBuf, PathBuf, PathBuf) {
    let work = home.path().join("work");
    for d in ["a/p", "b", "c"] {
        std::fs::create_dir_all(work.join(d)).unwrap();
    }
    (work.join("a"), work.join("b"), work.join("c"))
}

fn hand_written(a: &Path) -> String {
    let a = a.display();
    format!(
        "# My lembas config, written by hand.\n\
         favourite_colour: green   # not a key lembas knows\n\
         \n\
         remote:\n  \
           # remote work on this laptop\n  \
           enabled: false   # off until I say\n  \
           roots:\n    \
             - {a}   # the first root\n  \
           max_mode: edit  # widest\n  \
           require_trust: true\n  \
           terminal: false\n  \
           scheduled: false\n  \
           keep_awake: on_power\n  \
           approval_timeout: 300\n  \
           future_option: [1, 2]   # unknown, kept\n\
         trusted:\n  \
           - {a}/p\n\
         # trailing comment\n"
    )
}

#[test]
fn every_command_keeps_comments_and_unknown_keys_byte_for_byte() {
    let home = Home::new();
    let (a, b, c) = folders(&home);
    let original = hand_written(&a);
    home.write_config(&original);
    let (a_s, b_s, c_s) = (
        a.display().to_string(),
        b.display().to_string(),
        c.display().to_string(),
    );
    // Lines no command touches, in their order, and the comments of lines whose value changes.
    let untouched = [
        "# My lembas config, written by hand.".to_string(),
        "favourite_colour: green   # not a key lembas knows".to_string(),
        "  # remote work on this laptop".to_string(),
        format!("    - {a_s}   # the first root"),
        "  approval_timeout: 300".to_string(),
        "  future_option: [1, 2]   # unknown, kept".to_string(),
        format!("  - {a_s}/p"),
        "# trailing comment".to_string(),
    ];
    let kept: Vec<String> = original
        .lines()
        .filter(|l| untouched.iter().any(|u| u == l))
        .map(str::to_string)
        .collect();
    assert_eq!(kept.len(), untouched.len());
    let comments = ["# off until I say", "# widest"];

    let b_arg = b_s.as_str();
    let c_arg = c_s.as_str();
    let forward: Vec<(Vec<&str>, Value)> = vec![
        (vec!["remote", "on"], json!({ "enabled": true })),
        (
            vec!["remote", "roots", "add", b_arg],
            json!({ "roots": [a_s, b_s] }),
        ),
        (vec!["remote", "max-mode", "auto"], json!({ "max_mode": "auto" })),
        (vec!["remote", "terminal", "on"], json!({ "terminal": true })),
        (vec!["remote", "trust", "off"], json!({ "require_trust": false })),
        (vec!["remote", "scheduled", "on"], json!({ "scheduled": true })),
        (vec!["service", "scheduled", "on"], json!({ "scheduled": true })),
        (
            vec!["remote", "keep-awake", "never"],
            json!({ "keep_awake": "never" }),
        ),
        (vec!["trust", c_arg], json!({})),
    ];
    let back: Vec<(Vec<&str>, Value)> = vec![
        (vec!["untrust", c_arg], json!({})),
        (
            vec!["remote", "keep-awake", "on-power"],
            json!({ "keep_awake": "on_power" }),
        ),
        (vec!["service", "scheduled", "off"], json!({ "scheduled": false })),
        (vec!["remote", "trust", "on"], json!({ "require_trust": true })),
        (vec!["remote", "terminal", "off"], json!({ "terminal": false })),
        (vec!["remote", "max-mode", "edit"], json!({ "max_mode": "edit" })),
        (
            vec!["remote", "roots", "remove", b_arg],
            json!({ "roots": [a_s] }),
        ),
        (vec!["remote", "off"], json!({ "enabled": false })),
    ];
    for (args, expect) in forward.iter().chain(back.iter()) {
        let mut with_json = args.clone();
        with_json.push("--json");
        let state = json_of(&ok(home.run(&with_json)));
        for (key, value) in expect.as_object().unwrap() {
            assert_eq!(&state["remote"][key], value, "{args:?}: {state}");
        }
        assert_eq!(
            state,
            json_of(&ok(home.run(&["remote", "list", "--json"]))),
            "{args:?}"
        );
        let now = std::fs::read_to_string(home.config()).unwrap();
        lembas_device::settings::load(&home.dirs()).unwrap();
        let mut rest = now.as_str();
        for line in &kept {
            let at = rest
                .find(&format!("{line}\n"))
                .unwrap_or_else(|| panic!("after {args:?}, {line:?} is gone or moved:\n{now}"));
            rest = &rest[at + line.len()..];
        }
        for comment in comments {
            assert!(
                now.contains(comment),
                "after {args:?}, {comment:?} is gone:\n{now}"
            );
        }
        if args[0] == "trust" {
            assert_eq!(state["trusted"], json!([format!("{a_s}/p"), c_s]));
        }
    }
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), original);
}

#[test]
fn the_listing_says_everything_and_changes_say_what_they_did() {
    let home = Home::new();
    let (a, _, _) = folders(&home);
    let state = json_of(&ok(home.run(&["remote", "list", "--json"])));
    assert_eq!(
        state,
        json!({
            "remote": {
                "enabled": false, "roots": [], "max_mode": "edit", "require_trust": true,
                "terminal": false, "terminal_integration": true, "scheduled": false,
                "approval_timeout": 300, "keep_awake": "on_power",
            },
            "trusted": [],
        })
    );
    assert!(!home.config().exists(), "listing writes nothing");
    // A relative path is taken from the working folder and stored resolved and absolute.
    let out = ok(home
        .command(&["remote", "roots", "add", "a/../a"])
        .current_dir(home.path().join("work"))
        .output()
        .unwrap());
    let said = text(&out.stdout);
    assert!(
        said.starts_with(&format!("Remote work may use {}.\n", a.display())),
        "{said}"
    );
    assert!(
        said.contains(&format!("Folders remote work may use:\n  {}\n", a.display())),
        "{said}"
    );
    let again = text(&ok(home.run(&["service", "scheduled", "off"])).stdout);
    assert!(
        again.starts_with("Accept scheduled work is off. (It already was.)"),
        "{again}"
    );
    let on = text(&ok(home.run(&["service", "scheduled", "on"])).stdout);
    assert!(on.contains("Accept scheduled work: on"), "{on}");
    assert!(
        on.contains("Kept awake while remote work runs: on mains power"),
        "{on}"
    );
    let always = text(&ok(home.run(&["remote", "keep-awake", "always"])).stdout);
    assert!(
        always.starts_with("This computer is kept awake while remote work runs, on battery too."),
        "{always}"
    );
    assert!(
        always.contains("Kept awake while remote work runs: always"),
        "{always}"
    );
    assert!(
        on.contains("Scheduled work also needs remote work on: lembas remote on"),
        "{on}"
    );
}

#[test]
fn refusals_say_why_and_write_nothing() {
    let home = Home::new();
    let (a, _, _) = folders(&home);
    let original = hand_written(&a);
    home.write_config(&original);
    let missing = home.path().join("work/missing");
    let missing = missing.to_str().unwrap();
    let file = home.path().join("work/file.txt");
    std::fs::write(&file, "x").unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["remote", "roots", "add", missing],
            format!("{missing} does not exist; give an existing folder to add as a remote root."),
        ),
        (
            vec!["trust", file.to_str().unwrap()],
            format!("{} is not a folder", file.display()),
        ),
        (
            vec!["untrust", missing],
            format!(
                "{missing} is not listed in trusted; the list holds: {}/p.",
                a.display()
            ),
        ),
        (
            vec!["remote", "roots", "remove", missing],
            format!(
                "{missing} is not listed in remote.roots; the list holds: {}.",
                a.display()
            ),
        ),
    ];
    for (args, sentence) in cases {
        let out = home.run(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            text(&out.stderr).contains(&sentence),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "");
        let mut with_json = args.clone();
        with_json.push("--json");
        let line = json_of(&home.run(&with_json));
        assert_eq!(line["event"], "error");
        assert!(line["message"].as_str().unwrap().contains(&sentence));
        assert_eq!(std::fs::read_to_string(home.config()).unwrap(), original);
    }
    // A mode that is not one is clap's refusal, naming the four.
    let out = home.run(&["remote", "max-mode", "everything"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("plan, manual, edit, auto"),
        "{}",
        text(&out.stderr)
    );
    // A broken file is not written over: it says where, and nothing changes.
    home.write_config("remote: [oops\n");
    let out = home.run(&["remote", "on"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("Fix it by hand; nothing was changed."),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), "remote: [oops\n");
}

#[test]
fn a_writer_killed_midway_leaves_a_valid_file() {
    use std::os::unix::process::ExitStatusExt;
    let home = Home::new();
    let (a, b, _) = folders(&home);
    let original = hand_written(&a);
    home.write_config(&original);
    let b = b.display().to_string();
    let mut killed = 0;
    for round in 0..60u64 {
        let verb = if round % 2 == 0 { "add" } else { "remove" };
        let mut child = home.command(&["remote", "roots", verb, &b]).spawn().unwrap();
        // Spread the kills over the process's whole life: start-up, reading, writing, renaming.
        std::thread::sleep(Duration::from_micros(round * 150));
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        if child.wait().unwrap().signal() == Some(libc::SIGKILL) {
            killed += 1;
        }
        let now = std::fs::read_to_string(home.config()).unwrap();
        let settings = lembas_device::settings::load(&home.dirs())
            .unwrap_or_else(|e| panic!("round {round}: {e}\n{now}"));
        assert_eq!(settings.remote.roots.first(), Some(&a));
        assert!(now.starts_with("# My lembas config, written by hand.\n"), "{now}");
        assert!(now.ends_with("# trailing comment\n"), "{now}");
    }
    assert!(killed > 10, "only {killed} of 60 were killed");
    // The folder lock died with its holders: the next writer goes through at once and leaves no
    // temporary files behind.
    ok(home.run(&["remote", "roots", "add", &b]));
    ok(home.run(&["remote", "roots", "remove", &b]));
    assert_eq!(std::fs::read_to_string(home.config()).unwrap(), original);
    let names: Vec<String> = std::fs::read_dir(home.path().join(".config/lembas"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["config.yaml"], "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_service_picks_every_change_up() {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let (a, _, _) = folders(&home);
    home.config_for(&peer.url(), "# keep me\n");
    let _service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    assert_eq!(link.hello(WAIT).await.unwrap()["limits"]["scheduled"], false);

    let mut next = async |args: &[&str]| {
        ok(home.run(args));
        let closed = link.closed(WAIT).await.unwrap();
        assert_eq!(closed.map(|c| c.0), Some(1000), "{args:?}");
        link = peer.next_link(WAIT).await.unwrap();
        link.hello(WAIT).await.unwrap()["limits"].clone()
    };
    assert_eq!(next(&["remote", "scheduled", "on"]).await["scheduled"], true);
    // Roots are announced only while remote work is on: adding one while it is off changes no
    // limit, and turning it on does.
    let a_s = a.display().to_string();
    ok(home.run(&["remote", "roots", "add", &a_s]));
    assert_eq!(next(&["remote", "on"]).await["roots"], json!([a_s]));
    assert_eq!(next(&["remote", "max-mode", "plan"]).await["max_mode"], "plan");
    assert_eq!(next(&["remote", "trust", "off"]).await["require_trust"], false);
    assert_eq!(next(&["service", "scheduled", "off"]).await["scheduled"], false);
    let config = std::fs::read_to_string(home.config()).unwrap();
    assert!(config.contains("# keep me\n"), "{config}");
}
