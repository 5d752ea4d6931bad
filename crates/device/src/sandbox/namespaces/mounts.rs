//! Init's side of the box: the mounts, from the person's tree to the box's (the steps are listed in
//! the module above). Between fork and exec, with what the parent made.

use std::ffi::CString;
use std::io;

use super::{Attach, Hide, Layout, check, check_long};

/// Options of a tmpfs that hides a place: empty, unreadable, tiny.
const HIDING: &[u8] = b"mode=000,size=4k,nr_inodes=16\0";
/// A hiding tmpfs with the session's own places below it: passable, not listable.
const PASSABLE: &[u8] = b"mode=711,size=4k,nr_inodes=64\0";
/// The person's runtime folder in the box: there, and empty.
const EMPTIED: &[u8] = b"mode=700,size=4k,nr_inodes=16\0";
/// The box's own `/dev/shm` (Python's multiprocessing needs one).
const SHM: &[u8] = b"mode=1777,size=64m\0";
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const OPEN_TREE_CLONE: libc::c_uint = 0x1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const AT_RECURSIVE: libc::c_int = 0x8000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

impl Layout {
    /// Lays out the box's mounts, then enters the command's folder through them.
    ///
    /// # Safety
    /// In the box's init, between fork and exec.
    pub(super) unsafe fn lay_out(&mut self) -> io::Result<()> {
        // SAFETY: the caller's contract; every pointer is a NUL-terminated string of `self`.
        unsafe {
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for place in &mut self.attach {
                let fd = libc::syscall(
                    libc::SYS_open_tree,
                    libc::AT_FDCWD,
                    place.source.as_ptr(),
                    OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | AT_RECURSIVE as libc::c_uint,
                );
                place.fd = i32::try_from(fd).map_err(|_| io::Error::last_os_error())?;
                if place.fd < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            set_read_only(c"/".as_ptr(), true)?;
            let shm = libc::mount(
                c"tmpfs".as_ptr(),
                c"/dev/shm".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                SHM.as_ptr().cast(),
            );
            gone_is_fine(shm)?;
            // The clones of places below a hiding tmpfs are attached with it.
            let below_hidden: usize = self.hide.iter().map(|h| h.own.len()).sum();
            let direct = self.attach.len() - below_hidden;
            for place in &self.attach[..direct] {
                for folder in &place.make {
                    make_folder(folder)?;
                }
                attach(place)?;
            }
            for place in &self.governing {
                bind_read_only(place, place, true)?;
            }
            for hide in &self.hide {
                self.hide_place(hide)?;
            }
            for place in &self.emptied {
                let done = libc::mount(
                    c"tmpfs".as_ptr(),
                    place.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY,
                    EMPTIED.as_ptr().cast(),
                );
                gone_is_fine(done)?;
            }
            check(libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ))?;
            // The folder was entered before the mounts: enter it again, through them.
            check(libc::chdir(self.cwd.as_ptr()))?;
        }
        Ok(())
    }

    /// # Safety
    /// In the box's init, between fork and exec.
    unsafe fn hide_place(&self, hide: &Hide) -> io::Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            if !hide.folder {
                return bind_read_only(&self.absent_file, &hide.target, false);
            }
            let (options, flags) = if hide.own.is_empty() {
                (HIDING, libc::MS_RDONLY)
            } else {
                (PASSABLE, 0)
            };
            let done = libc::mount(
                c"tmpfs".as_ptr(),
                hide.target.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | flags,
                options.as_ptr().cast(),
            );
            if gone(done) {
                return Ok(());
            }
            check(done)?;
            if hide.own.is_empty() {
                return Ok(());
            }
            for (make, at) in &hide.own {
                for folder in make {
                    make_folder(folder)?;
                }
                attach(&self.attach[*at])?;
            }
            set_read_only(hide.target.as_ptr(), false)
        }
    }
}

/// # Safety
/// Between fork and exec.
unsafe fn make_folder(path: &CString) -> io::Result<()> {
    // SAFETY: a NUL-terminated path.
    let done = unsafe { libc::mkdir(path.as_ptr(), 0o700) };
    if done != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// # Safety
/// Between fork and exec, `place.fd` a clone.
unsafe fn attach(place: &Attach) -> io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        if place.read_only {
            let attr = MountAttr {
                attr_set: MOUNT_ATTR_RDONLY,
                attr_clr: 0,
                propagation: 0,
                userns_fd: 0,
            };
            check_long(libc::syscall(
                libc::SYS_mount_setattr,
                place.fd,
                c"".as_ptr(),
                libc::AT_EMPTY_PATH | AT_RECURSIVE,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ))?;
        }
        check_long(libc::syscall(
            libc::SYS_move_mount,
            place.fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            place.target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        ))?;
        libc::close(place.fd);
    }
    Ok(())
}

/// Binds `source` at `target` read-only. A target that is not there (below a covered place) has
/// nothing to protect.
///
/// # Safety
/// Between fork and exec.
unsafe fn bind_read_only(source: &CString, target: &CString, recursive: bool) -> io::Result<()> {
    // SAFETY: NUL-terminated paths.
    unsafe {
        let flags = libc::MS_BIND | if recursive { libc::MS_REC } else { 0 };
        let done = libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        );
        if gone(done) {
            return Ok(());
        }
        check(done)?;
        set_read_only(target.as_ptr(), recursive)
    }
}

/// # Safety
/// Between fork and exec; `path` NUL-terminated.
unsafe fn set_read_only(path: *const libc::c_char, recursive: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: the caller's contract; the attribute outlives the call.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path,
            if recursive { AT_RECURSIVE } else { 0 },
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

fn gone(done: libc::c_int) -> bool {
    done != 0
        && matches!(
            io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOENT | libc::ENOTDIR)
        )
}

fn gone_is_fine(done: libc::c_int) -> io::Result<()> {
    if gone(done) { Ok(()) } else { check(done) }
}
