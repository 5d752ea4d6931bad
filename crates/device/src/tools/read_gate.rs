//! The one gate for what the device reads for the model (docs/protocol.md "The sandbox under every
//! command", its last point): the `read` tool, a saved attachment, `AGENTS.md`/`CLAUDE.md`, a
//! project's commands and skills, an `@` mention. Each passes the same check, here and nowhere
//! else: the path must lead inside the folders it may come from, it is opened once, and what was
//! opened (the descriptor, not the path again) must be that very file, a regular one, neither
//! protected by its name or place nor another name (a hard link) of a file in a protected place.
//! A symlink swapped in after the check, or a hard link renamed over the file, is caught on the
//! descriptor, so nothing is read from a path twice.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use super::identity;
use super::opened;
use crate::policy::protected::Protected;

/// Why the gate did not open a path for the model.
#[derive(Debug)]
pub enum Refusal {
    /// Protected by its name or its place (docs/protocol.md "Paths").
    Protected { path: PathBuf, what: &'static str },
    /// Another name of a file in a protected place.
    HardLink { path: PathBuf, what: &'static str },
    /// It leads (symlinks followed) outside the folders it may come from.
    Outside { path: PathBuf, resolved: PathBuf },
    /// It could not be opened or is not a regular file (or changed while it was being opened).
    Unreadable { path: PathBuf, error: io::Error },
}

impl Refusal {
    /// The refusal as a sentence naming the path as `shown` (the tools show it relative to the
    /// project).
    pub fn sentence(&self, shown: &str) -> String {
        match self {
            Refusal::Protected { what, .. } => {
                format!("{shown} is a protected path ({what}): remote work never reads or writes it.")
            }
            Refusal::HardLink { what, .. } => format!(
                "{shown} is another name (a hard link) of a file in a protected place ({what}): remote work never reads or writes it."
            ),
            Refusal::Outside { resolved, .. } => format!(
                "{shown} leads outside the folders it may be read from (to {}), so it is not read.",
                resolved.display()
            ),
            Refusal::Unreadable { error, .. } => format!("{shown} cannot be read: {error}."),
        }
    }

    /// Logged, saying what the file was for (`not a command`), unless the file is simply not
    /// there: a missing `AGENTS.md` or command is no refusal worth a word.
    pub fn log_unless_missing(&self, what_for: &str) {
        if let Refusal::Unreadable { error, .. } = self
            && error.kind() == io::ErrorKind::NotFound
        {
            return;
        }
        tracing::warn!("{what_for}: {self}");
    }

    /// The path as it was given to the gate.
    pub fn path(&self) -> &Path {
        match self {
            Refusal::Protected { path, .. }
            | Refusal::HardLink { path, .. }
            | Refusal::Outside { path, .. }
            | Refusal::Unreadable { path, .. } => path,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence(&self.path().display().to_string()))
    }
}

impl std::error::Error for Refusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Refusal::Unreadable { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The check of a path by its name, its place and, when known, the identity of the file there
/// (`metadata`: of the open descriptor where there is one). The only implementation: the file
/// tools call it through [`check_path`] before any tool runs, and [`ReadGate::open`] on what it opened.
fn check(path: &Path, metadata: Option<&Metadata>, protected: &Protected) -> Result<(), Refusal> {
    if let Some(what) = protected.protection(path) {
        return Err(Refusal::Protected {
            path: path.to_path_buf(),
            what,
        });
    }
    if let Some(what) = metadata.and_then(|m| identity::linked_protection_of(m, protected)) {
        return Err(Refusal::HardLink {
            path: path.to_path_buf(),
            what,
        });
    }
    Ok(())
}

/// [`check`] of a resolved path as it is now, before anything is opened (a tool's planned path,
/// a mention being located).
pub fn check_path(resolved: &Path, protected: &Protected) -> Result<(), Refusal> {
    check(resolved, std::fs::metadata(resolved).ok().as_ref(), protected)
}

/// A file the gate opened: the descriptor, where it really is, and its metadata (of the
/// descriptor).
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    pub resolved: PathBuf,
    pub metadata: Metadata,
}

/// The gate for one kind of read: the folders it may read inside (resolved), and the protected
/// places of this computer.
pub struct ReadGate<'a> {
    within: &'a [PathBuf],
    protected: &'a Protected,
}

impl<'a> ReadGate<'a> {
    pub fn new(within: &'a [PathBuf], protected: &'a Protected) -> ReadGate<'a> {
        ReadGate { within, protected }
    }

    /// Opens `path` for reading the model's way, or says why not. The name as written is checked
    /// too: a symlink named `.env` is refused whatever it points at.
    pub fn open(&self, path: &Path) -> Result<Opened, Refusal> {
        let unreadable = |error| Refusal::Unreadable {
            path: path.to_path_buf(),
            error,
        };
        check(path, None, self.protected)?;
        let resolved = crate::canonical::canonicalize(path).map_err(unreadable)?;
        if !self.within.iter().any(|folder| resolved.starts_with(folder)) {
            return Err(Refusal::Outside {
                path: path.to_path_buf(),
                resolved,
            });
        }
        // Opened by the resolved path, then confirmed on the descriptor: it must still be there
        // (no symlink swapped in on the way) and be what the check allows.
        let file = opened::open_file(&resolved).map_err(unreadable)?;
        let metadata = file.metadata().map_err(unreadable)?;
        check(&resolved, Some(&metadata), self.protected).map_err(|refusal| match refusal {
            Refusal::Protected { what, .. } => Refusal::Protected {
                path: path.to_path_buf(),
                what,
            },
            Refusal::HardLink { what, .. } => Refusal::HardLink {
                path: path.to_path_buf(),
                what,
            },
            other => other,
        })?;
        Ok(Opened {
            file,
            resolved,
            metadata,
        })
    }

