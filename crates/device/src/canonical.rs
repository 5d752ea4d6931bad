//! A path made absolute with its links resolved, as people write it on every system: Windows'
//! `GetFinalPathNameByHandle` gives `\\?\C:\work`, which is shown to people (the roots, a
//! terminal's folder) and compared with paths they typed, so the `\\?\` is dropped where the path
//! means the same without it (dunce's rules: a drive path, short enough, no reserved names).
//! Every resolution in the device goes through here, so resolved paths compare equal.

use std::io;
use std::path::{Path, PathBuf};

/// `std::fs::canonicalize`, without Windows' verbatim prefix where the path needs none.
pub fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    #[cfg(windows)]
    return dunce::canonicalize(path);
    #[cfg(not(windows))]
    std::fs::canonicalize(path)
}
