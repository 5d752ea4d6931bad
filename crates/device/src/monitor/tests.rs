//! Watches run with real bash, each in its own empty folder.

use super::*;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

const CONFORMANCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/conformance/monitor.json"
);

/// The watches here run in the product's sandbox, their folder its root: a watch behaves the same
/// inside it.
async fn run_watch(cwd: &Path, command: &str, timeout: Duration) -> io::Result<WatchOutcome> {
    super::run_watch(cwd, command, timeout, &sandbox_for(cwd), numbers()).await
}

/// These tests look at the watch's own process group, through the pids bash prints (`$$`), which
/// only mean something outside the box; the box, its PID namespace and what ends with it are
/// `sandbox/tests/`'s.
fn sandbox_for(folder: &Path) -> Sandbox {
    let roots = [folder.to_owned()];
    Sandbox::new(
        &Default::default(),
        &roots,
        &[],
        crate::policy::Mode::Edit,
        crate::sandbox::Kernel::Lacks("the monitor's tests look at process groups".into()),
        &crate::paths::Dirs::from_env(),
    )
}

fn numbers() -> &'static crate::decisions::Monitor {
    &crate::decisions::Decisions::built_in().scheduled.monitor
}

fn clamp_timeout(requested: Option<f64>) -> Duration {
    super::clamp_timeout(requested, &numbers().timeout_seconds)
}

fn conformance_cases() -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(CONFORMANCE)
        .unwrap_or_else(|e| panic!("{CONFORMANCE} (the shared folder beside the repository): {e}"));
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    file["cases"].as_array().unwrap().clone()
}

fn expected_hash(output: &[u8], status: i32) -> String {
    let mut hasher = Sha256::new();
    hasher.update(output);
    hasher.update(format!("\n{status}").as_bytes());
    format!("sha256:{}", hex::encode(hasher.finalize()))
}

/// The excerpt and truncated the spec asks for, from the whole output.
fn expected_excerpt(output: &[u8]) -> (String, bool) {
    let kept = &output[..output.len().min(numbers().output_max_bytes)];
    let text = String::from_utf8_lossy(kept);
    let excerpt: String = text.chars().take(numbers().excerpt_chars).collect();
    let truncated = kept.len() < output.len() || text.chars().count() > numbers().excerpt_chars;
    (excerpt, truncated)
}

/// The command's output as bash gives it with standard error sent to standard output, to compare
/// with when the conformance file gives only a digest.
async fn reference_output(dir: &Path, command: &str) -> Vec<u8> {
    let out = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    out.stdout
}

async fn watch(dir: &Path, command: &str) -> WatchOutcome {
    run_watch(dir, command, clamp_timeout(None)).await.unwrap()
}

/// The group's processes that are alive (zombies left to a parent that does not reap are dead).
fn live_members(pgid: i32) -> Vec<i32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2) == Some(&pgid.to_string().as_str()) && fields.first() != Some(&"Z") {
            live.push(pid);
        }
    }
    live
}

fn pgid_from(excerpt: &str) -> i32 {
    excerpt
        .lines()
        .next()
        .and_then(|line| line.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {excerpt:?}"))
}

fn assert_group_gone(pgid: i32) {
    assert_eq!(
        live_members(pgid),
        Vec::<i32>::new(),
        "processes of group {pgid} still alive"
    );
    // bash led the group and is our child: reaped, so no zombie of it either.
    assert!(
        !PathBuf::from(format!("/proc/{pgid}")).exists(),
        "bash ({pgid}) was not reaped"
    );
}

#[tokio::test]
async fn conformance_cases_hash_and_describe_the_output() {
    let cases = conformance_cases();
    assert!(!cases.is_empty());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let command = case["command"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let outcome = watch(dir.path(), command).await;

        assert_eq!(
            outcome.watched.hash.as_deref(),
            case["hash"].as_str(),
            "{name}: hash"
        );
        assert_eq!(
            outcome.watched.exit,
            case["exit"].as_i64().map(|e| e as i32),
            "{name}: exit"
        );
        assert!(!outcome.watched.timed_out, "{name}");
        let output = match case["output_b64"].as_str() {
            Some(b64) => base64::engine::general_purpose::STANDARD.decode(b64).unwrap(),
            None => {
                let output = reference_output(dir.path(), command).await;
                let digest = hex::encode(Sha256::digest(&output));
                assert_eq!(
                    Some(digest.as_str()),
                    case["output_sha256_of_bytes"].as_str(),
                    "{name}: reference"
                );
                output
            }
        };
        assert_eq!(outcome.watched.bytes, output.len() as u64, "{name}: bytes");
        if let Some(bytes) = case["bytes"].as_u64() {
            assert_eq!(outcome.watched.bytes, bytes, "{name}: bytes");
        }
        let (excerpt, truncated) = expected_excerpt(&output);
        assert_eq!(outcome.watched.excerpt, excerpt, "{name}: excerpt");
        assert_eq!(outcome.watched.truncated, truncated, "{name}: truncated");
        if let Some(truncated) = case["truncated"].as_bool() {
            assert_eq!(outcome.watched.truncated, truncated, "{name}: truncated");
        }
    }
}

#[tokio::test]
async fn a_signal_hashes_128_plus_its_number_and_has_no_exit() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = watch(dir.path(), "printf before; kill -9 $$").await;
    assert_eq!(outcome.watched.exit, None);
    assert!(!outcome.watched.timed_out);
    assert_eq!(outcome.watched.hash, Some(expected_hash(b"before", 137)));
    assert_eq!(
        (
            outcome.watched.excerpt.as_str(),
            outcome.watched.bytes,
            outcome.watched.truncated
        ),
        ("before", 6, false)
    );
}