    /// The whole file when it is at most `most` bytes, read through [`ReadGate::open`].
    pub fn read(&self, path: &Path, most: u64) -> Result<Vec<u8>, Refusal> {
        use std::io::Read;
        let mut opened = self.open(path)?;
        let size = opened.metadata.len();
        if size > most {
            return Err(Refusal::Unreadable {
                path: path.to_path_buf(),
                error: io::Error::other(format!(
                    "it is {size} bytes, more than the {most} read for the model"
                )),
            });
        }
        let mut bytes = Vec::new();
        (&mut opened.file)
            .take(most)
            .read_to_end(&mut bytes)
            .map_err(|error| Refusal::Unreadable {
                path: path.to_path_buf(),
                error,
            })?;
        Ok(bytes)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    struct Place {
        _dir: tempfile::TempDir,
        base: PathBuf,
        protected: Protected,
    }

    fn place() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(base.join("proj/sub")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
        std::fs::write(base.join("proj/.env"), "TOKEN=x").unwrap();
        std::fs::write(base.join("proj/notes.md"), "notes").unwrap();
        std::fs::write(base.join("outside.md"), "outside").unwrap();
        Place {
            protected: Protected::under_home(&home),
            _dir: dir,
            base,
        }
    }

    #[test]
    fn a_file_inside_is_opened_and_read() {
        let p = place();
        let within = [p.base.join("proj")];
        let gate = ReadGate::new(&within, &p.protected);
        assert_eq!(gate.read(&p.base.join("proj/notes.md"), 100).unwrap(), b"notes");
        let opened = gate.open(&p.base.join("proj/sub/../notes.md")).unwrap();
        assert_eq!(opened.resolved, p.base.join("proj/notes.md"));
        let too_big = gate.read(&p.base.join("proj/notes.md"), 2).unwrap_err();
        assert!(too_big.to_string().contains("more than the 2 read"), "{too_big}");
    }

    #[test]
    fn links_out_protected_names_and_hard_links_of_keys_are_refused() {
        let p = place();
        let proj = p.base.join("proj");
        let within = [proj.clone()];
        let gate = ReadGate::new(&within, &p.protected);
        let refused = |path: &Path| gate.open(path).map(|_| ()).unwrap_err();

        std::os::unix::fs::symlink(p.base.join("outside.md"), proj.join("out.md")).unwrap();
        assert!(matches!(refused(&proj.join("out.md")), Refusal::Outside { .. }));
        assert!(matches!(
            refused(&proj.join("../outside.md")),
            Refusal::Outside { .. }
        ));

        std::os::unix::fs::symlink(proj.join(".env"), proj.join("AGENTS.md")).unwrap();
        let env = refused(&proj.join("AGENTS.md"));
        assert!(
            matches!(
                env,
                Refusal::Protected {
                    what: "an environment file",
                    ..
                }
            ),
            "{env}"
        );
        assert_eq!(
            env.sentence("AGENTS.md"),
            "AGENTS.md is a protected path (an environment file): remote work never reads or writes it."
        );

        std::fs::hard_link(p.protected.home().join(".ssh/id_ed25519"), proj.join("key.md")).unwrap();
        let key = refused(&proj.join("key.md"));
        assert!(
            matches!(
                key,
                Refusal::HardLink {
                    what: "your SSH folder",
                    ..
                }
            ),
            "{key}"
        );

        std::os::unix::fs::symlink(proj.join("notes.md"), proj.join(".env.local")).unwrap();
        assert!(matches!(
            refused(&proj.join(".env.local")),
            Refusal::Protected { .. }
        ));
        assert!(matches!(refused(&proj.join("sub")), Refusal::Unreadable { .. }));
        assert!(matches!(
            refused(&proj.join("gone.md")),
            Refusal::Unreadable { .. }
        ));
    }

    #[test]
    fn a_hard_link_renamed_over_the_file_after_the_path_check_is_caught_on_the_descriptor() {
        let p = place();
        let proj = p.base.join("proj");
        check_path(&proj.join("notes.md"), &p.protected).unwrap();
        // The swap between a check by path and the open: the gate's own check is on what it opened.
        std::fs::hard_link(p.protected.home().join(".ssh/id_ed25519"), proj.join("swap")).unwrap();
        std::fs::rename(proj.join("swap"), proj.join("notes.md")).unwrap();
        let within = [proj.clone()];
        let refused = ReadGate::new(&within, &p.protected)
            .open(&proj.join("notes.md"))
            .unwrap_err();
        assert!(matches!(refused, Refusal::HardLink { .. }), "{refused}");
    }
}
