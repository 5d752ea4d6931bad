//! Accept scheduled work and `_lembas/monitor` end to end: the real `lembas service run` against
//! the reference peer, with the refusals word for word and the conformance hash cases.

mod common;

use base64::Engine;
use common::*;
use lembas_peer::{LinkHandle, Peer, PeerConfig};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

fn decisions() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../device/decisions.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn text(name: &str) -> String {
    decisions()["scheduled"]["texts"][name]
        .as_str()
        .unwrap()
        .to_string()
}

fn remote(work: &Path, extra: &str) -> String {
    let max_mode = if extra.contains("max_mode") {
        ""
    } else {
        "  max_mode: auto\n"
    };
    format!(
        "remote:\n  enabled: true\n  require_trust: false\n{max_mode}  roots:\n    - {}\n{extra}",
        work.display()
    )
}

struct Linked {
    peer: Peer,
    home: Home,
    service: Service,
    link: LinkHandle,
}

async fn linked(remote_block: impl Fn(&Path) -> String) -> Linked {
    store_token();
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await.unwrap();
    let home = Home::new();
    let work = home.path().join("work");
    home.config_for(&peer.url(), &remote_block(&work));
    let service = home.service();
    let mut link = peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    link.initialize(WAIT).await.unwrap();
    Linked {
        peer,
        home,
        service,
        link,
    }
}

async fn monitor(link: &mut LinkHandle, params: Value) -> Value {
    link.request("_lembas/monitor", params, WAIT).await.unwrap()
}

