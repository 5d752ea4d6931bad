//! A symlink swapped in after the check: a thread exchanges a real folder of the project with a
//! symlink to a folder outside the roots (one atomic rename, again and again) while the tools are
//! called on it and a file in it, through the tool layer's public plan, judge and run (thousands of calls
//! are needed to land in the window). Every read must stay inside and every write too.

use lembas_device::policy::Mode;
use lembas_device::policy::bash_judge::Decision;
use lembas_device::tools::{FileTool, ToolContext, judge, plan, run};
use serde_json::json;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::world::MARKER;

/// Exchanges `a` and `b` atomically (renameat2 RENAME_EXCHANGE): a symlink can take a folder's
/// place and give it back without a moment where neither is there.
fn exchange(a: &Path, b: &Path) -> bool {
    let (a, b) = (
        CString::new(a.as_os_str().as_bytes()).unwrap(),
        CString::new(b.as_os_str().as_bytes()).unwrap(),
    );
    // SAFETY: both paths are NUL-terminated and live across the call.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        ) == 0
    }
}

#[test]
fn a_symlink_swapped_in_while_calls_run_leads_nowhere_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let (work, outside) = (base.join("work"), base.join("outside"));
    std::fs::create_dir_all(work.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(work.join("d/f.txt"), "inside line\n").unwrap();
    std::fs::write(outside.join("f.txt"), format!("{MARKER} outside line\n")).unwrap();
    // A name only outside: a listing that shows it listed the swapped-in folder.
    std::fs::write(outside.join(format!("{MARKER}.txt")), "").unwrap();
    std::os::unix::fs::symlink(&outside, work.join("swap")).unwrap();
    let ctx = ToolContext {
        project: work.clone(),
        roots: vec![work.clone()],
        protected: lembas_device::policy::protected::Protected::under_home(&base.join("home")),
        copies: Some(base.join("copies")),
        additional: Vec::new(),
        numbers: &lembas_device::decisions::Decisions::built_in().tools,
    };
    let outside_before = std::fs::read(outside.join("f.txt")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, d, swap) = (stop.clone(), work.join("d"), work.join("swap"));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                swaps += u64::from(exchange(&d, &swap));
            }
            swaps
        })
    };
    let calls = [
        (FileTool::Read, json!({ "path": "d/f.txt" })),
        (FileTool::Grep, json!({ "path": "d", "pattern": "(?i)line" })),
        (FileTool::Ls, json!({ "path": "d" })),
        (FileTool::Glob, json!({ "path": "d", "pattern": "**" })),
        (
            FileTool::Edit,
            json!({ "path": "d/f.txt", "old_string": "line", "new_string": "LINE" }),
        ),
        (
            FileTool::Edit,
            json!({ "path": "d/f.txt", "old_string": "LINE", "new_string": "line" }),
        ),
        (
            FileTool::Write,
            json!({ "path": "d/new.txt", "content": "written inside\n" }),
        ),
    ];
    let (mut ran, mut inside_reads, mut caught) = (0, 0, 0);
    let end = Instant::now() + Duration::from_secs(8);
    while Instant::now() < end {
        for (tool, args) in &calls {
            let Ok((planned, args)) = plan(*tool, &args.to_string(), &ctx) else {
                panic!("{tool:?} could not be planned");
            };
            if judge(&planned, Mode::Auto, &ctx).decision != Decision::Allow {
                continue;
            }
            ran += 1;
            let output = run(&planned, &args, &ctx);
            assert!(
                !output.text.contains(MARKER),
                "{tool:?} read outside the roots: {}",
                output.text
            );
            inside_reads += usize::from(output.text.contains("inside"));
            // The swap landed between the permission and the open, and was seen.
            caught += usize::from(output.text.contains("changed while"));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!("{swaps} swaps, {ran} calls ran, {inside_reads} read inside, {caught} caught in the window");
    assert!(swaps > 1000, "the swapper barely ran: {swaps}");
    assert!(
        ran > 50 && inside_reads > 10,
        "{ran} calls ran, {inside_reads} read inside"
    );
    assert_eq!(std::fs::read(outside.join("f.txt")).unwrap(), outside_before);
    let mut names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [std::ffi::OsString::from(format!("{MARKER}.txt")), "f.txt".into()],
        "something was written outside"
    );
}
