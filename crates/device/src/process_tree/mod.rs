//! A command's process tree: every process one command (the `bash` tool's call, a background job,
//! a watch) starts, held as one thing so that stopping the command stops all of it and nothing
//! outlives it.
//!
//! - Unix ([`unix`]): the process group the command leads (spawned with `process_group(0)`),
//!   signalled as a whole. In the Linux box (`sandbox/namespaces/`) the group's leader is the
//!   box's keeper: killing it kills the box's PID namespace, and with it whatever left the group
//!   (`setsid`, daemons).
//! - Windows ([`windows`]): a Job Object with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`. The command is
//!   spawned suspended, put in the job, then resumed, so every process it starts is in the job from
//!   its first instruction; closing the job (the tree dropped) ends them all.
//!
//! The same calls on both: [`ProcessTree::prepare`] before the spawn, [`ProcessTree::of`] after,
//! [`ProcessTree::ask_to_stop`], [`ProcessTree::kill`], [`ProcessTree::alive`],
//! [`ProcessTree::disarm`]; dropping an armed tree kills it.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use unix::{ProcessTree, signal_of};
#[cfg(windows)]
pub use windows::{ProcessTree, signal_of};

/// The status a shell reports for a command that ended: its exit code, or 128 + the signal that
/// ended it; with the exit code itself (`None` when a signal ended it). `None` when the status says
/// neither.
pub fn shell_status(status: std::process::ExitStatus) -> Option<(i32, Option<i32>)> {
    shell_status_of(status.code(), signal_of(status))
}

/// [`shell_status`]'s rule, apart from the platform's status type.
fn shell_status_of(code: Option<i32>, signal: Option<i32>) -> Option<(i32, Option<i32>)> {
    match (code, signal) {
        (Some(code), _) => Some((code, Some(code))),
        (None, Some(signal)) => Some((128 + signal, None)),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::shell_status_of;

    #[test]
    fn a_code_is_itself_and_a_signal_is_reported_as_a_shell_does() {
        assert_eq!(shell_status_of(Some(0), None), Some((0, Some(0))));
        assert_eq!(shell_status_of(Some(3), None), Some((3, Some(3))));
        assert_eq!(shell_status_of(None, Some(9)), Some((137, None)));
        assert_eq!(shell_status_of(None, None), None);
    }
}
