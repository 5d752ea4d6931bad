//! Planning, judging and running as the engine does it: names, arguments, kinds, resolved paths.

use serde_json::json;

use super::test_support::{Fixture, file_tool};
use super::*;
use crate::policy::bash_judge::Decision;
#[cfg(unix)]
use crate::policy::tools::{Place, place_of};

#[test]
fn arguments_that_are_not_a_json_object_name_the_tool() {
    let f = Fixture::new();
    let err = |name: &str, text: &str| {
        plan(file_tool(name), text, &f.ctx)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let broken = err("edit", r#"{"path": "a.txt", "old_string": "#);
    assert!(
        broken.starts_with("The arguments of edit are not valid JSON: "),
        "{broken}"
    );
    assert!(matches!(
        plan(FileTool::Edit, "{", &f.ctx),
        Err(ToolError::BadArguments(_))
    ));
    assert_eq!(
        err("read", "[1]"),
        "The arguments of read must be a JSON object, not an array."
    );
    assert_eq!(
        err("grep", "\"x\""),
        "The arguments of grep must be a JSON object, not a string."
    );
}

#[test]
fn each_tool_plans_its_kind_access_and_title() {
    let f = Fixture::new();
    f.file("src/main.rs", "fn main() {}\n");
    let cases = [
        (
            "read",
            json!({ "path": "src/main.rs" }),
            ToolKind::Read,
            Access::Read,
            "Read src/main.rs",
        ),
        (
            "ls",
            json!({ "path": "src" }),
            ToolKind::Read,
            Access::Read,
            "List src",
        ),
        (
            "glob",
            json!({ "pattern": "**/*.rs" }),
            ToolKind::Search,
            Access::Read,
            "Find \"**/*.rs\" in .",
        ),
        (
            "grep",
            json!({ "pattern": "fn main", "path": "src" }),
            ToolKind::Search,
            Access::Read,
            "Search \"fn main\" in src",
        ),
        (
            "write",
            json!({ "path": "new/a.md", "content": "" }),
            ToolKind::Edit,
            Access::Write,
            "Write new/a.md",
        ),
        (
            "edit",
            json!({ "path": "Cargo.toml", "old_string": "a", "new_string": "b" }),
            ToolKind::Edit,
            Access::Write,
            "Edit Cargo.toml",
        ),
    ];
    for (name, args, kind, access, title) in cases {
        let (planned, parsed) = plan(file_tool(name), &args.to_string(), &f.ctx).expect("plans");
        assert_eq!(planned.name.as_str(), name);
        assert_eq!((planned.kind, planned.access), (kind, access), "{name}");
        assert_eq!(planned.title, title);
        assert_eq!(parsed, args, "the parsed arguments come back");
    }
}

#[test]
fn kinds_serialize_as_acp_tool_kinds() {
    let kinds = [
        ToolKind::Read,
        ToolKind::Edit,
        ToolKind::Search,
        ToolKind::Execute,
        ToolKind::Think,
    ];
    let text = serde_json::to_string(&kinds).unwrap_or_default();
    assert_eq!(text, r#"["read","edit","search","execute","think"]"#);
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_roots_is_judged_where_it_points() {
    let f = Fixture::new();
    let secret = f.outside_file("secret.txt", "s3cret");
    f.symlink(&secret, "innocent.txt");
    let planned = f.planned("read", json!({ "path": "innocent.txt" }));
    assert_eq!(planned.path, secret);
    let ctx = &f.ctx;
    assert_eq!(
        place_of(&planned.path, &ctx.project, &ctx.roots, &ctx.protected),
        Place::Outside
    );
    let judged = judge(&planned, Mode::Auto, ctx);
    assert_eq!(judged.decision, Decision::Deny);
    assert!(judged.reason.contains("outside the folders"), "{}", judged.reason);

    // A new file under a symlinked folder outside is outside too.
    f.symlink(&f.outside, "out");
    let planned = f.planned("write", json!({ "path": "out/new.txt", "content": "x" }));
    assert_eq!(planned.path, f.outside.join("new.txt"));
    assert_eq!(judge(&planned, Mode::Auto, ctx).decision, Decision::Deny);
}

#[test]
fn judging_follows_the_modes() {
    let f = Fixture::new();
    let write = f.planned("write", json!({ "path": "a.txt", "content": "x" }));
    let judged = |mode| judge(&write, mode, &f.ctx).decision;
    assert_eq!(
        [Mode::Plan, Mode::Manual, Mode::Edit, Mode::Auto].map(judged),
        [Decision::Deny, Decision::Ask, Decision::Allow, Decision::Allow]
    );
    let sibling = f.planned("write", json!({ "path": "../sibling/a.txt", "content": "x" }));
    assert_eq!(judge(&sibling, Mode::Edit, &f.ctx).decision, Decision::Ask);
    let env = f.planned("read", json!({ "path": ".env" }));
    let judged = judge(&env, Mode::Auto, &f.ctx);
    assert_eq!(judged.decision, Decision::Deny);
    assert!(
        judged.reason.contains("protected path (an environment file)"),
        "{}",
        judged.reason
    );
}

#[test]
fn run_never_touches_a_protected_path_even_if_asked_to() {
    let f = Fixture::new();
    f.file(".git/config", "[core]\n");
    f.file(".env", "TOKEN=1\n");
    for (name, args) in [
        ("read", json!({ "path": ".git/config" })),
        ("ls", json!({ "path": ".git" })),
        ("grep", json!({ "pattern": "TOKEN", "path": ".env" })),
        ("write", json!({ "path": ".env", "content": "TOKEN=2\n" })),
        (
            "edit",
            json!({ "path": ".env", "old_string": "1", "new_string": "2" }),
        ),
    ] {
        let output = f.call(name, args);
        assert!(output.is_error, "{name}: {}", output.text);
        assert!(
            output.text.contains("is a protected path"),
            "{name}: {}",
            output.text
        );
    }
    assert_eq!(f.read(".env"), "TOKEN=1\n");
}

#[test]
fn run_checks_the_arguments_again() {
    let f = Fixture::new();
    let planned = f.planned("read", json!({ "path": "a.txt" }));
    let output = run(&planned, &json!({ "limit": 3 }), &f.ctx);
    assert!(output.is_error);
    assert_eq!(output.text, "read needs `path` (a string).");
}
