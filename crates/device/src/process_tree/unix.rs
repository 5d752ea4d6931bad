//! Unix: the process group a command leads, signalled as a whole; killed if the command is
//! abandoned.

use std::io;

/// A process group made for one command. Armed until the command has been stopped (or seen to
/// end), so a future dropped half-way (its request cancelled, the link gone) still kills what it
/// started.
pub struct ProcessTree {
    pgid: libc::pid_t,
    armed: bool,
}

impl ProcessTree {
    /// Sets the command up to lead a group of its own.
    pub fn prepare(command: &mut tokio::process::Command) {
        command.process_group(0);
    }

    /// The group of the command just spawned (prepared with [`Self::prepare`], so its group id
    /// is its pid).
    pub fn of(child: &tokio::process::Child) -> io::Result<Self> {
        let pid = child
            .id()
            .ok_or_else(|| io::Error::other("the command ended before it started"))?;
        Self::led_by(pid)
    }

    fn led_by(pid: u32) -> io::Result<Self> {
        match libc::pid_t::try_from(pid) {
            // kill(-1) would signal every process we may signal, kill(0) our own group: refuse both.
            Ok(pgid) if pgid > 1 => Ok(Self { pgid, armed: true }),
            _ => Err(io::Error::other(format!(
                "the command got an unusable process id ({pid})"
            ))),
        }
    }

    /// SIGTERM to every process of the group, so each may end by itself.
    pub fn ask_to_stop(&self) {
        self.signal(libc::SIGTERM);
    }

    /// SIGKILL to every process of the group.
    pub fn kill(&self) {
        self.signal(libc::SIGKILL);
    }

    /// A group already gone is not an error: there is nothing left to stop.
    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill takes plain integers; `pgid > 1` so this names exactly our group.
        unsafe {
            libc::kill(-self.pgid, signal);
        }
    }

    /// Whether any process is still in the group (zombies included: they leave it when reaped).
    pub fn alive(&self) -> bool {
        // SAFETY: signal 0 only checks that the group exists and may be signalled.
        let found = unsafe { libc::kill(-self.pgid, 0) } == 0;
        // EPERM means a member exists that we may not signal (a setuid program): still alive.
        found || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }

    /// The group has been stopped or has ended: nothing to kill on drop.
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ProcessTree {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

/// The signal that ended a process, if one did.
pub fn signal_of(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(test)]
mod tests {
    use super::ProcessTree;

    #[test]
    fn refuses_ids_that_would_name_other_processes() {
        for pid in [0, 1, u32::MAX] {
            assert!(ProcessTree::led_by(pid).is_err(), "{pid}");
        }
    }
}
