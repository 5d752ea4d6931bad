//! Where a command's file arguments point, worked out lexically (the judge is pure: it reads no
//! file system, so a symlink is judged by its own path), and which places are off limits.

use std::path::{Component, Path, PathBuf};

use super::walk::Arg;

/// `arg` as an absolute path: relative to the folder the command runs in, `.` and `..` folded.
/// `None` when part of it is only known at run time.
pub fn resolve(arg: &Arg, folder: &Path) -> Option<PathBuf> {
    if arg.dynamic {
        return None;
    }
    let mut out = PathBuf::from("/");
    for component in folder.join(&arg.text).components() {
        match component {
            Component::Normal(c) => out.push(c),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// DECISIONS.md "Paths": places no remote command writes, even inside a root.
pub fn protected(path: &Path, home: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let key_names = [
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
    ];
    let in_git = path.components().any(|c| c.as_os_str() == ".git");
    let home_places = [
        ".ssh",
        ".gnupg",
        ".aws",
        ".config/lembas",
        ".local/share/keyrings",
        "Library/Keychains",
    ];
    in_git
        || name == ".env"
        || name.starts_with(".env.")
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || key_names
            .iter()
            .any(|k| name == *k || name.strip_prefix(k) == Some(".pub"))
        || home_places.iter().any(|p| path.starts_with(home.join(p)))
}

/// A target whose recursive removal (or recursive chmod/chown) is never allowed: `/`, the home
/// folder, a root itself, or any folder holding one of them. `/*`-style globs count as the folder.
pub fn catastrophic(path: &Path, home: &Path, roots: &[PathBuf]) -> bool {
    let folder = if path.file_name().is_some_and(|n| n == "*" || n == ".*") {
        path.parent().unwrap_or(path)
    } else {
        path
    };
    folder == Path::new("/") || home.starts_with(folder) || roots.iter().any(|r| r.starts_with(folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_lexically() {
        let folder = Path::new("/home/p/work");
        let cases = [
            ("a/../b", "/home/p/work/b"),
            ("/etc/./x", "/etc/x"),
            ("../../..", "/"),
            ("", "/home/p/work"),
        ];
        for (text, want) in cases {
            assert_eq!(
                resolve(&Arg::literal(text), folder),
                Some(PathBuf::from(want)),
                "{text}"
            );
        }
        assert_eq!(
            resolve(
                &Arg {
                    text: "x".into(),
                    dynamic: true
                },
                folder
            ),
            None
        );
    }

    #[test]
    fn protected_places() {
        let home = Path::new("/home/p");
        for yes in [
            "/w/.git/config",
            "/w/.env",
            "/w/.env.local",
            "/w/a.pem",
            "/w/tls.key",
            "/home/p/.ssh/config",
            "/w/id_ed25519.pub",
            "/home/p/.config/lembas/config.yaml",
        ] {
            assert!(protected(Path::new(yes), home), "{yes}");
        }
        for no in [
            "/w/.envrc",
            "/w/src/env.rs",
            "/w/keys.txt",
            "/w/id_card.txt",
            "/home/p/.config/other",
        ] {
            assert!(!protected(Path::new(no), home), "{no}");
        }
    }
}
