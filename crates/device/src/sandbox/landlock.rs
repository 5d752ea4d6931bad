//! Linux: the grants as a Landlock ruleset, built in the parent before the command is spawned. The
//! child, between fork and exec, only sets no-new-privileges and restricts itself with the
//! ruleset's descriptor: two system calls, nothing that allocates or locks (the crate's own
//! `restrict_self` consumes the ruleset and builds a status, so it is not used there).
//!
//! Listing the folders and opening a descriptor for each grant costs milliseconds, every command;
//! a ruleset can restrict any number of children, so the ones made lately are kept and used again
//! while nothing they were made from has changed: the same places, and every folder listed and
//! place granted from still the same inode with the same change times. A folder changed in the last
//! [`RACY`] is not trusted to show its next change in its times (they tick coarsely): such a
//! ruleset is not kept.

use std::cell::RefCell;
use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use super::grants::{Disk, EntryKind, FileRule, Reach, Tree, grants};
use crate::poison::Recover;

/// How long after a folder last changed its times are not trusted to show the next change.
const RACY: Duration = Duration::from_secs(2);
/// How many rulesets are kept (sessions in different modes or roots each have their own).
const KEPT: usize = 8;

/// `LANDLOCK_CREATE_RULESET_VERSION`: asks the kernel for its ABI version instead of a ruleset.
const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// A ruleset ready to be applied in a child.
pub(super) struct Landlock {
    fd: OwnedFd,
    pub rules: usize,
}

/// The kernel's Landlock ABI version, or why there is none.
pub(super) fn abi() -> Result<i32, String> {
    // SAFETY: with a null attribute, size 0 and the version flag, the kernel only answers a number.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if version > 0 {
        return i32::try_from(version).map_err(|_| format!("the kernel answered Landlock ABI {version}"));
    }
    Err(match io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "this kernel has Landlock but it is off (it needs `landlock` in the boot's lsm= list)".into()
        }
        _ => "this kernel has no Landlock (Linux 5.13 or later has it)".into(),
    })
}

/// What the sandbox limits: reads and writes (ABI 1), moves across folders (2), truncation (3).
/// Device ioctls (5) and socket connections (9) are not reads or writes of files and are left
/// alone, so a tool that asks its terminal for its size still works.
fn handled() -> BitFlags<AccessFs> {
    AccessFs::from_all(ABI::V3)
}

fn rights(grant: &FileRule) -> BitFlags<AccessFs> {
    let read = AccessFs::from_read(ABI::V3);
    let rights = match grant.reach {
        Reach::List => BitFlags::from(AccessFs::ReadDir),
        Reach::Read => read,
        Reach::Write => read | AccessFs::from_write(ABI::V3),
    };
    if grant.folder {
        rights
    } else {
        // Landlock refuses folder rights on a file.
        rights & AccessFs::from_file(ABI::V3)
    }
}

/// The places a ruleset is made from.
#[derive(PartialEq, Eq)]
struct Places {
    readable: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
}

/// A place's identity, and a listed folder's change times, as they were when it was looked at.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn stamp(path: &Path, listed: bool) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    let times = |t: (i64, i64)| if listed { t } else { (0, 0) };
    Some(Stamp {
        dev: meta.dev(),
        ino: meta.ino(),
        mtime: times((meta.mtime(), meta.mtime_nsec())),
        ctime: times((meta.ctime(), meta.ctime_nsec())),
    })
}

/// Whether `stamp`'s times are too recent to be relied on (or in the future).
fn racy(stamp: &Stamp, now: SystemTime) -> bool {
    let Ok(now) = now.duration_since(SystemTime::UNIX_EPOCH) else {
        return true;
    };
    let latest = stamp.mtime.max(stamp.ctime).0;
    i64::try_from(now.saturating_sub(RACY).as_secs()).map_or(true, |trusted| latest >= trusted)
}

/// A place looked at while granting: its path, whether it was listed, and its stamp then.
type Seen = (PathBuf, bool, Option<Stamp>);

/// The disk, noting every place looked at, its stamp taken before it is read. A place granted
/// whole (`/tmp`) only keeps its identity: what changes inside it does not change its grant.
struct Recorded {
    seen: RefCell<Vec<Seen>>,
}

impl Recorded {
    fn note(&self, path: &Path, listed: bool) {
        let stamp = stamp(path, listed);
        self.seen.borrow_mut().push((path.to_owned(), listed, stamp));
    }
}

impl Tree for Recorded {
    fn kind(&self, path: &Path) -> Option<EntryKind> {
        self.note(path, false);
        Disk.kind(path)
    }

    fn children(&self, folder: &Path) -> Vec<(OsString, EntryKind)> {
        self.note(folder, true);
        Disk.children(folder)
    }
}

struct Made {
    places: Places,
    seen: Vec<Seen>,
    ruleset: Arc<Landlock>,
}

/// The rulesets made lately, newest last.
type Kept = Mutex<Vec<Made>>;
static MADE: Kept = Mutex::new(Vec::new());