#[tokio::test]
async fn a_timeout_stops_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_watch(
        dir.path(),
        "echo $$; sleep 100 & sleep 100",
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    assert!(outcome.watched.timed_out);
    assert_eq!((outcome.watched.hash, outcome.watched.exit), (None, None));
    // What was read before the timeout is still described.
    assert!(outcome.watched.bytes > 0);
    assert_group_gone(pgid_from(&outcome.watched.excerpt));
}

#[tokio::test]
async fn a_background_job_holding_the_output_after_bash_exits_is_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_watch(dir.path(), "echo $$; sleep 100 &", Duration::from_secs(1))
        .await
        .unwrap();
    assert!(outcome.watched.timed_out);
    assert_eq!((outcome.watched.hash, outcome.watched.exit), (None, None));
    assert_group_gone(pgid_from(&outcome.watched.excerpt));
}

#[tokio::test]
async fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run_watch(
        dir.path(),
        "trap '' TERM; echo $$; sleep 100",
        Duration::from_secs(1),
    )
    .await
    .unwrap();
    assert!(outcome.watched.timed_out);
    assert!(
        outcome.watched.duration_ms >= 1000 + numbers().kill_grace_ms,
        "{}",
        outcome.watched.duration_ms
    );
    assert_group_gone(pgid_from(&outcome.watched.excerpt));
}

#[tokio::test]
async fn leftovers_of_a_finished_watch_are_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = watch(dir.path(), "echo $$; sleep 100 >/dev/null 2>&1 &").await;
    assert!(!outcome.watched.timed_out);
    assert_eq!(outcome.watched.exit, Some(0));
    assert_eq!(
        outcome.watched.hash,
        Some(expected_hash(outcome.watched.excerpt.as_bytes(), 0))
    );
    assert_group_gone(pgid_from(&outcome.watched.excerpt));
}

#[tokio::test]
async fn dropping_a_watch_kills_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let started = async {
        loop {
            if let Ok(pid) = std::fs::read_to_string(&pid_file)
                && pid.ends_with('\n')
            {
                return pid.trim().parse::<i32>().unwrap();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    let pgid = tokio::select! {
        _ = run_watch(dir.path(), "echo $$ > pid; sleep 100", Duration::from_secs(60)) => panic!("the watch ended"),
        pgid = started => pgid,
    };
    // SIGKILL is sent on drop; the processes die when next scheduled.
    for _ in 0..500 {
        if live_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("group {pgid} still alive: {:?}", live_members(pgid));
}

/// On a single-threaded runtime, the first watch can only end if the second one runs meanwhile.
#[tokio::test(flavor = "current_thread")]
async fn watches_run_side_by_side_without_blocking_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let waiting = run_watch(
        dir.path(),
        "until [ -e flag ]; do sleep 0.01; done; echo a",
        Duration::from_secs(30),
    );
    let flagging = run_watch(
        dir.path(),
        "sleep 0.2; touch flag; echo b",
        Duration::from_secs(30),
    );
    let (a, b) = tokio::join!(waiting, flagging);
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.watched.excerpt.as_str(), a.watched.timed_out), ("a\n", false));
    assert_eq!((b.watched.excerpt.as_str(), b.watched.timed_out), ("b\n", false));
}

