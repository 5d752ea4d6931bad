//! `plan_submit`'s file (docs/protocol.md "Paths"): a record, nothing more. Always a new file under
//! `<project>/.agent/plans/`, named by the time and, at most, a hint taken from the name the model
//! gave; never an existing file, never elsewhere, in every mode. A model that could choose the path
//! wrote `.git/config` (a program run at the next `git status`) and overwrote sources in plan mode.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::policy::protected::Protected;

/// The folder plans go to, relative to the project.
pub const PLANS: &str = ".agent/plans";
/// Longest name hint kept from the model's path.
const HINT_CHARS: usize = 40;

/// Writes the plan as a new file; its path relative to the project, or a sentence for the model.
pub fn write(
    project: &Path,
    given: Option<&str>,
    text: &str,
    stamp: &str,
    protected: &Protected,
) -> Result<String, String> {
    let not_saved = |why: String| format!("The plan was not saved: {why}");
    let project = crate::canonical::canonicalize(project)
        .map_err(|e| not_saved(format!("the session's folder cannot be read ({e}).")))?;
    let folder = plans_folder(&project, protected).map_err(not_saved)?;
    let name = match given.map(hint).filter(|h| !h.is_empty()) {
        Some(hint) => format!("{stamp}-{hint}"),
        None => format!("{stamp}-plan"),
    };
    for n in 1..100 {
        let file = match n {
            1 => format!("{name}.md"),
            n => format!("{name}-{n}.md"),
        };
        match create_new(&folder.join(&file)) {
            Ok(mut out) => {
                out.write_all(text.as_bytes())
                    .and_then(|()| out.sync_all())
                    .map_err(|e| not_saved(format!("{e}.")))?;
                return Ok(format!("{PLANS}/{file}"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(not_saved(format!("{e}."))),
        }
    }
    Err(not_saved(format!("{PLANS} has too many plans named {name}.")))
}

/// `<project>/.agent/plans`, made when missing; each of its two folders a real folder (no symlink
/// the model planted leads elsewhere), inside the project, and not a protected place.
fn plans_folder(project: &Path, protected: &Protected) -> Result<PathBuf, String> {
    let mut folder = project.to_path_buf();
    for part in [".agent", "plans"] {
        folder.push(part);
        match std::fs::symlink_metadata(&folder) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "{} is not a folder (a link or a file), and plans go only into a real folder.",
                    folder.display()
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&folder)
                    .map_err(|e| format!("{} could not be made: {e}.", folder.display()))?;
            }
            Err(e) => return Err(format!("{} cannot be read: {e}.", folder.display())),
        }
    }
    match crate::canonical::canonicalize(&folder) {
        Ok(resolved) if resolved.starts_with(project) && !protected.protects(&resolved) => Ok(resolved),
        _ => Err(format!("{} leads out of the session's folder.", folder.display())),
    }
}

/// A name hint from the model's path: its last name without extension, letters, digits, `-` and
/// `_` only (anything else a `-`), at most [`HINT_CHARS`].
fn hint(given: &str) -> String {
    let last = given.rsplit(['/', '\\']).next().unwrap_or_default();
    let stem = last.split('.').find(|s| !s.is_empty()).unwrap_or_default();
    let cleaned: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(HINT_CHARS)
        .collect();
    cleaned.trim_matches('-').to_string()
}

/// A file that did not exist, opened without following a symlink in its last name.
fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o644).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf, Protected) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let project = base.join("p");
        std::fs::create_dir(&project).unwrap();
        let protected = Protected::under_home(&base.join("home"));
        (dir, project, protected)
    }

    #[test]
    fn writes_a_new_file_under_the_plans_folder() {
        let (_dir, project, protected) = project();
        let rel = write(&project, None, "# Plan", "2026-01-02-030405", &protected).unwrap();
        assert_eq!(rel, ".agent/plans/2026-01-02-030405-plan.md");
        assert_eq!(std::fs::read_to_string(project.join(&rel)).unwrap(), "# Plan");
        // Again at the same second: a second file, the first one kept.
        let again = write(&project, None, "# Other", "2026-01-02-030405", &protected).unwrap();
        assert_eq!(again, ".agent/plans/2026-01-02-030405-plan-2.md");
        assert_eq!(std::fs::read_to_string(project.join(&rel)).unwrap(), "# Plan");
    }

    #[test]
    fn a_path_the_model_gives_is_a_name_hint_at_most() {
        let (dir, project, protected) = project();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(project.join(".git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("src/main.rs"), "fn main() {}\n").unwrap();
        for (given, want) in [
            (".git/config", ".agent/plans/s-config.md"),
            ("src/main.rs", ".agent/plans/s-main.md"),
            (".lembas/config.yaml", ".agent/plans/s-config-2.md"),
            ("../../etc/passwd", ".agent/plans/s-passwd.md"),
            ("/etc/cron.d/x", ".agent/plans/s-x.md"),
            ("docs/the plan!.md", ".agent/plans/s-the-plan.md"),
            ("..", ".agent/plans/s-plan.md"),
        ] {
            assert_eq!(
                write(&project, Some(given), "fsmonitor = evil", "s", &protected).unwrap(),
                want,
                "{given}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(project.join(".git/config")).unwrap(),
            "[core]\n"
        );
        assert_eq!(
            std::fs::read_to_string(project.join("src/main.rs")).unwrap(),
            "fn main() {}\n"
        );
        assert!(!project.join(".lembas").exists());
        assert!(!dir.path().join("etc").exists());
    }

    #[cfg(unix)]
    #[test]
    fn never_through_a_planted_link() {
        let (dir, project, protected) = project();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        // `.agent` a link out of the project: refused, nothing written outside.
        std::os::unix::fs::symlink(&outside, project.join(".agent")).unwrap();
        let err = write(&project, None, "x", "s", &protected).unwrap_err();
        assert!(err.starts_with("The plan was not saved:"), "{err}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        // `.agent/plans` a link into Git's internals: refused.
        std::fs::remove_file(project.join(".agent")).unwrap();
        std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
        std::fs::create_dir(project.join(".agent")).unwrap();
        std::os::unix::fs::symlink(project.join(".git/hooks"), project.join(".agent/plans")).unwrap();
        assert!(write(&project, None, "x", "s", &protected).is_err());
        assert_eq!(std::fs::read_dir(project.join(".git/hooks")).unwrap().count(), 0);
        // A link planted at the very name the next plan would take: not followed.
        std::fs::remove_file(project.join(".agent/plans")).unwrap();
        std::fs::create_dir(project.join(".agent/plans")).unwrap();
        std::os::unix::fs::symlink(outside.join("victim"), project.join(".agent/plans/s-plan.md")).unwrap();
        assert_eq!(
            write(&project, None, "x", "s", &protected).unwrap(),
            ".agent/plans/s-plan-2.md"
        );
        assert!(!outside.join("victim").exists());
    }
}
