//! Where a command's file arguments point, worked out lexically (the judge is pure: it reads no
//! file system, so a symlink is judged by its own path), and which removals are catastrophic. The
//! protected places are `crate::policy::protected`, shared with the file tools.

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
}
