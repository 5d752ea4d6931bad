//! Dates in UTC (civil from days, so no time crate is needed): the prompt's date and moments, the
//! log files' names.

/// Today in UTC as YYYY-MM-DD.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default() as i64;
    let (y, m, d) = civil(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// A moment (Unix ms) in UTC as RFC 3339, to the second.
pub fn rfc3339(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// The civil date of a day counted from 1970-01-01.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn today_is_the_date_date_prints() {
        let out = std::process::Command::new("date")
            .args(["-u", "+%Y-%m-%d"])
            .output()
            .unwrap();
        let date = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let ours = super::today();
        // Around midnight the two reads may straddle it.
        assert!(ours >= date, "{ours} vs {date}");
    }

    #[test]
    fn moments_across_leap_days_and_centuries() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(4_107_542_399_000), "2100-02-28T23:59:59Z");
    }
}
