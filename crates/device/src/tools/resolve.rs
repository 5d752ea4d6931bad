//! A path argument as the place it really is: relative to the project or absolute (`~` is the home
//! folder), with every symlink followed, so the permission is decided on where a call lands and
//! not on the name it was given.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::ToolContext;

/// `argument` resolved. The part of it that exists is resolved by the file system; the rest (a
/// file or folders not created yet) is added by name, `.` and `..` folded. Nothing that does not
/// exist can be a symlink, so that is exact.
pub fn resolve(argument: &str, ctx: &ToolContext) -> PathBuf {
    let path = if argument == "~" {
        ctx.protected.home().to_path_buf()
    } else if let Some(rest) = argument.strip_prefix("~/") {
        ctx.protected.home().join(rest)
    } else {
        ctx.project.join(argument)
    };
    let mut missing: Vec<OsString> = Vec::new();
    let mut existing = path.as_path();
    loop {
        // Any failure (not found, permission denied, a symlink loop) moves one folder up: what
        // cannot be resolved is judged by its name under the part that can.
        if let Ok(mut resolved) = crate::canonical::canonicalize(existing) {
            for name in missing.iter().rev() {
                push_component(&mut resolved, name);
            }
            return resolved;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                missing.push(last.as_os_str().to_owned());
                existing = parent;
            }
            // Not even the root resolves: keep the path as it was written, folded.
            _ => return lexical(&path),
        }
    }
}

fn push_component(path: &mut PathBuf, name: &OsString) {
    if name == ".." {
        path.pop();
    } else if name != "." {
        path.push(name);
    }
}

fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::test_support::Fixture;

    #[test]
    fn relative_absolute_and_home_paths() {
        let f = Fixture::new();
        f.file("src/main.rs", "fn main() {}\n");
        let ctx = &f.ctx;
        assert_eq!(resolve("src/main.rs", ctx), ctx.project.join("src/main.rs"));
        assert_eq!(
            resolve("./src/../src/main.rs", ctx),
            ctx.project.join("src/main.rs")
        );
        let absolute = ctx.project.join("src/main.rs");
        assert_eq!(resolve(&absolute.to_string_lossy(), ctx), absolute);
        assert_eq!(resolve("", ctx), ctx.project);
        assert_eq!(
            resolve("~/.ssh/config", ctx),
            ctx.protected.home().join(".ssh/config")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_not_there_yet_is_its_resolved_parent_and_name() {
        let f = Fixture::new();
        f.folder("real");
        f.symlink(&f.ctx.project.join("real"), "alias");
        assert_eq!(
            resolve("alias/new.txt", &f.ctx),
            f.ctx.project.join("real/new.txt")
        );
        assert_eq!(
            resolve("alias/a/b/../c.txt", &f.ctx),
            f.ctx.project.join("real/a/c.txt")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_where_it_points() {
        let f = Fixture::new();
        let outside = f.outside_file("secret.txt", "s");
        f.symlink(&outside, "link.txt");
        assert_eq!(resolve("link.txt", &f.ctx), outside);
        // `..` after a symlinked folder is the target's parent, as the file system sees it.
        f.symlink(outside.parent().unwrap_or(&outside), "out");
        assert_eq!(resolve("out/secret.txt", &f.ctx), outside);
    }
}
