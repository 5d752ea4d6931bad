//! A process's memory and CPU time, read from /proc.

/// A `kB` field of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in bytes.
fn status_field(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    let kib: u64 = line[field.len()..]
        .trim_start_matches(':')
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Resident memory now.
pub fn rss(pid: u32) -> Option<u64> {
    status_field(pid, "VmRSS")
}

/// Resident anonymous memory now (`Anonymous` of `/proc/<pid>/smaps_rollup`), in bytes: what the
/// process holds itself, without the file pages of its code and libraries.
pub fn anonymous(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = rollup.lines().find(|line| line.starts_with("Anonymous:"))?;
    let kib: u64 = line["Anonymous:".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The most resident memory the process ever had.
pub fn peak_rss(pid: u32) -> Option<u64> {
    status_field(pid, "VmHWM")
}

/// User plus system CPU time so far, in clock ticks.
pub fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat(5); 3 is the first after the name.
    let utime: u64 = fields.get(14 - 3)?.parse().ok()?;
    let stime: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(utime + stime)
}

/// Context switches so far, voluntary and not, summed over the process's threads: each time one
/// of its threads went to sleep (to wait for another, or for the socket) or was preempted.
pub fn context_switches(pid: u32) -> Option<u64> {
    let mut total = 0;
    for thread in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let Ok(status) = std::fs::read_to_string(thread.ok()?.path().join("status")) else {
            continue; // the thread ended meanwhile
        };
        total += status
            .lines()
            .filter(|line| line.contains("ctxt_switches:"))
            .filter_map(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    Some(total)
}

pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let me = std::process::id();
        assert!(rss(me).is_some_and(|b| b > 0));
        // RSS first: the peak read after it is at least as high even while other tests allocate.
        let now = rss(me);
        assert!(peak_rss(me) >= now);
        assert!(cpu_ticks(me).is_some());
        assert!(context_switches(me).is_some());
    }
}
