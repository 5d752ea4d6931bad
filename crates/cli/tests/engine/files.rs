//! Capability `files`: `@path` mentions in a prompt reach the model (and nothing outside the
//! project does), and `_lembas/files/search` answers from an index that leaves out what
//! `.gitignore` hides, with the session's recent files first and the spec's limits.

use super::*;

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The last user message of the model's last request.
fn last_user_message(l: &Linked) -> Value {
    let requests = l.model().requests();
    let last = requests.last().expect("the model was asked nothing");
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap()
}

async fn search(l: &mut Linked, params: Value) -> Value {
    l.link
        .request("_lembas/files/search", params, WAIT)
        .await
        .unwrap()
}

fn paths(answer: &Value) -> Vec<String> {
    answer["result"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files: {answer}"))
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mentioned_file_reaches_the_model_and_nothing_outside_does() {
    let mut l = linked("").await;
    let work = l.work.clone();
    write(&work, "my notes.md", "alpha\nbeta\n");
    let lines: String = (1..=30).map(|n| format!("row {n}\n")).collect();
    write(&work, "c.md", &lines);
    write(&work, "docs/guide.md", "");
    write(&work, ".env", "SECRET=env\n");
    // Outside the roots, reached by a symlink and by `..`.
    let outside = l.home.path().join("outside.txt");
    std::fs::write(&outside, "SECRET=outside\n").unwrap();
    std::os::unix::fs::symlink(&outside, work.join("link.txt")).unwrap();
    let session = l.new_session("edit").await;
    l.model().push(reply_text("read them"));
    let typed =
        "compare @my\\ notes.md with @c.md#2-3, see @docs/ and @link.txt @../outside.txt @.env mail a@b.c";
    let answer = l.prompt(&session, typed, "t1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let message = last_user_message(&l);
    // What was typed, then what the mentions attached.
    let content = message["content"].as_str().unwrap();
    let attached = content
        .strip_prefix(&format!("{typed}\n\n"))
        .unwrap_or_else(|| panic!("the typed text first: {content}"));
    assert_eq!(
        attached,
        "<file path=\"my notes.md\">\n     1\talpha\n     2\tbeta\n</file>\n\n\
         <file path=\"c.md\" lines=\"2-3\">\n     2\trow 2\n     3\trow 3\n</file>\n\n\
         <folder path=\"docs/\">\nguide.md\n</folder>"
    );
    assert!(!attached.contains("SECRET"), "{attached}");
    // The history and the prompt event show the prompt as typed.
    let history = l
        .link
        .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(history["result"]["turns"][0]["text"], typed, "{history}");
    // A prompt without a mention goes to the model as plain text, as before.
    l.model().push(reply_text("ok"));
    l.prompt(&session, "no mention here", "t2").await;
    assert_eq!(last_user_message(&l)["content"], "no mention here");
}

#[tokio::test(flavor = "multi_thread")]
async fn search_leaves_out_ignored_files_and_offers_recent_ones_first() {
    let mut l = linked("").await;
    let work = l.work.clone();
    for path in [
        "README.md",
        "src/main.rs",
        "src/lib.rs",
        "build/out.js",
        "debug.log",
        ".env",
        "zeta/deep/notes.txt",
    ] {
        write(&work, path, "text\n");
    }
    write(&work, ".gitignore", "build/\n*.log\n");
    let all = search(&mut l, json!({ "cwd": work, "query": "", "limit": 50 })).await;
    assert_eq!(all["result"]["root"], work.display().to_string(), "{all}");
    assert_eq!(
        all["result"]["files"],
        json!([
            { "path": ".gitignore", "kind": "file" },
            { "path": "README.md", "kind": "file" },
            { "path": "src", "kind": "dir" },
            { "path": "zeta", "kind": "dir" },
            { "path": "src/lib.rs", "kind": "file" },
            { "path": "src/main.rs", "kind": "file" },
            { "path": "zeta/deep", "kind": "dir" },
            { "path": "zeta/deep/notes.txt", "kind": "file" },
        ])
    );
    let found = paths(&search(&mut l, json!({ "cwd": work, "query": "main" })).await);
    assert_eq!(
        found.first().map(String::as_str),
        Some("src/main.rs"),
        "{found:?}"
    );
    let found = paths(&search(&mut l, json!({ "cwd": work, "query": "out.js" })).await);
    assert!(found.is_empty(), "an ignored file was offered: {found:?}");

    // What the session used comes first: a mention, then a file the model read.
    let session = l.new_session("edit").await;
    l.model().push(ModelReply::tool_call(
        "call_r",
        "read",
        json!({ "path": "zeta/deep/notes.txt" }),
    ));
    l.model().push(reply_text("read"));
    l.prompt(&session, "look at @src/main.rs", "t1").await;
    let recent = search(&mut l, json!({ "sessionId": session, "query": "" })).await;
    let recent = paths(&recent);
    assert_eq!(
        recent[..3],
        ["zeta/deep/notes.txt", "src/main.rs", ".gitignore"],
        "{recent:?}"
    );
    // It nudges a fuzzy match too: `rs` matches lib.rs and main.rs alike, and lib.rs comes first
    // by name, but this session used main.rs.
    let nudged = paths(&search(&mut l, json!({ "sessionId": session, "query": "rs" })).await);
    assert_eq!(nudged[..2], ["src/main.rs", "src/lib.rs"], "{nudged:?}");
    // Another session in the same folder has used nothing yet.
    let other = l.new_session("edit").await;
    let plain = paths(&search(&mut l, json!({ "sessionId": other, "query": "rs" })).await);
    assert_eq!(plain[..2], ["src/lib.rs", "src/main.rs"], "{plain:?}");
    let fresh = paths(&search(&mut l, json!({ "sessionId": other, "query": "" })).await);
    assert_eq!(fresh[0], ".gitignore", "{fresh:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn search_limits_and_bad_params() {
    let mut l = linked("").await;
    let work = l.work.clone();
    for n in 0..60 {
        write(&work, &format!("f{n:02}.txt"), "");
    }
    let count = |answer: &Value| answer["result"]["files"].as_array().map_or(0, Vec::len);
    let default = search(&mut l, json!({ "cwd": work, "query": "" })).await;
    assert_eq!(count(&default), 20, "{default}");
    let fifty = search(&mut l, json!({ "cwd": work, "query": "f", "limit": 50 })).await;
    assert_eq!(count(&fifty), 50);
    let capped = search(&mut l, json!({ "cwd": work, "query": "txt", "limit": 500 })).await;
    assert_eq!(count(&capped), 50, "limit is at most 50");
    let three = search(&mut l, json!({ "cwd": work, "query": "", "limit": 3 })).await;
    assert_eq!(paths(&three), ["f00.txt", "f01.txt", "f02.txt"]);

    let outside = l.home.path();
    for (params, says) in [
        (json!({ "cwd": work }), "missing field `query`"),
        (json!({ "cwd": work, "query": 7 }), "query: invalid type"),
        (json!({ "query": "" }), "sessionId"),
        (json!({ "cwd": work, "query": "", "limit": 0 }), "limit must be"),
        (
            json!({ "cwd": work, "query": "", "limit": -1 }),
            "limit: invalid value",
        ),
        (
            json!({ "cwd": work, "query": "", "limit": "ten" }),
            "limit: invalid type",
        ),
        (json!({ "cwd": "work", "query": "" }), "not an absolute path"),
        (json!({ "cwd": outside, "query": "" }), "outside the folders"),
        (json!({ "cwd": 3, "query": "" }), "cwd: invalid type"),
        (
            json!({ "sessionId": "ses_00000000000000000000000000", "query": "" }),
            "There is no session",
        ),
        (
            json!({ "sessionId": true, "query": "" }),
            "sessionId: invalid type",
        ),
    ] {
        let answer = search(&mut l, params.clone()).await;
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32602, "{params}: {answer}");
        assert!(message.contains(says), "{params}: {message}");
    }
    // The link is still fine.
    let again = search(&mut l, json!({ "cwd": work, "query": "f59" })).await;
    assert_eq!(paths(&again)[0], "f59.txt");
}
