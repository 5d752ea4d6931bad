//! The attempts: each a path spelled to get out of the roots or at a protected file, with what a
//! refusal of it must name. Relative ones are relative to the session's folder (`work`).

use super::world::World;

/// The phrases a refusal names its reason with.
pub const OUTSIDE: &str = "outside the folders";
pub const PROTECTED: &str = "protected path";
pub const MISSING: &str = "does not exist";
pub const NUL: &str = "NUL byte";
/// Folder entry points only: `~` is not expanded there, and a file is not a folder.
pub const NOT_ABSOLUTE: &str = "not an absolute path";
pub const NOT_A_FOLDER: &str = "is not a folder";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    File,
    Folder,
}

#[derive(Debug, Clone)]
pub struct Attempt {
    pub name: &'static str,
    pub path: String,
    pub target: Target,
    /// A refusal must name one of these.
    pub why: &'static [&'static str],
    /// The spelling is only an odd name inside the project (a look-alike, `$HOME` unexpanded):
    /// `write` may create it there, which reaches nothing outside.
    pub inside_name: bool,
}

fn attempt(name: &'static str, path: String, target: Target, why: &'static [&'static str]) -> Attempt {
    Attempt {
        name,
        path,
        target,
        why,
        inside_name: false,
    }
}

fn inside_name(name: &'static str, path: String, target: Target, why: &'static [&'static str]) -> Attempt {
    Attempt {
        inside_name: true,
        ..attempt(name, path, target, why)
    }
}

pub fn attempts(w: &World) -> Vec<Attempt> {
    use Target::{File, Folder};
    let (home, work, outside) = (w.home.display(), w.work.display(), w.outside.display());
    let s = |text: &str| text.to_string();
    vec![
        // `..`, relative and absolute, with slashes and dots.
        attempt("dotdot file", s("../outside/secret.txt"), File, &[OUTSIDE]),
        attempt("dotdot folder", s("../outside"), Folder, &[OUTSIDE]),
        attempt("dotdot twice", s("../../"), Folder, &[OUTSIDE]),
        attempt(
            "dotdot through a real folder",
            s("sub/../../outside/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt(
            "dotdot through a missing folder",
            s("gone/../../outside/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt(
            "absolute dotdot",
            format!("{work}/../outside/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt(
            "absolute outside",
            format!("{outside}/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt("double slash", format!("/{outside}/secret.txt"), File, &[OUTSIDE]),
        attempt("dots between", s("./../outside/./secret.txt"), File, &[OUTSIDE]),
        attempt("trailing slash", s("../outside/"), Folder, &[OUTSIDE]),
        attempt("trailing dot", s("../outside/."), Folder, &[OUTSIDE]),
        // Symlinks out of the root: file and folder, absolute and relative, chained.
        attempt("symlink to a file", s("link-file"), File, &[OUTSIDE]),
        attempt("relative symlink to a file", s("link-file-rel"), File, &[OUTSIDE]),
        attempt("symlinked folder", s("link-dir/secret.txt"), File, &[OUTSIDE]),
        attempt(
            "relative symlinked folder",
            s("link-dir-rel/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt("symlinked folder itself", s("link-dir"), Folder, &[OUTSIDE]),
        attempt("chained symlinks", s("chain-a/secret.txt"), File, &[OUTSIDE]),
        attempt("chained symlinks folder", s("chain-a"), Folder, &[OUTSIDE]),
        attempt(
            "symlink to home",
            s("link-home/outside/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt("symlink to .env", s("link-env"), File, &[PROTECTED]),
        attempt("symlink to .git", s("link-git/config"), File, &[PROTECTED]),
        attempt("symlink to ~/.ssh", s("link-ssh/id_rsa"), File, &[PROTECTED]),
        attempt(
            "through the symlinked root",
            format!("{home}/root-link/../outside/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt(
            "the symlinked root's dotdot",
            format!("{home}/root-link/.."),
            Folder,
            &[OUTSIDE],
        ),
        // Protected paths in odd spellings.
        attempt(".env", s(".env"), File, &[PROTECTED]),
        attempt("./.env", s("./.env"), File, &[PROTECTED]),
        attempt(".env/", s(".env/"), File, &[PROTECTED]),
        attempt(".env/.", s(".env/."), File, &[PROTECTED]),
        attempt(".ENV", s(".ENV"), File, &[PROTECTED]),
        attempt(".Env.local", s(".Env.local"), File, &[PROTECTED]),
        attempt("sub/../.env", s("sub/../.env"), File, &[PROTECTED]),
        attempt("absolute .env", format!("{work}/.env"), File, &[PROTECTED]),
        attempt(
            ".git/../.git/config",
            s(".git/../.git/config"),
            File,
            &[PROTECTED],
        ),
        attempt(".git/./config", s(".git/./config"), File, &[PROTECTED]),
        attempt(".git folder", s(".git"), Folder, &[PROTECTED]),
        attempt(".git/ folder", format!("{work}/.git/"), Folder, &[PROTECTED]),
        attempt(".GIT/config", s(".GIT/config"), File, &[PROTECTED]),
        attempt("key.pem", s("key.pem"), File, &[PROTECTED]),
        attempt("ID_RSA", s("ID_RSA"), File, &[PROTECTED]),
        // The home folder, spelled.
        attempt("~/.ssh/id_rsa", s("~/.ssh/id_rsa"), File, &[PROTECTED]),
        attempt("~/.ssh", s("~/.ssh"), Folder, &[PROTECTED]),
        attempt("absolute ~/.ssh", format!("{home}/.ssh"), Folder, &[PROTECTED]),
        attempt("~/outside", s("~/outside/secret.txt"), File, &[OUTSIDE]),
        inside_name(
            "$HOME unexpanded",
            s("$HOME/outside/secret.txt"),
            File,
            &[MISSING],
        ),
        // /proc.
        attempt(
            "/proc/self/root",
            format!("/proc/self/root{outside}/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt(
            "/proc/self/root folder",
            format!("/proc/self/root{outside}"),
            Folder,
            &[OUTSIDE],
        ),
        attempt("/proc/self/environ", s("/proc/self/environ"), File, &[OUTSIDE]),
        // Unicode look-alikes and NFC/NFD.
        inside_name(
            "one-dot leaders",
            s("\u{2024}\u{2024}/outside/secret.txt"),
            File,
            &[MISSING],
        ),
        inside_name(
            "division slash",
            s("..\u{2215}outside\u{2215}secret.txt"),
            File,
            &[MISSING],
        ),
        inside_name("cyrillic .env", s(".\u{0435}nv"), File, &[MISSING]),
        attempt(
            "NFC symlinked folder",
            s("caf\u{e9}/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        inside_name(
            "NFD spelling of it",
            s("cafe\u{301}/secret.txt"),
            File,
            &[MISSING, OUTSIDE],
        ),
        // A newline or a NUL.
        attempt("newline after", s("../outside/secret.txt\n"), File, &[OUTSIDE]),
        attempt(
            "newline in a folder",
            s("../outside\n/secret.txt"),
            File,
            &[OUTSIDE],
        ),
        attempt("NUL after", s("../outside/secret.txt\0"), File, &[OUTSIDE, NUL]),
        attempt("NUL after .env", s(".env\0"), File, &[PROTECTED, NUL]),
    ]
}