#[tokio::test]
async fn the_excerpt_is_cut_at_a_character_and_replaces_invalid_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let before = numbers().excerpt_chars - 1;
    let outcome = watch(
        dir.path(),
        &format!("head -c {before} /dev/zero | tr '\\0' a; printf '\u{e9}\u{e9}\u{e9}'"),
    )
    .await;
    assert_eq!(outcome.watched.excerpt, format!("{}\u{e9}", "a".repeat(before)));
    assert_eq!(outcome.watched.excerpt.chars().count(), numbers().excerpt_chars);
    assert!(outcome.watched.truncated);
    assert_eq!(outcome.watched.bytes, before as u64 + 6);

    let outcome = watch(dir.path(), "printf 'ok\\377\\376end'").await;
    assert_eq!(
        (outcome.watched.excerpt.as_str(), outcome.watched.truncated),
        ("ok\u{fffd}\u{fffd}end", false)
    );
    assert_eq!(outcome.watched.hash, Some(expected_hash(b"ok\xff\xfeend", 0)));
}

#[tokio::test]
async fn only_the_start_is_kept_and_a_cut_character_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let limits = WatchLimits {
        output_max_bytes: 4,
        excerpt_chars: 100,
        kill_grace: Duration::from_secs(1),
    };
    let outcome = run_watch_within(
        dir.path(),
        "printf 'abc\u{e9}xyz'",
        Duration::from_secs(30),
        &limits,
        &sandbox_for(dir.path()),
        None,
    )
    .await
    .unwrap();
    assert_eq!(
        (
            outcome.watched.excerpt.as_str(),
            outcome.watched.truncated,
            outcome.watched.bytes
        ),
        ("abc", true, 8)
    );
    assert_eq!(
        outcome.watched.hash,
        Some(expected_hash("abc\u{e9}xyz".as_bytes(), 0))
    );
}

#[tokio::test]
async fn no_input_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = watch(dir.path(), "cat; echo done").await;
    assert_eq!(
        (outcome.watched.excerpt.as_str(), outcome.watched.exit),
        ("done\n", Some(0))
    );
}

#[tokio::test]
async fn runs_in_the_folder_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker"), "here").unwrap();
    let outcome = watch(dir.path(), "cat marker").await;
    assert_eq!(outcome.watched.excerpt, "here");
}

#[tokio::test]
async fn a_folder_that_does_not_exist_is_an_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone");
    let error = run_watch(&missing, "true", clamp_timeout(None))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::NotFound);
    assert!(
        error.to_string().contains(&missing.display().to_string()),
        "{error}"
    );
}

#[tokio::test]
async fn the_result_has_exactly_the_spec_fields() {
    let dir = tempfile::tempdir().unwrap();
    let value = serde_json::to_value(watch(dir.path(), "kill -TERM $$").await.watched).unwrap();
    let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "bytes",
            "duration_ms",
            "excerpt",
            "exit",
            "hash",
            "timed_out",
            "truncated"
        ]
    );
    assert_eq!(value["exit"], serde_json::Value::Null);
    assert_eq!(value["hash"], expected_hash(b"", 128 + libc::SIGTERM).as_str());
}

#[test]
fn clamp_timeout_table() {
    let limits = &numbers().timeout_seconds;
    let (default, max) = (
        Duration::from_secs(limits.default),
        Duration::from_secs(limits.max),
    );
    let cases = [
        (None, default),
        (Some(0.0), default),
        (Some(-5.0), default),
        (Some(f64::NAN), default),
        (Some(1.5), Duration::from_millis(1500)),
        (Some(limits.max as f64), max),
        (Some(limits.max as f64 + 1.0), max),
        (Some(f64::INFINITY), max),
    ];
    for (requested, expected) in cases {
        assert_eq!(clamp_timeout(requested), expected, "{requested:?}");
    }
}

fn peak_resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn half_a_gibibyte_is_hashed_whole_in_bounded_memory() {
    const SIZE: u64 = 512 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let peak_before = peak_resident_kib();
    let command = format!("head -c {SIZE} /dev/zero");
    let outcome = watch(dir.path(), &command).await;
    let grown_kib = peak_resident_kib() - peak_before;

    // sha256sum, not this crate, says what the hash must be.
    let reference = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(format!("{{ {command}; printf '\\n0'; }} | sha256sum"))
        .output()
        .await
        .unwrap();
    let digest = String::from_utf8(reference.stdout).unwrap();
    let digest = digest.split_whitespace().next().unwrap();
    assert_eq!(outcome.watched.hash, Some(format!("sha256:{digest}")));
    assert_eq!(
        (
            outcome.watched.bytes,
            outcome.watched.truncated,
            outcome.watched.exit
        ),
        (SIZE, true, Some(0))
    );
    assert_eq!(outcome.watched.excerpt, "\0".repeat(numbers().excerpt_chars));
    // Other tests run beside this one, hence the slack; keeping the output would be 512 MiB.
    assert!(grown_kib < 64 * 1024, "peak memory grew by {grown_kib} KiB");
}
