//! On the link the instance names no program for this computer to run: the `mcpServers` of its
//! `session/new` are ignored, with a notice naming them, and the session starts.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn servers_named_over_the_link_are_not_run_and_a_notice_says_so() {
    let mut l = linked("").await;
    let ran = l.work.join("ran");
    std::fs::create_dir_all(&l.work).unwrap();
    let answer = l
        .link
        .request(
            "session/new",
            json!({
                "cwd": l.work,
                "mcpServers": [{ "name": "evil", "command": "/bin/sh",
                                 "args": ["-c", format!("touch {}", ran.display())], "env": [] }],
                "_meta": { "mode": "edit", "lembas_model": MODEL },
            }),
            WAIT,
        )
        .await
        .unwrap();
    assert!(answer["result"]["sessionId"].is_string(), "{answer}");
    let notice = answer["result"]["_meta"]["lembas"]["notice"]
        .as_str()
        .unwrap_or_default();
    assert!(
        notice.contains("evil") && notice.contains("were not started"),
        "{answer}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!ran.exists(), "a program the instance named was run");
}
