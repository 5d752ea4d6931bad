//! Which folders remote work may use: inside a root after resolving symlinks, trusted when
//! `require_trust`, nothing at all while remote work is off. [`folder_verdict`] is pure; the only
//! I/O is [`resolve`], done first by the callers.

use std::path::{Path, PathBuf};

use super::protected::protection;

/// What session/new (and every folder-taking request) would say about a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub accepted: bool,
    pub reason: Option<String>,
}

impl Verdict {
    fn yes() -> Self {
        Self {
            accepted: true,
            reason: None,
        }
    }
    fn no(reason: impl Into<String>) -> Self {
        Self {
            accepted: false,
            reason: Some(reason.into()),
        }
    }
}

/// The folder rules with every path already resolved.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FolderRules {
    pub enabled: bool,
    /// Resolved roots; a root that does not resolve is left out (it accepts nothing).
    pub roots: Vec<PathBuf>,
    pub trusted: Vec<PathBuf>,
    pub require_trust: bool,
    /// The home folder, resolved: protected places (`~/.ssh`…) are found under it.
    pub home: PathBuf,
}

impl FolderRules {
    /// The same rules without trust, for a folder that loads nothing from the project: trust
    /// governs what a session loads (its rules and commands), so a terminal's shell and a folder
    /// listing are judged by the roots alone.
    pub fn roots_only(&self) -> Self {
        Self {
            require_trust: false,
            ..self.clone()
        }
    }
}

/// Why a path given as a folder is none: each a sentence for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoFolder {
    #[error("{} is not an absolute path.", .0.display())]
    NotAbsolute(PathBuf),
    #[error("{} does not exist on this computer.", .0.display())]
    Missing(PathBuf),
    #[error("{} is not a folder.", .0.display())]
    NotAFolder(PathBuf),
    #[error("{} cannot be read: {why}.", path.display())]
    Unreadable { path: PathBuf, why: String },
}

/// Resolves symlinks; the folder must exist and be a directory.
pub fn resolve(path: &Path) -> Result<PathBuf, NoFolder> {
    if !path.is_absolute() {
        return Err(NoFolder::NotAbsolute(path.to_path_buf()));
    }
    let resolved = crate::canonical::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => NoFolder::Missing(path.to_path_buf()),
        std::io::ErrorKind::NotADirectory => NoFolder::NotAFolder(path.to_path_buf()),
        _ => NoFolder::Unreadable {
            path: path.to_path_buf(),
            why: e.to_string(),
        },
    })?;
    if !resolved.is_dir() {
        return Err(NoFolder::NotAFolder(path.to_path_buf()));
    }
    Ok(resolved)
}

/// Whether `dir` (resolved) is `base` or below it, compared by path components.
pub fn is_within(dir: &Path, base: &Path) -> bool {
    dir.starts_with(base)
}

pub fn is_trusted(dir: &Path, trusted: &[PathBuf]) -> bool {
    trusted.iter().any(|t| is_within(dir, t))
}

/// The pure decision for a resolved folder.
pub fn folder_verdict(dir: &Path, rules: &FolderRules) -> Verdict {
    if !rules.enabled {
        return Verdict::no(
            "Remote work is off on this computer. Turn it on in LLeMbas Desktop, or run: lembas remote on",
        );
    }
    if rules.roots.is_empty() {
        return Verdict::no(
            "This computer allows no folders for remote work yet. Add one in LLeMbas Desktop, or run: lembas remote roots add <folder>",
        );
    }
    // docs/protocol.md "Paths": no remote session reads, shows or writes these, even inside a root,
    // so none works in one (a listing of `.git` would show its internals).
    if let Some(what) = protection(dir, &rules.home) {
        return Verdict::no(format!(
            "{} is a protected path ({what}): remote work never uses it.",
            dir.display()
        ));
    }
    if !rules.roots.iter().any(|root| is_within(dir, root)) {
        return Verdict::no(format!(
            "{} is outside the folders this computer allows for remote work. Add it in LLeMbas Desktop, or run: lembas remote roots add {}",
            dir.display(),
            dir.display()
        ));
    }
    if rules.require_trust && !is_trusted(dir, &rules.trusted) {
        return Verdict::no(format!(
            "{} is not in a trusted project. Trust it in LLeMbas Desktop, or run: lembas trust {}",
            dir.display(),
            dir.display()
        ));
    }
    Verdict::yes()
}

