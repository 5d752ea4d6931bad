//! Project instructions (docs/protocol.md "Project instructions"): `AGENTS.md` at the project's
//! root and in every folder between it and the session's folder (outer first), or `CLAUDE.md` where
//! a folder has no `AGENTS.md`, read only in a trusted project and given to the model under
//! `## Project instructions`, at most `engine.project_instructions_max_bytes` in all.
//!
//! The project's root is the nearest folder from the session's up that holds `.git`, not above the
//! trusted folder; without one, the session's folder. A file is read only when it resolves (links
//! followed) inside the project's root: a link to a key elsewhere is never sent to the model.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::decisions::decisions;
use crate::policy::roots;

const NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The `## Project instructions` section for a session in `folder`, or `None` when there is
/// nothing to give (no file, or the project is not trusted).
pub fn section(folder: &Path, trusted: &[PathBuf]) -> Option<String> {
    let top = trusted
        .iter()
        .filter(|t| roots::is_within(folder, t))
        .min_by_key(|t| t.components().count())?;
    let root = folder
        .ancestors()
        .take_while(|dir| dir.starts_with(top))
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(folder);
    let resolved_root = std::fs::canonicalize(root).ok()?;
    let mut dirs: Vec<&Path> = folder.ancestors().take_while(|d| d.starts_with(root)).collect();
    dirs.reverse();
    let most = decisions().engine.project_instructions_max_bytes;
    let mut parts = Vec::new();
    let mut left = most;
    for dir in dirs {
        let Some((name, text)) = NAMES.iter().find_map(|name| {
            let text = read_within(&dir.join(name), &resolved_root, left + 1)?;
            Some((dir.join(name), text))
        }) else {
            continue;
        };
        let shown = name.strip_prefix(root).unwrap_or(&name).display().to_string();
        let mut text = text;
        let cut = text.len() > left;
        if cut {
            let mut at = left;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
        }
        left -= text.len();
        parts.push(format!("### {shown}\n\n{}", text.trim_end()));
        if cut {
            parts.push(format!(
                "[The project's instructions are cut here: more than {most} bytes in all.]"
            ));
            break;
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!("## Project instructions\n\n{}", parts.join("\n\n")))
}

/// The file's text (at most `limit` bytes, invalid UTF-8 replaced) when it is a file that
/// resolves inside `root`.
fn read_within(file: &Path, root: &Path, limit: usize) -> Option<String> {
    let resolved = std::fs::canonicalize(file).ok()?;
    if !resolved.starts_with(root) || !resolved.is_file() {
        if resolved.is_file() {
            tracing::warn!(
                "{} leads outside the project ({}): not given to the model",
                file.display(),
                resolved.display()
            );
        }
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&resolved)
        .ok()?
        .take(limit as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn outer_first_agents_before_claude_and_only_where_trusted() {
        let home = tempfile::tempdir().unwrap();
        let trusted = std::fs::canonicalize(home.path()).unwrap().join("work");
        let repo = trusted.join("repo");
        let sub = repo.join("crates/sub");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&sub).unwrap();
        // Above the project's root: not read.
        write(&trusted.join("AGENTS.md"), "above the repo");
        write(&repo.join("AGENTS.md"), "Run cargo test.\n");
        write(&repo.join("CLAUDE.md"), "not read: AGENTS.md is there");
        write(&repo.join("crates/CLAUDE.md"), "Crates use edition 2024.");
        write(&sub.join("AGENTS.md"), "Sub has no unsafe.");
        let section = section(&sub, std::slice::from_ref(&trusted)).unwrap();
        assert_eq!(
            section,
            "## Project instructions\n\n### AGENTS.md\n\nRun cargo test.\n\n\
             ### crates/CLAUDE.md\n\nCrates use edition 2024.\n\n### crates/sub/AGENTS.md\n\nSub has no unsafe."
        );
        assert_eq!(super::section(&sub, &[]), None, "untrusted");
        let elsewhere = home.path().join("elsewhere");
        assert_eq!(super::section(&sub, &[elsewhere]), None, "trusted elsewhere");
        // Without a repository, the session's folder is the project.
        let plain = trusted.join("plain");
        write(&plain.join("AGENTS.md"), "plain");
        assert_eq!(
            super::section(&plain, std::slice::from_ref(&trusted)).unwrap(),
            "## Project instructions\n\n### AGENTS.md\n\nplain"
        );
    }

    #[test]
    fn a_link_out_of_the_project_is_not_read_and_the_whole_is_bounded() {
        let home = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(home.path()).unwrap();
        let project = root.join("project");
        write(&root.join("secret"), "the key");
        std::fs::create_dir_all(&project).unwrap();
        std::os::unix::fs::symlink(root.join("secret"), project.join("AGENTS.md")).unwrap();
        write(&project.join("CLAUDE.md"), "claude's");
        let trusted = [project.clone()];
        let text = section(&project, &trusted).unwrap();
        assert!(!text.contains("the key") && text.contains("claude's"), "{text}");

        let most = decisions().engine.project_instructions_max_bytes;
        std::fs::remove_file(project.join("AGENTS.md")).unwrap();
        write(&project.join("AGENTS.md"), &"é".repeat(most));
        let text = section(&project, &trusted).unwrap();
        assert!(text.len() < most + 200, "{}", text.len());
        assert!(
            text.ends_with(&format!("more than {most} bytes in all.]")),
            "{}",
            &text[text.len() - 80..]
        );
    }
}
