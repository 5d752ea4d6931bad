//! Noticing that the machine slept: on Linux the boot clock runs on through suspend while the
//! monotonic clock stops, so a gap between the two means the machine just woke. That needs no
//! D-Bus and no platform service; where there is no such pair of clocks it never fires.

use std::time::Duration;
use tokio::sync::broadcast;

const TICK: Duration = Duration::from_secs(2);
/// Suspend gaps shorter than this are not worth a redial.
const MIN_SLEEP: Duration = Duration::from_secs(5);

/// Whether the boot clock ran ahead of the monotonic clock by a sleep's worth.
pub fn slept(monotonic_delta: Duration, boot_delta: Duration) -> bool {
    boot_delta.saturating_sub(monotonic_delta) >= MIN_SLEEP
}

#[cfg(target_os = "linux")]
fn clocks() -> Option<(Duration, Duration)> {
    fn read(clock: libc::clockid_t) -> Option<Duration> {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes into the timespec we own.
        let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
        (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
    }
    Some((read(libc::CLOCK_MONOTONIC)?, read(libc::CLOCK_BOOTTIME)?))
}

#[cfg(not(target_os = "linux"))]
fn clocks() -> Option<(Duration, Duration)> {
    None
}

/// Sends `()` each time the machine wakes. The task is cheap and ends with the runtime.
pub fn spawn_watch() -> broadcast::Sender<()> {
    let (tx, _) = broadcast::channel(4);
    let sender = tx.clone();
    tokio::spawn(async move {
        let Some(mut last) = clocks() else { return };
        let mut tick = tokio::time::interval(TICK);
        loop {
            tick.tick().await;
            let Some(now) = clocks() else { return };
            if slept(now.0.saturating_sub(last.0), now.1.saturating_sub(last.1)) {
                tracing::info!("the machine woke from sleep: redialling");
                let _ = sender.send(());
            }
            last = now;
        }
    });
    tx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_between_the_clocks_is_a_sleep() {
        let s = Duration::from_secs;
        assert!(!slept(s(2), s(2)));
        assert!(!slept(s(2), s(4)));
        assert!(slept(s(2), s(60)));
        assert!(!slept(s(60), s(2)));
    }
}
