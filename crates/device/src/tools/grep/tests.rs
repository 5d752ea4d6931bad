use std::path::PathBuf;

use serde_json::json;

use super::Found;
use crate::tools::test_support::Fixture;

#[test]
fn lines_are_path_line_text_sorted_by_path_then_line() {
    let f = Fixture::new();
    f.file("src/b.rs", "fn b() {}\nfn main() {}\n");
    f.file("src/a.rs", "// main\nfn main() {\n}\nfn other() {}\n");
    f.file("README.md", "no match here\n");
    let text = f.ok("grep", json!({ "pattern": "fn main" }));
    assert_eq!(text, "src/a.rs:2:fn main() {\nsrc/b.rs:2:fn main() {}");
    let text = f.ok("grep", json!({ "pattern": "main", "path": "src" }));
    assert_eq!(
        text,
        "src/a.rs:1:// main\nsrc/a.rs:2:fn main() {\nsrc/b.rs:2:fn main() {}"
    );
}

#[test]
fn ignore_case_and_regex_syntax() {
    let f = Fixture::new();
    f.file("a.txt", "Hello\nhello\nHELLO world\nhelp\n");
    assert_eq!(f.ok("grep", json!({ "pattern": "hello" })), "a.txt:2:hello");
    assert_eq!(
        f.ok("grep", json!({ "pattern": "^hel+o", "ignore_case": true })),
        "a.txt:1:Hello\na.txt:2:hello\na.txt:3:HELLO world"
    );
    assert_eq!(
        f.ok("grep", json!({ "pattern": "nothing" })),
        "No matches for \"nothing\" in the session's folder."
    );
}

#[test]
fn the_glob_matches_names_without_a_slash_and_paths_with_one() {
    let f = Fixture::new();
    f.file("src/lib.rs", "needle\n");
    f.file("src/deep/mod.rs", "needle\n");
    f.file("src/app.ts", "needle\n");
    f.file("tests/t.rs", "needle\n");
    assert_eq!(
        f.ok("grep", json!({ "pattern": "needle", "glob": "*.rs" })),
        "src/deep/mod.rs:1:needle\nsrc/lib.rs:1:needle\ntests/t.rs:1:needle"
    );
    assert_eq!(
        f.ok("grep", json!({ "pattern": "needle", "glob": "src/**/*.rs" })),
        "src/deep/mod.rs:1:needle\nsrc/lib.rs:1:needle"
    );
    let planned = f.planned(
        "grep",
        json!({ "pattern": "needle", "path": "src", "glob": "*.rs" }),
    );
    assert_eq!(planned.title, "Search \"needle\" in src (*.rs)");
}

#[test]
fn gitignored_protected_and_binary_files_are_skipped() {
    let f = Fixture::new();
    f.file(".gitignore", "target/\n*.log\n");
    f.file("target/out.txt", "secret needle\n");
    f.file("run.log", "needle\n");
    f.file(".env", "needle=1\n");
    f.file(".git/config", "needle\n");
    f.file("keys/server.key", "needle\n");
    f.bytes("blob.bin", b"needle\n\0\x01\x02");
    f.file(".hidden.txt", "needle\n");
    f.file("src/ok.txt", "needle\n");
    assert_eq!(
        f.ok("grep", json!({ "pattern": "needle" })),
        ".hidden.txt:1:needle\nsrc/ok.txt:1:needle"
    );
}

#[test]
fn a_file_as_the_path_is_searched_alone() {
    let f = Fixture::new();
    f.file("a.txt", "one\ntwo\n");
    f.file("b.txt", "two\n");
    assert_eq!(
        f.ok("grep", json!({ "pattern": "two", "path": "a.txt" })),
        "a.txt:2:two"
    );
    assert_eq!(
        f.err("grep", json!({ "pattern": "two", "path": "gone" })),
        "gone does not exist."
    );
}

#[test]
fn at_most_the_first_lines_in_path_order_with_a_line_for_the_rest() {
    let f = Fixture::new();
    // 30 files of 50 matching lines: 1500 matches, of which the first 1000 in path order are
    // files f00..f19 whole.
    for file in 0..30 {
        let text: String = (0..50).map(|i| format!("match {i}\n")).collect();
        f.file(&format!("many/f{file:02}.txt"), &text);
    }
    let text = f.ok("grep", json!({ "pattern": "match" }));
    let (listed, rest) = text.split_once("\n\n").expect("a line saying more were left out");
    let want: Vec<String> = (0..20)
        .flat_map(|file| (1..=50).map(move |line| format!("many/f{file:02}.txt:{line}:match {}", line - 1)))
        .collect();
    assert_eq!(listed.lines().collect::<Vec<_>>(), want);
    assert_eq!(
        rest,
        "(500 more matching lines left out: 1000 of 1500 shown. Narrow the pattern, the path or the glob.)"
    );
    // The same every time, whatever order the threads found the files in.
    assert_eq!(f.ok("grep", json!({ "pattern": "match" })), text);
}

#[test]
fn found_keeps_only_what_can_be_shown_whatever_the_order() {
    let lines = |n: u64| (1..=n).map(|i| (i, String::new())).collect::<Vec<_>>();
    let mut found = Found::default();
    found.add(PathBuf::from("/p/c"), lines(3), 3, 4);
    found.add(PathBuf::from("/p/d"), lines(2), 2, 4);
    // c and d hold 5 >= 4: nothing after d is needed.
    found.add(PathBuf::from("/p/e"), lines(1), 1, 4);
    assert_eq!(found.files.len(), 2);
    // a sorts first: with a and c (4 lines), d is no longer needed.
    found.add(PathBuf::from("/p/a"), lines(1), 1, 4);
    assert_eq!(
        found.files.keys().collect::<Vec<_>>(),
        [&PathBuf::from("/p/a"), &PathBuf::from("/p/c")]
    );
    assert_eq!((found.kept, found.total), (4, 7));
}

#[test]
fn long_lines_are_cut() {
    let f = Fixture::new();
    let long = format!("needle {}", "é".repeat(1000));
    f.file("min.js", &long);
    let text = f.ok("grep", json!({ "pattern": "needle" }));
    let shown = text.strip_prefix("min.js:1:").expect("the path and line");
    assert_eq!(shown.chars().count(), 501);
    assert!(shown.ends_with('…'));
}

#[test]
fn a_bad_regex_is_bad_arguments() {
    let f = Fixture::new();
    let err = crate::tools::plan(crate::tools::FileTool::Grep, r#"{"pattern":"(unclosed"}"#, &f.ctx)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.starts_with("grep's `pattern` is not a valid regular expression"),
        "{err}"
    );
}
