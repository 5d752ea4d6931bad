//! Linux: Landlock under the box, made by the command itself after the box's mounts. A ruleset made
//! in the parent names the person's inodes, and the kernel passes over a covered mount point when it
//! walks up from a file, so it could not reach the box's own `/tmp`, `/dev/shm` or `/proc`: here the
//! rules name the places as the box shows them. Reads everywhere (the mounts already keep the
//! protected places out), writes only to the roots (none in plan mode), the temp folder, `/dev/shm`
//! and the devices; and the scopes: no signal to a process outside the command, no connection to an
//! abstract socket made outside it (X11's, a session bus's).
//!
//! Everything is made in the parent; the child makes raw system calls only (the crate's own calls
//! allocate).

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};

use super::namespaces::c;

const CREATE: libc::c_long = libc::SYS_landlock_create_ruleset;
const ADD_RULE: libc::c_long = libc::SYS_landlock_add_rule;
const RESTRICT: libc::c_long = libc::SYS_landlock_restrict_self;
const RULE_PATH_BENEATH: libc::c_int = 1;

/// `LANDLOCK_ACCESS_FS_*`, ABI 1 to 3.
const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
const TRUNCATE: u64 = 1 << 14;
/// Everything ABI 1 handles (bits 0 to 12), REFER (2) and TRUNCATE (3).
const ABI1_ALL: u64 = (1 << 13) - 1;
const REFER: u64 = 1 << 13;
/// `LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL` (ABI 6).
const SCOPES: u64 = 0b11;

const READ: u64 = EXECUTE | READ_FILE | READ_DIR;
/// What a file (not a folder) may be granted.
const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The rules, ready for the child.
pub(super) struct InBox {
    handled: u64,
    scoped: u64,
    /// How much of [`RulesetAttr`] this ABI knows.
    attr_size: usize,
    /// Places as the box shows them, and what each may do.
    rules: Vec<(CString, u64)>,
}

impl InBox {
    /// Reads under `/`, writes to `writable` (as the box shows them) and the devices.
    pub(super) fn new(abi: i32, writable: &[PathBuf]) -> io::Result<Self> {
        let handled = match abi {
            1 => ABI1_ALL,
            2 => ABI1_ALL | REFER,
            _ => ABI1_ALL | REFER | TRUNCATE,
        };
        let mut rules = vec![(c(Path::new("/"))?, READ)];
        for place in writable {
            rules.push((c(place)?, handled));
        }
        for device in super::DEVICES {
            let rights = if device == "/dev/pts" {
                handled
            } else {
                handled & FILE_RIGHTS
            };
            rules.push((c(Path::new(device))?, rights));
        }
        Ok(Self {
            handled,
            scoped: if abi >= 6 { SCOPES } else { 0 },
            attr_size: match abi {
                1..=3 => 8,
                4 | 5 => 16,
                _ => std::mem::size_of::<RulesetAttr>(),
            },
            rules,
        })
    }

    /// How many places are named.
    pub(super) fn rules(&self) -> usize {
        self.rules.len()
    }

    /// Makes the ruleset and restricts the calling thread with it. Between fork and exec, after
    /// the box's mounts, with no new privileges set: system calls only. A place the box does not
    /// have (`/var/tmp` on some systems) is left out: refused, never widened.
    pub(super) fn restrict(&self) -> io::Result<()> {
        let attr = RulesetAttr {
            handled_access_fs: self.handled,
            handled_access_net: 0,
            scoped: self.scoped,
        };
        // SAFETY: the attribute outlives the call, and its size is what this ABI reads.
        let ruleset = unsafe { libc::syscall(CREATE, &attr as *const RulesetAttr, self.attr_size, 0u32) };
        if ruleset < 0 {
            return Err(io::Error::last_os_error());
        }
        let ruleset = ruleset as libc::c_int;
        for (place, access) in &self.rules {
            // SAFETY: a NUL-terminated path.
            let fd = unsafe { libc::open(place.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
            if fd < 0 {
                continue;
            }
            let rule = PathBeneathAttr {
                allowed_access: *access,
                parent_fd: fd,
            };
            // SAFETY: a rule of ours and descriptors we opened.
            let added = unsafe {
                libc::syscall(
                    ADD_RULE,
                    ruleset,
                    RULE_PATH_BENEATH,
                    &rule as *const PathBeneathAttr,
                    0u32,
                )
            };
            let error = io::Error::last_os_error();
            // SAFETY: our descriptor.
            unsafe { libc::close(fd) };
            // A file granted folder rights is EINVAL: the rights are made for its kind above.
            if added != 0 {
                // SAFETY: our descriptor.
                unsafe { libc::close(ruleset) };
                return Err(error);
            }
        }
        // SAFETY: our descriptor and a plain flag word.
        let restricted = unsafe { libc::syscall(RESTRICT, ruleset, 0u32) };
        let error = io::Error::last_os_error();
        // SAFETY: our descriptor.
        unsafe { libc::close(ruleset) };
        if restricted != 0 {
            return Err(error);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// The rules alone (no box): a write outside the writable places is refused by Landlock
    /// itself, a signal to a process outside the domain too.
    #[test]
    fn the_rules_refuse_writes_elsewhere_and_signals_out() {
        let abi = super::super::landlock::abi().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (inside, outside) = (dir.path().join("in"), dir.path().join("out"));
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let rules = InBox::new(abi, std::slice::from_ref(&inside)).unwrap();
        let mut line = format!(
            "echo a > {}/a && cat {}/a && ! (echo b > {}/b) 2>/dev/null",
            inside.display(),
            inside.display(),
            outside.display(),
        );
        if abi >= 6 {
            line.push_str(&format!(" && ! kill -0 {} 2>/dev/null", std::process::id()));
        }
        let mut command = std::process::Command::new("sh");
        command.args(["-c", &line]);
        // SAFETY: no allocation in the closure; `restrict` makes system calls only.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                rules.restrict()
            });
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{output:?}");
        assert!(!outside.join("b").exists());
    }
}
