//! The bench runs end to end with `--smoke` (every benchmark at its smallest) and prints a table
//! with every row. Timing is the bench's business, not the tests': only the table's shape is
//! checked. Needs a keychain and the `lembas` binary built beside the bench (scripts/test does
//! both).

use std::process::Command;

const ROWS: [&str; 26] = [
    "No-op round trip p50",
    "No-op round trip p99",
    "Idle linked RSS",
    "Idle linked CPU",
    "Start -> hello",
    "Terminal output throughput",
    "Keystroke echo p99",
    "Ctrl-C under flood",
    "Monitor hash throughput",
    "Monitor peak RSS",
    "Token relay p50",
    "Token relay p99",
    "Turn, instant model",
    "Reopen 5,000-message session",
    "Idle RSS, 100 stored sessions",
    "grep tool (in process) vs rg",
    "File search p50",
    "File search p99",
    "File index build",
    "@path expansion, 1 MB file",
    "Chat keystroke to echo p99",
    "Chat streamed token drawn p99",
    "Open a 5,000-message chat",
    "Card to the window",
    "Card to the notification",
    "benchmark",
];

#[test]
fn smoke_run_prints_every_row() {
    let output = Command::new(env!("CARGO_BIN_EXE_lembas-bench"))
        .arg("--smoke")
        .output()
        .expect("the bench binary runs");
    let table = String::from_utf8_lossy(&output.stdout);
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the bench failed: {errors}\n{table}");
    for row in ROWS {
        let line = table
            .lines()
            .find(|line| line.starts_with(&format!("| {row} ")))
            .unwrap_or_else(|| panic!("no row {row:?} in:\n{table}\n{errors}"));
        assert!(!line.contains("| error |"), "{row} could not run:\n{line}");
    }
}
