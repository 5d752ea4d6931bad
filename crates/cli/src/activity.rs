//! `lembas activity`: the newest lines of the activity log, newest first. The running device gives
//! them through its control socket; with none running, the log's files are read directly (never
//! taking the device lock).

use std::process::ExitCode;

use lembas_device::activity_log::{self, Rotation};
use lembas_device::setup::Setup;
use serde_json::Value;

use crate::live::{self, Live};
use crate::login::fail;

pub fn show(setup: &Setup, json: bool, n: usize) -> ExitCode {
    let newest = match live::ask(&setup.dirs, |mut client| async move { client.activity(n).await }) {
        Live::Answered((lines, unreadable)) => activity_log::Newest { lines, unreadable },
        Live::Refused(e) => return fail(json, e.message),
        Live::Failed(why) => return fail(json, why),
        Live::NotRunning => {
            let path = activity_log::path(&setup.dirs);
            match activity_log::newest(&path, Rotation::decided(&setup.decisions.activity).kept_files, n) {
                Ok(newest) => newest,
                Err(e) => return fail(json, format!("cannot read {}: {e}", path.display())),
            }
        }
    };
    if json {
        println!("{}", Value::Array(newest.lines));
    } else if newest.lines.is_empty() && newest.unreadable == 0 {
        println!("No activity on this computer yet.");
    } else {
        for line in &newest.lines {
            println!("{}", text(line));
        }
    }
    if newest.unreadable > 0 {
        let note = format!(
            "{} line{} of the log could not be read and {} skipped.",
            newest.unreadable,
            if newest.unreadable == 1 { "" } else { "s" },
            if newest.unreadable == 1 { "was" } else { "were" },
        );
        // With --json, standard output holds the array alone.
        if json {
            eprintln!("lembas: {note}");
        } else {
            println!("{note}");
        }
    }
    ExitCode::SUCCESS
}

/// `HH:MM:SS kind text`, the time in UTC.
fn text(line: &Value) -> String {
    format!(
        "{} {} {}",
        activity_log::clock(line["at_ms"].as_u64().unwrap_or(0)),
        line["kind"].as_str().unwrap_or_default(),
        activity_log::describe(line)
    )
}
