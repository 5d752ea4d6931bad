//! `lembas sessions list|delete|prune`: the session store from a shell. `list` asks the running device
//! through its control socket and reads the store's files when none runs; `delete` works on the
//! files directly (never taking the device lock; `prune` holds each session it deletes), and a running service notices the delete in
//! `deleted.json` by itself.

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lembas_device::store::{SessionSummary, Store, is_session_id};
use serde_json::json;

use crate::live::{self, Live};
use crate::login::fail;
use lembas_device::setup::Setup;

/// The exit code for an argument of the wrong shape, as for clap's own usage errors.
const USAGE: u8 = 2;

pub fn list(setup: &Setup, json: bool) -> ExitCode {
    let sessions = match live::ask(&setup.dirs, |mut client| async move { client.sessions().await }) {
        Live::Answered(sessions) => sessions,
        Live::Refused(e) => return fail(json, e.message),
        Live::Failed(why) => return fail(json, why),
        Live::NotRunning => match Store::at(setup.dirs.state.clone(), &setup.decisions.turns).list() {
            Ok(sessions) => sessions,
            Err(e) => return fail(json, format!("cannot read the sessions: {e}")),
        },
    };
    if json {
        println!("{}", json!(sessions));
    } else if sessions.is_empty() {
        println!("No sessions on this computer.");
    } else {
        let now = SystemTime::now();
        for session in &sessions {
            println!("{}", line(session, now));
        }
    }
    ExitCode::SUCCESS
}

pub fn delete(setup: &Setup, id: &str, json: bool) -> ExitCode {
    if !is_session_id(id) {
        let _ = fail(
            json,
            format!(
                "{id:?} is not a session id: one is ses_ and 26 lowercase letters and digits (lembas sessions list shows them)."
            ),
        );
        return ExitCode::from(USAGE);
    }
    let store = Store::at(setup.dirs.state.clone(), &setup.decisions.turns);
    let title = match store.summary(id) {
        Ok(summary) => summary.title,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return fail(json, format!("No session {id} on this computer."));
        }
        Err(e) => return fail(json, format!("cannot read session {id}: {e}")),
    };
    if let Err(why) = delete_noted(&store, id) {
        return fail(json, why);
    }
    if json {
        println!("{}", json!({ "event": "done", "sessionId": id, "deleted": true }));
    } else {
        println!(
            "Deleted session {id}{} from this computer, with its turns and attachments.",
            quoted_title(&title)
        );
        println!("{LLEMBAS_FOLLOWS}");
    }
    ExitCode::SUCCESS
}

const LLEMBAS_FOLLOWS: &str = "Your LLeMbas deletes its chat as soon as this device is linked.";

/// Deletes a session's files, the delete first noted for the instance, so it is never lost for
/// want of a link: if removing then fails, doing it again finishes it, and telling twice is
/// harmless.
fn delete_noted(store: &Store, id: &str) -> Result<(), String> {
    store
        .remember_deleted(id)
        .map_err(|e| format!("session {id} was not deleted: cannot note the delete for your LLeMbas: {e}"))?;
    store
        .delete(id)
        .map(|_| ())
        .map_err(|e| format!("session {id} is not fully deleted ({e}); run this again to finish"))
}