fn refusal(answer: &Value) -> (i64, String, String) {
    let e = &answer["error"];
    (
        e["code"].as_i64().unwrap_or(0),
        e["message"].as_str().unwrap_or("").into(),
        e["data"]["reason"].as_str().unwrap_or("").into(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn conformance_hash_cases_over_the_link() {
    let mut l = linked(|w| remote(w, "  scheduled: true\n")).await;
    let cases: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/conformance/monitor.json"
        ))
        .unwrap(),
    )
    .unwrap();
    for case in cases["cases"].as_array().unwrap() {
        let empty = tempfile::tempdir_in(l.home.path().join("work")).unwrap();
        let answer = monitor(
            &mut l.link,
            json!({ "cwd": empty.path(), "command": case["command"], "mode": "auto", "schedule_id": "s1", "run_id": "r1" }),
        )
        .await;
        let r = &answer["result"];
        assert_eq!(r["hash"], case["hash"], "{}: {answer}", case["name"]);
        assert_eq!(r["exit"], case["exit"], "{}", case["name"]);
        assert_eq!(r["timed_out"], false);
        if let Some(b64) = case["output_b64"].as_str() {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
            assert_eq!(r["bytes"], bytes.len(), "{}", case["name"]);
            assert_eq!(
                r["excerpt"],
                String::from_utf8_lossy(&bytes).as_ref(),
                "{}",
                case["name"]
            );
            assert_eq!(r["truncated"], false, "{}", case["name"]);
        } else {
            assert_eq!(r["bytes"], case["bytes"]);
            assert_eq!(r["truncated"], case["truncated"]);
        }
        let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 7, "{r}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_word_for_word_with_their_reasons() {
    let mut l = linked(|w| remote(w, "  scheduled: true\n  max_mode: edit\n")).await;
    let work = l.home.path().join("work");
    let cases = [
        (
            json!({ "cwd": work, "command": "ls", "mode": "plan" }),
            text("plan"),
            "plan",
        ),
        (
            json!({ "cwd": l.home.path(), "command": "ls" }),
            String::new(),
            "folder",
        ),
        (
            json!({ "cwd": work.join("missing"), "command": "ls" }),
            String::new(),
            "folder",
        ),
        (
            json!({ "cwd": work, "command": "npm install" }),
            text("monitor_asks"),
            "permission",
        ),
        (
            json!({ "cwd": work, "command": "npm install", "mode": "auto" }),
            text("monitor_asks"),
            "permission",
        ),
        (
            json!({ "cwd": work, "command": "sudo ls", "mode": "auto" }),
            text("monitor_denied"),
            "permission",
        ),
        (
            json!({ "cwd": work, "command": "echo $(sudo cat /etc/shadow)" }),
            text("monitor_denied"),
            "permission",
        ),
    ];
    for (params, message, reason) in cases {
        let (code, got, got_reason) = refusal(&monitor(&mut l.link, params.clone()).await);
        assert_eq!((code, got_reason.as_str()), (-32602, reason), "{params}");
        if message.is_empty() {
            assert!(
                got.contains("outside the folders") || got.contains("does not exist"),
                "{params}: {got}"
            );
        } else {
            assert_eq!(got, message, "{params}");
        }
    }
    let bad = monitor(&mut l.link, json!({ "cwd": work })).await;
    assert_eq!(bad["error"]["code"], -32602);
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("command"),
        "{bad}"
    );
    // Read-only commands run in edit mode.
    let ok = monitor(&mut l.link, json!({ "cwd": work, "command": "ls -la | wc -l" })).await;
    assert_eq!(ok["result"]["exit"], 0, "{ok}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_setting_is_judged_at_each_request_and_flips_without_restart() {
    let mut l = linked(|w| remote(w, "")).await;
    let work = l.home.path().join("work");
    let (code, message, reason) =
        refusal(&monitor(&mut l.link, json!({ "cwd": work, "command": "echo hi" })).await);
    assert_eq!(
        (code, message.as_str(), reason.as_str()),
        (-32602, text("off").as_str(), "scheduled_off")
    );
    // Accept scheduled work turned on by hand: the device redials with the new limits by itself.
    l.home.write_config(&format!(
        "{}  scheduled: true\n",
        std::fs::read_to_string(l.home.config()).unwrap()
    ));
    assert_eq!(l.link.closed(WAIT).await.unwrap().map(|c| c.0), Some(1000));
    let mut link = l.peer.next_link(WAIT).await.unwrap();
    assert_eq!(link.hello(WAIT).await.unwrap()["limits"]["scheduled"], true);
    let init = link.initialize(WAIT).await.unwrap();
    assert_eq!(init["_meta"]["lembas"]["limits"]["scheduled"], true);
    assert!(
        init["_meta"]["lembas"]["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("scheduled"))
    );
    let ok = monitor(&mut link, json!({ "cwd": work, "command": "echo hello" })).await;
    assert_eq!(
        ok["result"]["hash"], "sha256:0dfd9a02e216eb6994856ba1a1f8c5affbfaca7c7345226e3289e71d70ae8e77",
        "{ok}"
    );
    // Remote work off refuses scheduled work too, with the same text.
    let text_now = std::fs::read_to_string(l.home.config())
        .unwrap()
        .replace("enabled: true", "enabled: false");
    l.home.write_config(&text_now);
    assert!(link.closed(WAIT).await.is_ok());
    let mut link = l.peer.next_link(WAIT).await.unwrap();
    link.hello(WAIT).await.unwrap();
    let (_, message, reason) =
        refusal(&monitor(&mut link, json!({ "cwd": work, "command": "echo hi" })).await);
    assert_eq!(
        (message.as_str(), reason.as_str()),
        (text("off").as_str(), "scheduled_off")
    );
    drop(l.service);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timed_out_watch_leaves_nothing_and_the_link_waits_for_running_work() {
    let mut l = linked(|w| remote(w, "  scheduled: true\n")).await;
    let work = l.home.path().join("work");
    let marker = format!("sleep 97{}", std::process::id() % 1000);
    let command = format!("{marker} & {marker}");
    let answer = monitor(
        &mut l.link,
        json!({ "cwd": work, "command": command, "mode": "auto", "timeout_s": 1 }),
    )
    .await;
    let r = &answer["result"];
    assert_eq!(
        (r["timed_out"].clone(), r["hash"].clone(), r["exit"].clone()),
        (json!(true), Value::Null, Value::Null),
        "{answer}"
    );
    let alive = std::process::Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .unwrap();
    assert!(
        alive.stdout.is_empty(),
        "left behind: {}",
        String::from_utf8_lossy(&alive.stdout)
    );

    // A limit changes while a watch runs: the link stays up until the watch has answered.
    let id_params = json!({ "cwd": work, "command": "sleep 1; echo done", "mode": "auto" });
    l.link
        .send_raw(
            json!({ "jsonrpc": "2.0", "id": "w1", "method": "_lembas/monitor", "params": id_params })
                .to_string(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    l.home.write_config(
        &std::fs::read_to_string(l.home.config())
            .unwrap()
            .replace("max_mode: auto", "max_mode: manual"),
    );
    let answer = l.link.recv(WAIT).await.unwrap();
    assert_eq!(answer["id"], "w1");
    assert_eq!(answer["result"]["excerpt"], "done\n", "{answer}");
    assert_eq!(l.link.closed(WAIT).await.unwrap().map(|c| c.0), Some(1000));
    let mut link = l.peer.next_link(WAIT).await.unwrap();
    assert_eq!(link.hello(WAIT).await.unwrap()["limits"]["max_mode"], "manual");
}

#[tokio::test(flavor = "multi_thread")]
async fn half_a_gigabyte_is_hashed_with_memory_bounded() {
    let mut l = linked(|w| remote(w, "  scheduled: true\n")).await;
    let work = l.home.path().join("work");
    let expected = std::process::Command::new("bash")
        .args([
            "-c",
            "{ head -c 536870912 /dev/zero; printf '\\n0'; } | sha256sum | cut -d' ' -f1",
        ])
        .output()
        .unwrap();
    let expected = format!("sha256:{}", String::from_utf8_lossy(&expected.stdout).trim());
    let answer = l
        .link
        .request(
            "_lembas/monitor",
            json!({ "cwd": work, "command": "head -c 536870912 /dev/zero", "timeout_s": 300 }),
            Duration::from_secs(300),
        )
        .await
        .unwrap();
    assert_eq!(answer["result"]["hash"], expected.as_str(), "{answer}");
    assert_eq!(answer["result"]["bytes"], 536870912u64);
    assert_eq!(answer["result"]["truncated"], true);
    let status = String::from_utf8(proc_file(l.service.pid(), "status")).unwrap();
    let hwm_kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    // Generous for a debug build: the point is that 512 MiB never comes near memory.
    assert!(hwm_kb < 64 * 1024, "peak RSS {hwm_kb} kB");
}