/// Resolves `path` and judges it: what every handler calls.
pub fn judge_folder(path: &Path, rules: &FolderRules) -> Result<PathBuf, Verdict> {
    let resolved = resolve(path).map_err(|e| Verdict::no(e.to_string()))?;
    let verdict = folder_verdict(&resolved, rules);
    if verdict.accepted {
        Ok(resolved)
    } else {
        Err(verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(enabled: bool, roots: &[&str], trusted: &[&str], require_trust: bool) -> FolderRules {
        FolderRules {
            enabled,
            roots: roots.iter().map(PathBuf::from).collect(),
            trusted: trusted.iter().map(PathBuf::from).collect(),
            require_trust,
            home: PathBuf::from("/home/u"),
        }
    }

    #[test]
    fn verdicts_table() {
        let on = rules(true, &["/home/u/work"], &["/home/u/work/trusted"], true);
        let no_trust = rules(true, &["/home/u/work"], &[], false);
        let off = rules(false, &["/home/u/work"], &["/home/u/work"], false);
        let no_roots = rules(true, &[], &[], false);
        let cases: &[(&FolderRules, &str, bool, &str)] = &[
            (&on, "/home/u/work/trusted", true, ""),
            (&on, "/home/u/work/trusted/sub/deeper", true, ""),
            (&on, "/home/u/work", false, "not in a trusted project"),
            (&on, "/home/u/work/other", false, "not in a trusted project"),
            (&on, "/home/u/workshop", false, "outside the folders"),
            (&on, "/home/u", false, "outside the folders"),
            (&on, "/", false, "outside the folders"),
            (&no_trust, "/home/u/work", true, ""),
            (&no_trust, "/home/u/work/a/b", true, ""),
            (&no_trust, "/home/u/work2", false, "outside the folders"),
            (&off, "/home/u/work", false, "Remote work is off"),
            (&no_roots, "/home/u/work", false, "allows no folders"),
            // A shell's folder: the roots alone, trust not asked.
            (&on.roots_only(), "/home/u/work", true, ""),
            (&on.roots_only(), "/home/u/work/other", true, ""),
            (&on.roots_only(), "/home/u/workshop", false, "outside the folders"),
            (&off.roots_only(), "/home/u/work", false, "Remote work is off"),
            (&no_roots.roots_only(), "/", false, "allows no folders"),
            // Protected folders, even inside a root and trusted.
            (
                &on,
                "/home/u/work/trusted/.git",
                false,
                "protected path (Git's internals)",
            ),
            (
                &on,
                "/home/u/work/trusted/.git/refs",
                false,
                "protected path (Git's internals)",
            ),
            (&on.roots_only(), "/home/u/work/.git", false, "protected path"),
            (&on, "/home/u/.ssh", false, "protected path (your SSH folder)"),
            (&on, "/home/u/work/trusted/.gitlab", true, ""),
        ];
        for (rules, dir, accepted, reason) in cases {
            let v = folder_verdict(Path::new(dir), rules);
            assert_eq!(v.accepted, *accepted, "{dir}");
            assert!(v.reason.as_deref().unwrap_or("").contains(reason), "{dir}: {v:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_resolved_before_judging() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        let rules = FolderRules {
            enabled: true,
            roots: vec![resolve(&root).unwrap()],
            trusted: vec![],
            require_trust: false,
            home: PathBuf::from("/nonexistent-home"),
        };
        assert!(judge_folder(&root, &rules).is_ok());
        let escaped = judge_folder(&root.join("escape"), &rules).unwrap_err();
        assert!(escaped.reason.unwrap().contains("outside the folders"));
        assert!(
            judge_folder(&root.join("missing"), &rules)
                .unwrap_err()
                .reason
                .unwrap()
                .contains("does not exist")
        );
        assert!(judge_folder(Path::new("relative"), &rules).is_err());
        std::fs::write(root.join("file.txt"), "x").unwrap();
        for file in [
            root.join("file.txt"),
            root.join("file.txt/"),
            root.join("file.txt/."),
        ] {
            let refused = judge_folder(&file, &rules).unwrap_err().reason.unwrap();
            assert!(refused.contains("is not a folder"), "{refused}");
        }
    }
}