/// `lembas sessions prune --older-than DAYS`: deletes every session not changed for that many
/// days, as `delete` does each; a session open in a running device or terminal is left alone
/// and named. `--dry-run` only lists them.
pub fn prune(setup: &Setup, older_than_days: u64, dry_run: bool, json: bool) -> ExitCode {
    let store = Store::at(setup.dirs.state.clone(), &setup.decisions.turns);
    let sessions = match store.list() {
        Ok(sessions) => sessions,
        Err(e) => return fail(json, format!("cannot read the sessions: {e}")),
    };
    let now = SystemTime::now();
    let cutoff = now
        .checked_sub(Duration::from_secs(older_than_days.saturating_mul(DAY)))
        .unwrap_or(UNIX_EPOCH);
    let old = sessions
        .iter()
        .filter(|s| UNIX_EPOCH + Duration::from_millis(s.updated_ms) < cutoff);
    let (mut deleted, mut kept, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for session in old {
        if dry_run {
            deleted.push(session);
            continue;
        }
        // Held while its files go: nobody opens it meanwhile.
        let _hold = match store.hold(&session.id, "lembas sessions prune") {
            Ok(hold) => hold,
            Err(why) => {
                kept.push((session, why.to_string()));
                continue;
            }
        };
        match delete_noted(&store, &session.id) {
            Ok(()) => deleted.push(session),
            Err(why) => failed.push((session, why)),
        }
    }
    if json {
        let ids = |list: &[&SessionSummary]| list.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
        let reasons = |list: &[(&SessionSummary, String)]| {
            list.iter()
                .map(|(s, why)| json!({ "sessionId": s.id, "message": why }))
                .collect::<Vec<_>>()
        };
        println!(
            "{}",
            json!({
                "event": "done",
                "dryRun": dry_run,
                "deleted": ids(&deleted),
                "kept": reasons(&kept),
                "failed": reasons(&failed),
            })
        );
    } else {
        let verb = if dry_run { "Would delete" } else { "Deleted" };
        for session in &deleted {
            println!("{verb} {}", line(session, now));
        }
        for (session, why) in kept.iter().chain(&failed) {
            eprintln!("lembas: kept {}: {why}", session.id);
        }
        match deleted.len() {
            0 => println!("No session here is older than {older_than_days} days."),
            n if dry_run => {
                println!("{n} sessions would be deleted; run it again without --dry-run to delete them.")
            }
            n => println!("Deleted {n} sessions from this computer. {LLEMBAS_FOLLOWS}"),
        }
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn quoted_title(title: &str) -> String {
    if title.is_empty() {
        String::new()
    } else {
        format!(" (\u{201c}{title}\u{201d})")
    }
}

/// `id  title  folder  when`, one session a line.
fn line(session: &SessionSummary, now: SystemTime) -> String {
    let title = if session.title.is_empty() {
        "(untitled)"
    } else {
        session.title.as_str()
    };
    let folder = if session.cwd.is_empty() {
        "(no folder)"
    } else {
        session.cwd.as_str()
    };
    let updated = UNIX_EPOCH + Duration::from_millis(session.updated_ms);
    format!("{}  {title}  {folder}  {}", session.id, when(updated, now))
}

const MINUTE: u64 = 60;
const HOUR: u64 = 60 * MINUTE;
const DAY: u64 = 24 * HOUR;
/// Past this a date says more than a count of days.
const DATED_AFTER_DAYS: u64 = 30;

/// How long ago, in words; a date (UTC) once it is more than a month back.
fn when(at: SystemTime, now: SystemTime) -> String {
    // A time ahead of the clock (set back since) is as recent as it gets.
    let ago = now.duration_since(at).unwrap_or_default().as_secs();
    let count = |n: u64, unit: &str| format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" });
    match ago {
        _ if ago < MINUTE => "just now".to_string(),
        _ if ago < HOUR => count(ago / MINUTE, "minute"),
        _ if ago < DAY => count(ago / HOUR, "hour"),
        _ if ago < DATED_AFTER_DAYS * DAY => count(ago / DAY, "day"),
        _ => {
            let days = at.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() / DAY;
            let (year, month, day) = civil_date(days as i64);
            format!("on {year:04}-{month:02}-{day:02}")
        }
    }
}

/// The calendar date of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn when_says_how_long_ago_in_words_then_a_date() {
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let ago = |secs: u64| when(now - Duration::from_secs(secs), now);
        assert_eq!(ago(5), "just now");
        assert_eq!(when(now + Duration::from_secs(500), now), "just now");
        assert_eq!(ago(60), "1 minute ago");
        assert_eq!(ago(59 * 60), "59 minutes ago");
        assert_eq!(ago(2 * HOUR + 5), "2 hours ago");
        assert_eq!(ago(DAY), "1 day ago");
        assert_eq!(ago(29 * DAY), "29 days ago");
        // 1_700_000_000 s is 2023-11-14 22:13:20 UTC.
        assert_eq!(ago(0), "just now");
        assert_eq!(ago(40 * DAY), "on 2023-10-05");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(19_675), (2023, 11, 14));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(-1), (1969, 12, 31));
    }
}
