//! A tool's judgement as a unit test: each judged tool's `prepare` on real folders, with the
//! mode, the chat's grants and the bash rules it is judged against, and no engine or link.

use serde_json::json;

use super::bash::Bash;
use super::file::FileCall;
use super::judged::{Judged, Judging};
use crate::engine::grants::{Grant, Grants};
use crate::engine::model::ToolCall;
use crate::policy::Mode;
use crate::policy::bash_judge::Decision;
use crate::settings::BashRules;
use crate::tools::FileTool;
use crate::tools::test_support::Fixture;

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: name.into(),
        arguments: arguments.to_string(),
    }
}

/// Real folders and the person's bash rules (none), to judge calls against.
struct Place {
    fixture: Fixture,
    rules: BashRules,
}

impl Place {
    fn new() -> Place {
        Place {
            fixture: Fixture::new(),
            rules: BashRules::default(),
        }
    }

    /// What a call is judged against here, in `mode` with `grants`.
    fn judging<'a>(&'a self, mode: Mode, grants: &'a Grants) -> Judging<'a> {
        Judging {
            ctx: &self.fixture.ctx,
            mode,
            grants,
            rules: &self.rules,
            project_rules: None,
        }
    }
}

/// How `tool` judges `arguments` in `mode` with `grants`: the decision, and whether a grant is
/// what allowed it.
fn judged<T: Judged>(
    tool: &T,
    name: &str,
    arguments: serde_json::Value,
    mode: Mode,
    grants: &Grants,
) -> (Decision, bool) {
    let place = Place::new();
    let prepared = tool
        .prepare(&call(name, arguments), &place.judging(mode, grants))
        .unwrap_or_else(|why| panic!("{name} not prepared: {why}"));
    (prepared.judgement.decision, prepared.granted)
}

#[test]
fn file_tools_are_judged_by_the_mode_and_the_place() {
    let none = Grants::default();
    let mut writes = Grants::default();
    writes.give(Grant::Writes);
    let read = FileCall(FileTool::Read);
    let write = FileCall(FileTool::Write);
    let inside = json!({ "path": "notes.txt", "content": "x" });
    let outside = json!({ "path": "/etc/hostname", "content": "x" });
    let cases = [
        (
            &read,
            "read",
            json!({ "path": "notes.txt" }),
            Mode::Plan,
            &none,
            (Decision::Allow, false),
        ),
        (
            &read,
            "read",
            json!({ "path": "/etc/hostname" }),
            Mode::Auto,
            &none,
            (Decision::Deny, false),
        ),
        (
            &write,
            "write",
            inside.clone(),
            Mode::Plan,
            &none,
            (Decision::Deny, false),
        ),
        (
            &write,
            "write",
            inside.clone(),
            Mode::Manual,
            &none,
            (Decision::Ask, false),
        ),
        // "Allow for this chat" covers every write in the folder, and nothing a mode denies.
        (
            &write,
            "write",
            inside.clone(),
            Mode::Manual,
            &writes,
            (Decision::Allow, true),
        ),
        (
            &write,
            "write",
            inside.clone(),
            Mode::Plan,
            &writes,
            (Decision::Deny, false),
        ),
        (
            &write,
            "write",
            inside,
            Mode::Edit,
            &none,
            (Decision::Allow, false),
        ),
        (
            &write,
            "write",
            outside.clone(),
            Mode::Auto,
            &none,
            (Decision::Deny, false),
        ),
        (
            &write,
            "write",
            outside,
            Mode::Manual,
            &writes,
            (Decision::Deny, false),
        ),
    ];
    for (tool, name, arguments, mode, grants, want) in cases {
        assert_eq!(
            judged(tool, name, arguments.clone(), mode, grants),
            want,
            "{name} {arguments} in {mode}"
        );
    }
}

#[test]
fn a_command_grant_allows_what_it_names_only() {
    let mut grants = Grants::default();
    grants.give(Grant::Command {
        pattern: "cargo test *".into(),
    });
    let none = Grants::default();
    let cases = [
        ("cargo test --all", Mode::Manual, &none, (Decision::Ask, false)),
        ("cargo test --all", Mode::Manual, &grants, (Decision::Allow, true)),
        ("cargo build", Mode::Manual, &grants, (Decision::Ask, false)),
    ];
    for (command, mode, grants, want) in cases {
        let got = judged(&Bash, "bash", json!({ "command": command }), mode, grants);
        assert_eq!(got, want, "{command} in {mode}");
    }
    // A grant never lets a command do what the mode refuses outright.
    let plan = judged(
        &Bash,
        "bash",
        json!({ "command": "cargo test --all" }),
        Mode::Plan,
        &grants,
    );
    assert_ne!(plan.0, Decision::Allow);
}

#[test]
fn a_call_that_cannot_be_read_is_a_sentence_for_the_model() {
    let place = Place::new();
    let none = Grants::default();
    let at = place.judging(Mode::Auto, &none);
    let refused = |tool: &dyn Fn(&ToolCall) -> Option<String>, arguments: serde_json::Value| {
        tool(&call("x", arguments))
    };
    let bash = |c: &ToolCall| Bash.prepare(c, &at).err();
    let write = |c: &ToolCall| FileCall(FileTool::Write).prepare(c, &at).err();
    assert_eq!(
        refused(&bash, json!({})).as_deref(),
        Some("bash needs `command` (a string).")
    );
    assert_eq!(
        refused(&bash, json!({ "command": "  " })).as_deref(),
        Some("bash needs `command` (a string).")
    );
    assert_eq!(
        refused(&write, json!({ "path": "a.txt" })).as_deref(),
        Some("write needs `content` (a string).")
    );
    assert_eq!(
        refused(&write, json!({ "path": 3, "content": "" })).as_deref(),
        Some("write's `path` must be a string, not a number.")
    );
}

#[test]
fn a_command_is_timed_as_asked_within_the_decisions() {
    let place = Place::new();
    let none = Grants::default();
    let at = place.judging(Mode::Auto, &none);
    let timeout = |arguments: serde_json::Value| {
        Bash.prepare(&call("bash", arguments), &at)
            .map(|p| p.work.timeout().as_secs())
            .ok()
    };
    assert_eq!(timeout(json!({ "command": "ls" })), Some(120));
    assert_eq!(timeout(json!({ "command": "ls", "timeout_s": "30" })), Some(30));
    assert_eq!(timeout(json!({ "command": "ls", "timeout_s": 99999 })), Some(600));
    assert_eq!(timeout(json!({ "command": "ls", "timeout_s": -4 })), Some(120));
}
