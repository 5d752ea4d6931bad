//! The files the attempts aim at: secrets outside the root and protected files inside it, each
//! holding a marker that must never reach the peer, and the symlinks that lead to them.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// In every secret file's text and in one outside file's name: found anywhere the peer can see,
/// something was read or listed that should not have been.
pub const MARKER: &str = "MARK7d1c";

pub struct World {
    /// The temporary home, resolved.
    pub home: PathBuf,
    /// The root (configured through `root-link`, a symlink to it) and the session's folder.
    pub work: PathBuf,
    /// Outside every root.
    pub outside: PathBuf,
}

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl World {
    pub fn build(home: &Path) -> World {
        let work = home.join("work");
        let outside = home.join("outside");
        put(&outside.join("secret.txt"), &format!("{MARKER} outside secret\n"));
        put(
            &outside.join(format!("{MARKER}-name.txt")),
            "its name is the secret\n",
        );
        put(&outside.join("deeper/more.txt"), &format!("{MARKER} deeper\n"));
        put(&home.join(".ssh/id_rsa"), &format!("{MARKER} ssh key\n"));
        for protected in [".env", ".ENV", ".Env.local", ".git/config", "key.pem", "ID_RSA"] {
            put(&work.join(protected), &format!("{MARKER} {protected}\n"));
        }
        put(&work.join("sub/plain.txt"), "an ordinary file\n");
        let link = |target: &Path, name: &str| symlink(target, work.join(name)).unwrap();
        link(&outside.join("secret.txt"), "link-file");
        link(Path::new("../outside/secret.txt"), "link-file-rel");
        link(&outside, "link-dir");
        link(Path::new("../outside"), "link-dir-rel");
        link(Path::new("chain-b"), "chain-a");
        link(Path::new("../outside"), "chain-b");
        link(home, "link-home");
        link(Path::new(".env"), "link-env");
        link(Path::new(".git"), "link-git");
        link(&home.join(".ssh"), "link-ssh");
        link(&outside, "caf\u{e9}");
        symlink(&work, home.join("root-link")).unwrap();
        World {
            home: home.to_path_buf(),
            work,
            outside,
        }
    }

    /// The configured root: a symlink to `work`.
    pub fn root_link(&self) -> PathBuf {
        self.home.join("root-link")
    }

    /// What must never change: every file outside the root and every protected file inside it,
    /// with its bytes and modification time, and the names in those folders.
    pub fn guarded(&self) -> BTreeMap<PathBuf, (Vec<u8>, Option<SystemTime>)> {
        let mut files = Vec::new();
        for dir in [
            self.outside.clone(),
            self.home.join(".ssh"),
            self.work.join(".git"),
        ] {
            files.extend(walk(&dir));
        }
        for name in [".env", ".ENV", ".Env.local", "key.pem", "ID_RSA"] {
            files.push(self.work.join(name));
        }
        files
            .into_iter()
            .map(|path| {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let modified = std::fs::symlink_metadata(&path).and_then(|m| m.modified()).ok();
                (path, (bytes, modified))
            })
            .collect()
    }
}

/// Every entry under `dir` (folders too, so a new one shows).
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path.clone());
            }
            out.push(path);
        }
    }
    out
}