/// The ruleset granting `readable` and `writable` less `hidden`: one made lately when nothing it
/// was made from has changed, else a new one.
pub(super) fn ruleset_for(
    readable: &[PathBuf],
    writable: &[PathBuf],
    hidden: &[PathBuf],
) -> Result<Arc<Landlock>, String> {
    ruleset_kept_in(&MADE, readable, writable, hidden, SystemTime::now())
}

fn ruleset_kept_in(
    kept: &Kept,
    readable: &[PathBuf],
    writable: &[PathBuf],
    hidden: &[PathBuf],
    now: SystemTime,
) -> Result<Arc<Landlock>, String> {
    let places = Places {
        readable: readable.to_vec(),
        writable: writable.to_vec(),
        hidden: hidden.to_vec(),
    };
    let mut made = kept.lock().recover();
    if let Some(at) = made.iter().position(|m| m.places == places) {
        let unchanged = made[at]
            .seen
            .iter()
            .all(|(path, listed, was)| stamp(path, *listed) == *was);
        let kept = made.remove(at);
        if unchanged {
            let ruleset = Arc::clone(&kept.ruleset);
            made.push(kept);
            return Ok(ruleset);
        }
    }
    let tree = Recorded {
        seen: RefCell::new(Vec::new()),
    };
    let ruleset = Arc::new(build(&grants(readable, writable, hidden, &tree))?);
    let seen = tree.seen.into_inner();
    if seen.iter().all(|(_, _, s)| s.is_some_and(|s| !racy(&s, now))) {
        if made.len() >= KEPT {
            made.remove(0);
        }
        made.push(Made {
            places,
            seen,
            ruleset: Arc::clone(&ruleset),
        });
    }
    Ok(ruleset)
}

/// Builds the ruleset for `grants`. A place that cannot be opened (gone since it was listed, not
/// ours to open) is left out: without its grant it is refused, never widened.
fn build(grants: &[FileRule]) -> Result<Landlock, String> {
    let failed = |e: &dyn std::fmt::Display| format!("the Landlock ruleset could not be made: {e}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled())
        .map_err(|e| failed(&e))?
        // ABI 6: no signal to a process outside the command's domain, no connection to an abstract
        // socket made outside it (X11's, a session bus's). Left out where the kernel lacks them.
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(|e| failed(&e))?
        .create()
        .map_err(|e| failed(&e))?;
    let mut rules = 0;
    for grant in grants {
        let Some(fd) = open_path(&grant.path) else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rights(grant)))
            .map_err(|e| failed(&e))?;
        rules += 1;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    let fd = fd.ok_or_else(|| failed(&"the kernel gave no ruleset"))?;
    Ok(Landlock { fd, rules })
}

/// An `O_PATH` descriptor of `path` itself, never of a link's target (a path replaced by a link
/// since it was listed must not grant where the link points).
fn open_path(path: &Path) -> Option<OwnedFd> {
    let name = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated name and flags that take no mode.
    let fd = unsafe { libc::open(name.as_ptr(), libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    // SAFETY: a descriptor just opened and owned by nobody else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

impl Landlock {
    /// Restricts the calling thread. Runs between fork and exec: one system call, no allocation;
    /// no new privileges must be set already. The descriptor is close-on-exec (the kernel makes
    /// every ruleset so) and must outlive the spawn: the caller keeps `self` until it returns.
    pub(super) fn restrict(&self) -> io::Result<()> {
        let fd: RawFd = self.fd.as_raw_fd();
        let flags: libc::c_uint = 0;
        // SAFETY: a descriptor of ours and a plain flag word.
        if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, flags) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_ruleset_is_used_again_until_a_listed_folder_changes() {
        let dir = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(dir.path()).unwrap().join("home");
        fs::create_dir_all(home.join(".ssh")).unwrap();
        fs::create_dir_all(home.join("a")).unwrap();
        // Times well in the past: creating an entry below surely changes them.
        let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        fs::File::open(&home).unwrap().set_modified(past).unwrap();
        let kept = Kept::default();
        // Seen from an hour on, nothing made now is racy.
        let later = SystemTime::now() + Duration::from_secs(3600);
        let (readable, hidden) = ([home.clone()], [home.join(".ssh")]);
        let make = |now| ruleset_kept_in(&kept, &readable, &[], &hidden, now).unwrap();
        let first = make(later);
        assert!(Arc::ptr_eq(&first, &make(later)));
        fs::write(home.join("b"), "").unwrap();
        let changed = make(later);
        assert!(!Arc::ptr_eq(&first, &changed));
        // The home listed, and each of its entries but the hidden one.
        assert_eq!((first.rules, changed.rules), (2, 3));
        assert!(Arc::ptr_eq(&changed, &make(later)));
    }

    #[test]
    fn times_from_the_last_moments_or_the_future_are_racy() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10_000);
        let at = |mtime: i64, ctime: i64| Stamp {
            dev: 1,
            ino: 1,
            mtime: (mtime, 0),
            ctime: (ctime, 0),
        };
        for (stamp, racy_then) in [
            (at(5_000, 5_000), false),
            (at(9_997, 9_997), false),
            (at(9_998, 5_000), true),
            (at(5_000, 9_999), true),
            (at(20_000, 5_000), true),
        ] {
            assert_eq!(racy(&stamp, now), racy_then, "{:?}", stamp.mtime);
        }
    }
}
