//! Copies of files as they were before a turn's first write to them, so `/undo` can put them back
//! (docs/protocol.md "Commands"). The engine gives each turn a folder (`ToolContext::copies`); it holds
//! `copies.json` — the files in the order the turn first wrote them, each with the name of its copy,
//! or none when the file did not exist — and the copies, named 1, 2, …

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic::replace_file;

const MANIFEST: &str = "copies.json";

/// One file a turn wrote, as it was before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// Resolved, as the tool wrote it.
    pub path: PathBuf,
    /// The copy's name in the turn's folder; `None`: the file did not exist.
    pub copy: Option<String>,
}

/// What a turn's folder says it kept (nothing when it has no list).
pub fn kept_in(dir: &Path) -> io::Result<Vec<Kept>> {
    match fs::read(dir.join(MANIFEST)) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Keeps `path` as it is now, unless this turn already kept it (its first write is the one undone).
/// A tool refuses the write when this fails: a change /undo could not take back is not made.
pub fn keep_before_write(dir: Option<&Path>, path: &Path) -> io::Result<()> {
    let Some(dir) = dir else { return Ok(()) };
    let mut kept = kept_in(dir)?;
    if kept.iter().any(|k| k.path == path) {
        return Ok(());
    }
    crate::paths::ensure_private_dir(dir)?;
    let copy = match fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            let name = (kept.len() + 1).to_string();
            // The planned path, opened checked: a swapped-in symlink's target is not copied.
            let mut from = super::opened::open_file(path)?;
            let mut to = fs::File::create(dir.join(&name))?;
            io::copy(&mut from, &mut to)?;
            Some(name)
        }
        Ok(_) => return Err(io::Error::other("not a regular file")),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    kept.push(Kept {
        path: path.to_path_buf(),
        copy,
    });
    let list = serde_json::to_vec(&kept).map_err(io::Error::other)?;
    replace_file(&dir.join(MANIFEST), &list)
}

/// The content a kept file had (`None`: it did not exist).
pub fn content_of(dir: &Path, kept: &Kept) -> io::Result<Option<Vec<u8>>> {
    match &kept.copy {
        // Names come from our own list; anything else is not read.
        Some(name) if name.bytes().all(|b| b.is_ascii_digit()) => fs::read(dir.join(name)).map(Some),
        Some(_) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "a copy's name is not ours",
        )),
        None => Ok(None),
    }
}

/// Puts a kept file back as it was: its old content, or removed when it did not exist.
pub fn put_back(dir: &Path, kept: &Kept) -> io::Result<()> {
    match content_of(dir, kept)? {
        Some(bytes) => {
            if let Some(folder) = kept.path.parent() {
                fs::create_dir_all(folder)?;
            }
            replace_file(&kept.path, &bytes)
        }
        None => match fs::remove_file(&kept.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_write_of_a_turn_is_kept_and_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let turn = dir.path().join("copies/turn");
        let a = dir.path().join("a.txt");
        let b = dir.path().join("new/b.txt");
        fs::write(&a, "before").unwrap();
        keep_before_write(Some(&turn), &a).unwrap();
        fs::write(&a, "first").unwrap();
        // The second write of the same file keeps nothing new: /undo goes back to "before".
        keep_before_write(Some(&turn), &a).unwrap();
        fs::write(&a, "second").unwrap();
        keep_before_write(Some(&turn), &b).unwrap();
        fs::create_dir_all(b.parent().unwrap()).unwrap();
        fs::write(&b, "created").unwrap();
        let kept = kept_in(&turn).unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[1].copy, None);
        for k in &kept {
            put_back(&turn, k).unwrap();
        }
        assert_eq!(fs::read_to_string(&a).unwrap(), "before");
        assert!(!b.exists());
        assert!(kept_in(&dir.path().join("none")).unwrap().is_empty());
        keep_before_write(None, &a).unwrap();
    }

    #[test]
    fn a_copy_name_that_is_not_ours_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Kept {
            path: dir.path().join("x"),
            copy: Some("../../etc/passwd".into()),
        };
        assert!(content_of(dir.path(), &kept).is_err());
    }
}
