//! The control cookie: a secret the runtime writes, fresh at each start, to `control.cookie` in
//! the device's state folder (0600). The peer-credentials check admits every process of this user,
//! and remote work (a model's command, a watch) runs as this user too; the state folder is a place
//! no remote session reads (the file tools, the bash judge and the kernel sandbox refuse it), so
//! presenting the cookie tells the person's own processes (the CLI, the tray, the window) from a
//! command a model runs, which could otherwise connect to the socket (a sandbox that hides files
//! does not mediate `connect()` on a socket's path) and widen its own limits or answer its own
//! cards.
//!
//! It is presented once per connection, as its first request (`hello` `{ cookie }` → `{}`), not
//! as a param of every request: the secret crosses the socket once, the methods' params (which
//! refuse unknown fields) stay as they are, a subscription (which makes no more calls) is covered
//! too, and [`super::Client::connect`] does it, so callers do not change.

use std::io;
use std::path::{Path, PathBuf};

use crate::paths::{self, Dirs};
use crate::rpc::{self, RpcError};
use crate::whole_file::{self, Mode};
use lembas_protocol::Reason;

/// The file's name in the state folder.
pub const FILE: &str = "control.cookie";
/// The cookie's length in bytes (it is written as twice as many hex digits).
const BYTES: usize = 32;

/// Where the runtime writes its cookie: `<state>/control.cookie`.
pub fn path(dirs: &Dirs) -> PathBuf {
    dirs.state.join(FILE)
}

/// A cookie, as hex digits.
#[derive(Clone)]
pub struct Cookie(String);

impl std::fmt::Debug for Cookie {
    /// Never printed: it would let whatever reads the log in.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cookie(..)")
    }
}

impl Cookie {
    /// A new cookie from the OS's random source.
    pub fn fresh() -> io::Result<Cookie> {
        let mut bytes = [0u8; BYTES];
        getrandom::fill(&mut bytes).map_err(|e| {
            io::Error::other(format!(
                "the system gave no random bytes for the control cookie: {e}"
            ))
        })?;
        Ok(Cookie(hex::encode(bytes)))
    }

    /// The hex digits, as presented in `hello`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Writes the cookie to `path`, 0600 from its creation, whole ([`whole_file`]): a reader finds
    /// the old cookie or the new one, never half of one.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        let dir = path
            .parent()
            .ok_or_else(|| io::Error::other("the control cookie's path has no folder"))?;
        paths::ensure_private_dir(dir)?;
        whole_file::write(path, format!("{}\n", self.0).as_bytes(), Mode::PRIVATE)
    }

    /// Reads the cookie a runtime wrote to `path`.
    pub fn read(path: &Path) -> io::Result<Cookie> {
        let text = std::fs::read_to_string(path)?;
        let text = text.trim();
        if text.len() != 2 * BYTES || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "it does not hold a control cookie (64 hex digits)",
            ));
        }
        Ok(Cookie(text.to_ascii_lowercase()))
    }

    /// Whether `presented` is this cookie, compared in constant time (how long it takes says
    /// nothing of how much of it was right).
    pub fn matches(&self, presented: &str) -> bool {
        same(self.0.as_bytes(), presented.as_bytes())
    }
}

/// Constant-time equality of two byte strings; only their lengths (public: a cookie's is fixed)
/// decide early.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

/// The refusal of a request on a connection that has not presented the cookie.
pub(crate) fn missing(path: &Path) -> RpcError {
    RpcError::with_reason(
        rpc::INVALID_REQUEST,
        Reason::Cookie,
        format!(
            "This connection did not present the control cookie from {}: only this user's own LLeMbas processes may use the control socket.",
            path.display()
        ),
    )
}

/// The refusal of a `hello` whose cookie is not this runtime's (or is not there).
pub(crate) fn wrong(path: &Path) -> RpcError {
    RpcError::with_reason(
        rpc::INVALID_PARAMS,
        Reason::Cookie,
        format!(
            "This connection presented a control cookie that is not the one in {} (a runtime started since it was read has a new one: connect again): only this user's own LLeMbas processes may use the control socket.",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_is_fresh_private_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/control.cookie");
        let first = Cookie::fresh().unwrap();
        first.write(&path).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{mode:o}");
            let dir_mode = std::fs::metadata(path.parent().unwrap())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(dir_mode & 0o077, 0, "{dir_mode:o}");
        }
        let read = Cookie::read(&path).unwrap();
        assert!(read.matches(first.as_str()));
        assert_eq!(first.as_str().len(), 64);

        // A second start writes another one over it, and leaves no temporary file behind.
        let second = Cookie::fresh().unwrap();
        second.write(&path).unwrap();
        assert!(!second.matches(first.as_str()));
        assert!(Cookie::read(&path).unwrap().matches(second.as_str()));
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(FILE)]);
        assert!(
            format!("{second:?}").find(second.as_str()).is_none(),
            "never printed"
        );
    }

    #[test]
    fn only_the_same_cookie_matches() {
        let cookie = Cookie::fresh().unwrap();
        let mut other = cookie.as_str().to_string();
        let last = if other.ends_with('0') { "1" } else { "0" };
        other.replace_range(63.., last);
        assert!(!cookie.matches(&other));
        assert!(!cookie.matches(""));
        assert!(!cookie.matches(&cookie.as_str()[..63]));
        assert!(!cookie.matches(&format!("{}0", cookie.as_str())));
        assert!(cookie.matches(cookie.as_str()));
    }

    #[test]
    fn a_file_that_holds_no_cookie_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        assert_eq!(Cookie::read(&path).unwrap_err().kind(), io::ErrorKind::NotFound);
        std::fs::write(&path, "not a cookie\n").unwrap();
        assert_eq!(
            Cookie::read(&path).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
