//! What the box does inside a root: the places that govern what runs later are bound read-only
//! (`.git/config`, `.git/hooks`, `.git/info`, a `.git` file, `.lembas/`, `.agent/`), and the files
//! whose names say they hold a secret (`.env*`, `*.pem`, `*.key`, `id_*`) are not there at all.
//!
//! The roots are walked when a command starts, within bounds (a home folder given as a root can hold
//! millions of files): [`MAX_DEPTH`] folders deep and [`MAX_ENTRIES`] entries a root, never into
//! `node_modules` or a link. A governing place a root lacks cannot be bound (there is nothing to
//! bind), so it is named in `absent`: whatever a command makes there is removed when it ends.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::push_new;
use crate::policy::protected::secret_name;

/// How deep below a root the walk looks.
pub const MAX_DEPTH: usize = 8;
/// How many entries of a root the walk looks at.
pub const MAX_ENTRIES: usize = 20_000;

/// Folders never walked into: dependencies, not the person's own files.
const NOT_WALKED: [&str; 1] = ["node_modules"];
/// Inside a `.git` folder, what governs what git runs.
const GIT_GOVERNING: [&str; 3] = ["config", "hooks", "info"];
/// Folders of a project that govern what the device and its commands do later.
const PROJECT_GOVERNING: [&str; 2] = [".lembas", ".agent"];

/// What the box changes inside the roots.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct InsideRoots {
    /// Bound read-only.
    pub governing: Vec<PathBuf>,
    /// Not there for the command.
    pub secrets: Vec<PathBuf>,
    /// Governing places a project lacks: removed after the command when it made them.
    pub absent: Vec<PathBuf>,
}

impl InsideRoots {
    /// Walks `roots` (resolved). A project is a root or a folder holding `.git`.
    pub fn of(roots: &[PathBuf]) -> Self {
        let mut found = Self::default();
        for root in roots {
            let mut budget = MAX_ENTRIES;
            found.project(root);
            found.walk(root, 0, &mut budget);
        }
        found
    }

    fn project(&mut self, folder: &Path) {
        for name in PROJECT_GOVERNING {
            let place = folder.join(name);
            match std::fs::symlink_metadata(&place) {
                Ok(_) => push_new(&mut self.governing, place),
                Err(_) => push_new(&mut self.absent, place),
            }
        }
    }

    fn walk(&mut self, folder: &Path, depth: usize, budget: &mut usize) {
        let Ok(entries) = std::fs::read_dir(folder) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let path = entry.path();
            if name == OsStr::new(".git") {
                self.git(&path, kind.is_dir());
            } else if kind.is_symlink() {
                // Covering a link would cover where it leads (a mount follows it); its target is
                // covered where it lies when it is a secret, and is out of the box when protected.
            } else if kind.is_dir() {
                if depth + 1 < MAX_DEPTH && !NOT_WALKED.iter().any(|n| name == OsStr::new(n)) {
                    self.walk(&path, depth + 1, budget);
                }
            } else if secret_name(&name) {
                self.secrets.push(path);
            }
        }
    }

    /// A repository inside a root: its governing parts, and its folder is a project.
    fn git(&mut self, git: &Path, folder: bool) {
        if folder {
            for name in GIT_GOVERNING {
                let place = git.join(name);
                if std::fs::symlink_metadata(&place).is_ok() {
                    push_new(&mut self.governing, place);
                } else {
                    push_new(&mut self.absent, place);
                }
            }
        } else {
            // A worktree's `.git` file names where its repository is.
            push_new(&mut self.governing, git.to_owned());
        }
        if let Some(project) = git.parent() {
            self.project(project);
        }
    }
}

/// Removes what a command made at `absent` places, without following a link; the names removed.
pub fn sweep(absent: &[PathBuf]) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for place in absent {
        let Ok(meta) = std::fs::symlink_metadata(place) else {
            continue;
        };
        let gone = if meta.is_dir() {
            std::fs::remove_dir_all(place)
        } else {
            std::fs::remove_file(place)
        };
        if gone.is_ok() {
            removed.push(place.clone());
        }
    }
    removed
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn finds_the_governing_places_and_the_secrets_of_every_project_in_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for file in [
            ".env",
            "src/main.rs",
            "deploy/server.pem",
            "deploy/id_ed25519",
            "sub/.git/config",
            "sub/.git/hooks/pre-commit.sample",
            "sub/.env.local",
            "node_modules/pkg/.env",
            "a/b/c/d/e/f/g/h/i/.env",
        ] {
            let path = root.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "x").unwrap();
        }
        fs::create_dir_all(root.join(".agent/commands")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("cert.key")).unwrap();
        let found = InsideRoots::of(std::slice::from_ref(&root));
        let rel = |list: &[PathBuf]| -> Vec<String> {
            let mut names: Vec<String> = list
                .iter()
                .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
                .collect();
            names.sort();
            names
        };
        assert_eq!(
            rel(&found.secrets),
            [".env", "deploy/id_ed25519", "deploy/server.pem", "sub/.env.local"],
            "deeper than the bound, inside node_modules and links are not walked"
        );
        assert_eq!(
            rel(&found.governing),
            [".agent", "sub/.git/config", "sub/.git/hooks"]
        );
        assert_eq!(
            rel(&found.absent),
            [".lembas", "sub/.agent", "sub/.git/info", "sub/.lembas"]
        );
    }

    #[test]
    fn a_sweep_removes_what_was_made_and_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let outside = root.join("outside");
        fs::create_dir_all(outside.join("kept")).unwrap();
        fs::create_dir_all(root.join("p/.agent/commands")).unwrap();
        fs::write(root.join("p/.agent/commands/deploy.md"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("p/.lembas")).unwrap();
        let absent = [
            root.join("p/.agent"),
            root.join("p/.lembas"),
            root.join("p/.none"),
        ];
        assert_eq!(sweep(&absent), [root.join("p/.agent"), root.join("p/.lembas")]);
        assert!(outside.join("kept").exists());
        assert!(!root.join("p/.agent").exists());
    }
}
