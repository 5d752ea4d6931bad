//! `plan_submit`'s file: written in the session's folder (the path the model gave, or
//! `.agent/plans/<time>-plan.md`), never outside it.

use std::path::{Component, Path, PathBuf};

/// Writes the plan; the path relative to the project, or a sentence for the model.
pub fn write(project: &Path, given: Option<&str>, text: &str, stamp: &str) -> Result<String, String> {
    let relative = match given.map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => inside(project, Path::new(p))?,
        None => PathBuf::from(".agent/plans").join(format!("{stamp}-plan.md")),
    };
    let target = project.join(&relative);
    let parent = target.parent().unwrap_or(project);
    // A symlinked folder on the way could lead out of the project: the deepest one that exists
    // already must resolve inside it, and so must the folder once made.
    let existing = parent.ancestors().find(|a| a.exists()).unwrap_or(project);
    check_resolved(project, existing, &relative)?;
    std::fs::create_dir_all(parent).map_err(|e| format!("The plan could not be saved: {e}."))?;
    check_resolved(project, parent, &relative)?;
    if target.is_symlink() {
        return Err(format!(
            "{} is a symlink; the plan is not written through it.",
            relative.display()
        ));
    }
    std::fs::write(&target, text).map_err(|e| format!("The plan could not be saved: {e}."))?;
    Ok(relative.to_string_lossy().replace('\\', "/"))
}

/// The given path relative to the project; an error when it leaves it.
fn inside(project: &Path, given: &Path) -> Result<PathBuf, String> {
    let outside = || {
        format!(
            "The plan can only be saved inside the session's folder ({}); {} is not.",
            project.display(),
            given.display()
        )
    };
    let relative = if given.is_absolute() {
        given.strip_prefix(project).map_err(|_| outside())?.to_path_buf()
    } else {
        given.to_path_buf()
    };
    if relative.as_os_str().is_empty()
        || relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(outside());
    }
    Ok(relative)
}

fn check_resolved(project: &Path, dir: &Path, relative: &Path) -> Result<(), String> {
    let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    match std::fs::canonicalize(dir) {
        Ok(resolved) if resolved.starts_with(&project) => Ok(()),
        _ => Err(format!(
            "The plan can only be saved inside the session's folder; {} leads out of it.",
            relative.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_default_and_a_given_path() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap();
        let rel = write(&project, None, "# Plan", "2026-01-02-030405").unwrap();
        assert_eq!(rel, ".agent/plans/2026-01-02-030405-plan.md");
        assert_eq!(std::fs::read_to_string(project.join(&rel)).unwrap(), "# Plan");
        let rel = write(&project, Some("docs/plan.md"), "x", "s").unwrap();
        assert_eq!(rel, "docs/plan.md");
        let abs = project.join("abs.md");
        assert_eq!(write(&project, abs.to_str(), "x", "s").unwrap(), "abs.md");
    }

    #[test]
    fn never_outside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(dir.path()).unwrap().join("p");
        std::fs::create_dir(&project).unwrap();
        for given in ["../out.md", "/etc/plan.md", "a/../../out.md"] {
            assert!(write(&project, Some(given), "x", "s").is_err(), "{given}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path(), project.join("link")).unwrap();
            assert!(write(&project, Some("link/out.md"), "x", "s").is_err());
            assert!(!dir.path().join("out.md").exists());
        }
    }
}
