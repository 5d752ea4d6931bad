//! Files compared by identity, not only by name: a hard link inside the project to
//! `~/.ssh/id_ed25519` has a harmless name and the key's contents. A file with more than one name
//! is compared (device and inode) with the files in the protected places outside projects
//! (`~/.ssh`, `~/.gnupg`, `~/.aws`, the keychain, the device's config and state); one with a single
//! name cannot be another name of a protected file, so the common case costs one `stat`.

use std::fs::Metadata;
#[cfg(unix)]
use std::path::Path;

use crate::policy::protected::Protected;

/// Entries looked at under each protected place at most (a deep keychain folder stays bounded).
#[cfg(unix)]
const MAX_ENTRIES: usize = 20_000;
#[cfg(unix)]
const MAX_DEPTH: usize = 4;

/// What the file with `metadata` (of an open descriptor, or of a path) is another name of, when it
/// is a hard link to a file in a protected place.
#[cfg(unix)]
pub fn linked_protection_of(metadata: &Metadata, protected: &Protected) -> Option<&'static str> {
    use std::os::unix::fs::MetadataExt;
    if !metadata.is_file() || metadata.nlink() < 2 {
        return None;
    }
    let wanted = (metadata.dev(), metadata.ino());
    protected
        .places()
        .find(|(place, _)| holds(place, wanted))
        .map(|(_, what)| what)
}

#[cfg(not(unix))]
pub fn linked_protection_of(_metadata: &Metadata, _protected: &Protected) -> Option<&'static str> {
    None
}

/// Whether the file `(dev, ino)` is under `place` (symlinks not followed).
#[cfg(unix)]
fn holds(place: &Path, wanted: (u64, u64)) -> bool {
    use std::os::unix::fs::MetadataExt;
    let mut folders = vec![(place.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return false;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() && depth < MAX_DEPTH {
                folders.push((entry.path(), depth + 1));
            } else if meta.is_file() && (meta.dev(), meta.ino()) == wanted {
                return true;
            }
        }
    }
    false
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_hard_link_to_a_key_is_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(base.join("proj")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "SECRET").unwrap();
        std::fs::hard_link(home.join(".ssh/id_ed25519"), base.join("proj/notes.txt")).unwrap();
        std::fs::write(base.join("proj/plain.txt"), "x").unwrap();
        std::fs::write(base.join("proj/other.txt"), "y").unwrap();
        std::fs::hard_link(base.join("proj/other.txt"), base.join("proj/other2.txt")).unwrap();
        let protected = Protected::under_home(&home);
        let linked = |name: &str| {
            let metadata = std::fs::metadata(base.join("proj").join(name)).unwrap();
            linked_protection_of(&metadata, &protected)
        };
        assert_eq!(linked("notes.txt"), Some("your SSH folder"));
        assert_eq!(linked("plain.txt"), None);
        assert_eq!(linked("other2.txt"), None);
    }
}
