//! Project instructions (docs/protocol.md "Project instructions"): `AGENTS.md` at the project's
//! root and in every folder between it and the session's folder (outer first), or `CLAUDE.md` where
//! a folder has no `AGENTS.md`, read only in a trusted project and given to the model under
//! `## Project instructions`, at most `engine.project_instructions_max_bytes` in all.
//!
//! The project's root is the nearest folder from the session's up that holds `.git`, not above the
//! trusted folder and never the home folder (a `~/.git` would make every folder under it one
//! project); without one, the session's folder. Each file is read through the tools' gate
//! ([`ReadGate`]), inside the project's root only: a link to `.env` or a hard link of a key is never
//! sent to the model.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::policy::protected::Protected;
use crate::policy::roots;
use crate::tools::read_gate::ReadGate;

const NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The `## Project instructions` section for a session in `folder`, or `None` when there is
/// nothing to give (no file, the project is not trusted, or the folder is the home folder).
pub fn section(folder: &Path, trusted: &[PathBuf], protected: &Protected, most: usize) -> Option<String> {
    let home = protected.home();
    if folder == home {
        return None;
    }
    let top = trusted
        .iter()
        .filter(|t| roots::is_within(folder, t))
        .min_by_key(|t| t.components().count())?;
    let root = folder
        .ancestors()
        .take_while(|dir| dir.starts_with(top) && *dir != home)
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(folder);
    let within = [crate::canonical::canonicalize(root).ok()?];
    let gate = ReadGate::new(&within, protected);
    let mut dirs: Vec<&Path> = folder.ancestors().take_while(|d| d.starts_with(root)).collect();
    dirs.reverse();
    let mut parts = Vec::new();
    let mut left = most;
    for dir in dirs {
        let Some((name, text)) = NAMES.iter().find_map(|name| {
            let text = read_through(&gate, &dir.join(name), left + 1)?;
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

/// The file's text (at most `limit` bytes, invalid UTF-8 replaced) when the gate opens it.
fn read_through(gate: &ReadGate, file: &Path, limit: usize) -> Option<String> {
    let mut opened = gate
        .open(file)
        .inspect_err(|refusal| refusal.log_unless_missing("not given to the model"))
        .ok()?;
    let mut bytes = Vec::new();
    (&mut opened.file)
        .take(limit as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decisions() -> &'static crate::decisions::Decisions {
        crate::decisions::Decisions::built_in()
    }

    /// The section within the decided most.
    fn section_of(folder: &Path, trusted: &[PathBuf], protected: &Protected) -> Option<String> {
        super::section(
            folder,
            trusted,
            protected,
            decisions().engine.project_instructions_max_bytes,
        )
    }

    /// Protected places under a home folder no test uses.
    fn nowhere() -> Protected {
        Protected::under_home(Path::new("/nonexistent-home"))
    }

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
        let section = section_of(&sub, std::slice::from_ref(&trusted), &nowhere()).unwrap();
        assert_eq!(
            section,
            "## Project instructions\n\n### AGENTS.md\n\nRun cargo test.\n\n\
             ### crates/CLAUDE.md\n\nCrates use edition 2024.\n\n### crates/sub/AGENTS.md\n\nSub has no unsafe."
        );
        assert_eq!(section_of(&sub, &[], &nowhere()), None, "untrusted");
        let elsewhere = home.path().join("elsewhere");
        assert_eq!(
            section_of(&sub, &[elsewhere], &nowhere()),
            None,
            "trusted elsewhere"
        );
        // Without a repository, the session's folder is the project.
        let plain = trusted.join("plain");
        write(&plain.join("AGENTS.md"), "plain");
        assert_eq!(
            section_of(&plain, std::slice::from_ref(&trusted), &nowhere()).unwrap(),
            "## Project instructions\n\n### AGENTS.md\n\nplain"
        );
    }

    #[cfg(unix)]
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
        let text = section_of(&project, &trusted, &nowhere()).unwrap();
        assert!(!text.contains("the key") && text.contains("claude's"), "{text}");

        let most = decisions().engine.project_instructions_max_bytes;
        std::fs::remove_file(project.join("AGENTS.md")).unwrap();
        write(&project.join("AGENTS.md"), &"é".repeat(most));
        let text = section_of(&project, &trusted, &nowhere()).unwrap();
        assert!(text.len() < most + 200, "{}", text.len());
        assert!(
            text.ends_with(&format!("more than {most} bytes in all.]")),
            "{}",
            &text[text.len() - 80..]
        );
    }

    /// Attack (issue 33): AGENTS.md or CLAUDE.md a symlink to `.env` or `.git/config`, or a hard
    /// link of `~/.ssh/id_ed25519`, must not reach the model.
    #[cfg(unix)]
    #[test]
    fn instructions_linked_to_a_secret_are_not_sent() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let project = base.join("work/project");
        write(&home.join(".ssh/id_ed25519"), "PRIVATE KEY");
        write(&project.join(".env"), "API_TOKEN=hunter2");
        write(&project.join(".git/config"), "[remote] url = https://user:pw@x");
        let trusted = [base.join("work")];
        // (what, the file linked to, a hard link rather than a symlink)
        let cases = [
            ("a symlink to .env", project.join(".env"), false),
            ("a symlink to .git/config", project.join(".git/config"), false),
            ("a hard link of the key", home.join(".ssh/id_ed25519"), true),
        ];
        for name in NAMES {
            for (what, target, hard) in &cases {
                let at = project.join(name);
                if *hard {
                    std::fs::hard_link(target, &at).unwrap();
                } else {
                    std::os::unix::fs::symlink(target, &at).unwrap();
                }
                let protected = Protected::under_home(&home);
                let text = section_of(&project, &trusted, &protected).unwrap_or_default();
                for secret in ["PRIVATE KEY", "hunter2", "user:pw"] {
                    assert!(!text.contains(secret), "{name} as {what} was sent: {text}");
                }
                std::fs::remove_file(&at).unwrap();
            }
        }
    }

    /// Attack (issue 33): with the home folder trusted and a `~/.git`, the home folder became the
    /// project's root, and the folders between it and the session's folder were read.
    #[test]
    fn the_home_folder_is_never_the_projects_root() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        let folder = home.join("work/notes");
        std::fs::create_dir_all(home.join(".git")).unwrap();
        std::fs::create_dir_all(&folder).unwrap();
        write(&home.join("AGENTS.md"), "HOME INSTRUCTIONS");
        write(&home.join("work/AGENTS.md"), "BETWEEN");
        write(&folder.join("AGENTS.md"), "the session's own");
        let text = section_of(
            &folder,
            std::slice::from_ref(&home),
            &Protected::under_home(&home),
        )
        .unwrap_or_default();
        assert!(
            !text.contains("HOME INSTRUCTIONS") && !text.contains("BETWEEN"),
            "{text}"
        );
        assert!(text.contains("the session's own"), "{text}");
    }
}
