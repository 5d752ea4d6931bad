//! The watch command's process group: signalled as a whole, and killed if the watch is abandoned.

use std::io;

/// A process group made for one watch. Armed until the watch has stopped it (or seen it end), so a
/// watch future dropped half-way (its request cancelled, the link gone) still kills what it started.
pub(super) struct ProcessGroup {
    pgid: libc::pid_t,
    armed: bool,
}

impl ProcessGroup {
    /// The group led by `pid` (spawned with `process_group(0)`, so its group id is its pid).
    pub(super) fn led_by(pid: u32) -> io::Result<Self> {
        match libc::pid_t::try_from(pid) {
            // kill(-1) would signal every process we may signal, kill(0) our own group: refuse both.
            Ok(pgid) if pgid > 1 => Ok(Self { pgid, armed: true }),
            _ => Err(io::Error::other(format!(
                "the watch command got an unusable process id ({pid})"
            ))),
        }
    }

    /// Sends `signal` to every process of the group. A group already gone is not an error: there is
    /// nothing left to stop.
    pub(super) fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill takes plain integers; `pgid > 1` so this names exactly our group.
        unsafe {
            libc::kill(-self.pgid, signal);
        }
    }

    /// Whether any process is still in the group (zombies included: they leave it when reaped).
    pub(super) fn alive(&self) -> bool {
        // SAFETY: signal 0 only checks that the group exists and may be signalled.
        let found = unsafe { libc::kill(-self.pgid, 0) } == 0;
        // EPERM means a member exists that we may not signal (a setuid program): still alive.
        found || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }

    /// The group has been stopped or has ended: nothing to kill on drop.
    pub(super) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if self.armed {
            self.signal(libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ProcessGroup;

    #[test]
    fn refuses_ids_that_would_name_other_processes() {
        for pid in [0, 1, u32::MAX] {
            assert!(ProcessGroup::led_by(pid).is_err(), "{pid}");
        }
    }
}
