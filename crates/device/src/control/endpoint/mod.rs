//! The platform part of the control endpoint, behind one small interface: [`Listener::bind`],
//! [`Listener::accept`] (a stream and the peer's uid) and [`connect`].
//!
//! - Unix ([`unix`]): a socket file in a private folder (0700), the socket 0600, the peer's uid
//!   from the socket's credentials.
//! - Windows ([`windows`]): a named pipe whose name is made from the socket's path, with a
//!   security descriptor that lets only this account open it (an owner-only DACL, [`owner_only_sddl`]),
//!   made as the pipe's first instance (so a pipe someone else made first under that name is not
//!   used) and refusing remote clients. The DACL is the check of who connects: a connection is this
//!   account's.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use unix::{Listener, Stream, connect, own_uid};
#[cfg(windows)]
pub use windows::{Listener, Stream, connect, own_uid};

use sha2::Digest;
use std::path::Path;

/// The named pipe that stands for the socket at `path`: one per device folder, so two homes (the
/// tests') have two pipes.
#[cfg_attr(not(windows), allow(dead_code))]
pub fn pipe_name(path: &Path) -> String {
    let digest = sha2::Sha256::digest(path.to_string_lossy().as_bytes());
    format!(r"\\.\pipe\lembas-control-{}", hex::encode(&digest[..12]))
}

/// A security descriptor, in SDDL, that gives `sid` (the account's, `S-1-5-21-…`) every right and
/// nobody else any: `P` keeps inherited entries out.
#[cfg_attr(not(windows), allow(dead_code))]
pub fn owner_only_sddl(sid: &str) -> String {
    format!("D:P(A;;GA;;;{sid})")
}

#[cfg(test)]
mod tests {
    use super::{owner_only_sddl, pipe_name};
    use std::path::Path;

    #[test]
    fn each_folder_has_its_own_pipe_in_the_pipe_namespace() {
        let one = pipe_name(Path::new(r"C:\Users\a\AppData\Local\lembas\control.sock"));
        let other = pipe_name(Path::new(r"C:\Users\b\AppData\Local\lembas\control.sock"));
        assert!(one.starts_with(r"\\.\pipe\lembas-control-"), "{one}");
        assert_eq!(one.len(), r"\\.\pipe\lembas-control-".len() + 24);
        assert_ne!(one, other);
        assert_eq!(
            one,
            pipe_name(Path::new(r"C:\Users\a\AppData\Local\lembas\control.sock"))
        );
    }

    #[test]
    fn only_the_account_is_allowed_and_nothing_is_inherited() {
        assert_eq!(
            owner_only_sddl("S-1-5-21-1-2-3-1001"),
            "D:P(A;;GA;;;S-1-5-21-1-2-3-1001)"
        );
    }
}
