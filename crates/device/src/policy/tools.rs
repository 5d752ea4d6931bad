//! docs/protocol.md "Modes": whether a file tool may read or write a path, given the mode and where the
//! path is. Pure: the path must already be resolved (symlinks followed) by the caller, so a link
//! inside the project that points elsewhere is judged by where it points.

use std::path::{Path, PathBuf};

use super::Mode;
use super::bash_judge::{Decision, Judgement};
use super::protected::Protected;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    Read,
    Write,
}

/// Where a resolved path is, as far as permissions go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// Inside the session's project (its folder).
    Project,
    /// The project's `.agent/` (its commands and skills: prompts a person runs later, with a mode
    /// of their own): a write there asks in every mode.
    AgentFolder,
    /// Inside `remote.roots`, but not in the session's project.
    Roots,
    /// Outside every root.
    Outside,
    /// A protected path (docs/protocol.md "Paths"), wherever it is.
    Protected,
}

/// Where `resolved` is. A protected path wins over everything; a path outside every root is
/// `Outside` even inside the project, so that a project left outside the roots (the roots changed
/// during the session) gets nothing more. Compares whole components: `/w/project2` is not inside
/// `/w/proj`.
pub fn place_of(resolved: &Path, project: &Path, roots: &[PathBuf], protected: &Protected) -> Place {
    if protected.protects(resolved) {
        Place::Protected
    } else if !roots.iter().any(|root| resolved.starts_with(root)) {
        Place::Outside
    } else if resolved.starts_with(project.join(".agent")) {
        Place::AgentFolder
    } else if resolved.starts_with(project) {
        Place::Project
    } else {
        Place::Roots
    }
}

/// The decision for an access of `place` in `mode`, with a reason that names no path. Use
/// [`decide_path`] where the path is known, for a reason that names it.
pub fn decide(access: Access, mode: Mode, place: Place) -> Judgement {
    let subject = Subject {
        shown: "this path".into(),
        protection: "Git's internals, environment files, keys or credentials",
    };
    judgement(access, mode, place, &subject)
}

/// [`place_of`] then [`decide`], with a reason that names the path (relative to the project when
/// inside it) and, for a protected one, what it is.
pub fn decide_path(
    access: Access,
    mode: Mode,
    resolved: &Path,
    project: &Path,
    roots: &[PathBuf],
    protected: &Protected,
) -> Judgement {
    let place = place_of(resolved, project, roots, protected);
    let subject = Subject {
        shown: shown_path(resolved, project),
        protection: protected.protection(resolved).unwrap_or_default(),
    };
    judgement(access, mode, place, &subject)
}

/// How a path is named in a reason: relative to the project when inside it, else in full.
pub fn shown_path(resolved: &Path, project: &Path) -> String {
    match resolved.strip_prefix(project) {
        Ok(rest) if rest.as_os_str().is_empty() => "the session's folder".into(),
        Ok(rest) => rest.display().to_string(),
        Err(_) => resolved.display().to_string(),
    }
}

struct Subject {
    shown: String,
    protection: &'static str,
}

/// The table of docs/protocol.md "Modes", one arm per outcome, each with its sentence.
fn judgement(access: Access, mode: Mode, place: Place, subject: &Subject) -> Judgement {
    let what = &subject.shown;
    let verb = match access {
        Access::Read => "Reading",
        Access::Write => "Writing",
    };
    let (decision, reason) = match (access, place, mode) {
        (_, Place::Protected, _) => (
            Decision::Deny,
            format!(
                "{verb} {what} is not allowed: it is a protected path ({}), which remote work never reads or writes.",
                subject.protection
            ),
        ),
        (_, Place::Outside, _) => (
            Decision::Deny,
            format!(
                "{verb} {what} is not allowed: it is outside the folders this computer allows for remote work."
            ),
        ),
        (Access::Read, Place::Project | Place::AgentFolder | Place::Roots, _) => (
            Decision::Allow,
            format!("{verb} {what} is allowed: it is inside the folders this computer allows."),
        ),
        (Access::Write, Place::Project | Place::AgentFolder | Place::Roots, Mode::Plan) => (
            Decision::Deny,
            format!("Plan mode only reads: writing {what} is not allowed."),
        ),
        (Access::Write, Place::Project | Place::AgentFolder | Place::Roots, Mode::Manual) => (
            Decision::Ask,
            format!("Manual mode asks before every write: writing {what} needs approval."),
        ),
        (Access::Write, Place::Project, Mode::Edit | Mode::Auto) => (
            Decision::Allow,
            format!("{verb} {what} is allowed: {mode} mode allows writes inside the session's project."),
        ),
        (Access::Write, Place::AgentFolder, Mode::Edit | Mode::Auto) => (
            Decision::Ask,
            format!(
                "{verb} {what} needs approval in every mode: the project's .agent folder holds commands and skills a person runs later."
            ),
        ),
        (Access::Write, Place::Roots, Mode::Edit | Mode::Auto) => (
            Decision::Ask,
            format!(
                "{verb} {what} needs approval: it is outside the session's project, and {mode} mode asks before writing elsewhere."
            ),
        ),
    };
    Judgement { decision, reason }
}

/// docs/protocol.md "An editor's MCP servers": a tool of a server the editor named does what its
/// server does, out of the device's sight, so it is judged like a write anywhere: denied in plan,
/// asked in manual and edit unless the session allowed that tool always, allowed in auto.
pub fn decide_mcp(mode: Mode, allowed_always: bool, tool: &str) -> Judgement {
    let (decision, reason) = match (mode, allowed_always) {
        (Mode::Plan, _) => (
            Decision::Deny,
            format!(
                "Plan mode only reads: {tool}, a tool of an MCP server, may change things, so it is not allowed."
            ),
        ),
        (Mode::Auto, _) => (
            Decision::Allow,
            format!("{tool} is allowed: auto mode runs the MCP servers' tools."),
        ),
        (Mode::Manual | Mode::Edit, true) => (
            Decision::Allow,
            format!("{tool} is allowed: the person allowed it always in this session."),
        ),
        (Mode::Manual | Mode::Edit, false) => (
            Decision::Ask,
            format!("{tool} is a tool of an MCP server, which may change anything: {mode} mode asks first."),
        ),
    };
    Judgement { decision, reason }
}

#[cfg(test)]
mod tests {
    use super::Access::{Read, Write};
    use super::Place::{AgentFolder, Outside, Project, Protected, Roots};
    use super::*;
    use crate::policy::Mode::{Auto, Edit, Manual, Plan};
    use Decision::{Allow, Ask, Deny};

    const PROTECTED: &str = "is a protected path";
    const OUTSIDE: &str = "outside the folders this computer allows for remote work";
    const INSIDE: &str = "inside the folders this computer allows";
    const PLAN: &str = "Plan mode only reads";
    const MANUAL: &str = "Manual mode asks before every write";
    const IN_PROJECT: &str = "allows writes inside the session's project";
    const ELSEWHERE: &str = "outside the session's project";
    const AGENT: &str = "needs approval in every mode";

    #[test]
    fn an_mcp_tool_is_judged_like_a_write_anywhere() {
        let table = [
            (Plan, false, Deny, "Plan mode only reads"),
            (Plan, true, Deny, "Plan mode only reads"),
            (Manual, false, Ask, "manual mode asks first"),
            (Manual, true, Allow, "allowed it always"),
            (Edit, false, Ask, "edit mode asks first"),
            (Edit, true, Allow, "allowed it always"),
            (Auto, false, Allow, "auto mode runs"),
            (Auto, true, Allow, "auto mode runs"),
        ];
        for (mode, always, decision, says) in table {
            let judged = decide_mcp(mode, always, "files__write");
            assert_eq!(judged.decision, decision, "{mode:?} always={always}");
            assert!(judged.reason.contains(says), "{mode:?}: {}", judged.reason);
            assert!(judged.reason.contains("files__write"), "{}", judged.reason);
        }
    }

    #[test]
    fn every_access_mode_and_place() {
        let table = [
            (Read, Plan, Project, Allow, INSIDE),
            (Read, Plan, Roots, Allow, INSIDE),
            (Read, Plan, Outside, Deny, OUTSIDE),
            (Read, Plan, Protected, Deny, PROTECTED),
            (Read, Manual, Project, Allow, INSIDE),
            (Read, Manual, Roots, Allow, INSIDE),
            (Read, Manual, Outside, Deny, OUTSIDE),
            (Read, Manual, Protected, Deny, PROTECTED),
            (Read, Edit, Project, Allow, INSIDE),
            (Read, Edit, Roots, Allow, INSIDE),
            (Read, Edit, Outside, Deny, OUTSIDE),
            (Read, Edit, Protected, Deny, PROTECTED),
            (Read, Auto, Project, Allow, INSIDE),
            (Read, Auto, Roots, Allow, INSIDE),
            (Read, Auto, Outside, Deny, OUTSIDE),
            (Read, Auto, Protected, Deny, PROTECTED),
            (Write, Plan, Project, Deny, PLAN),
            (Write, Plan, Roots, Deny, PLAN),
            (Write, Plan, Outside, Deny, OUTSIDE),
            (Write, Plan, Protected, Deny, PROTECTED),
            (Write, Manual, Project, Ask, MANUAL),
            (Write, Manual, Roots, Ask, MANUAL),
            (Write, Manual, Outside, Deny, OUTSIDE),
            (Write, Manual, Protected, Deny, PROTECTED),
            (Write, Edit, Project, Allow, IN_PROJECT),
            (Write, Edit, Roots, Ask, ELSEWHERE),
            (Write, Edit, Outside, Deny, OUTSIDE),
            (Write, Edit, Protected, Deny, PROTECTED),
            (Write, Auto, Project, Allow, IN_PROJECT),
            (Write, Auto, Roots, Ask, ELSEWHERE),
            (Write, Auto, Outside, Deny, OUTSIDE),
            (Write, Auto, Protected, Deny, PROTECTED),
            // The project's `.agent/`: read like the project, a write asks in every mode.
            (Read, Plan, AgentFolder, Allow, INSIDE),
            (Read, Auto, AgentFolder, Allow, INSIDE),
            (Write, Plan, AgentFolder, Deny, PLAN),
            (Write, Manual, AgentFolder, Ask, MANUAL),
            (Write, Edit, AgentFolder, Ask, AGENT),
            (Write, Auto, AgentFolder, Ask, AGENT),
        ];
        assert_eq!(table.len(), 38);
        for (access, mode, place, decision, phrase) in table {
            let got = decide(access, mode, place);
            let row = format!("{access:?} {mode} {place:?}");
            assert_eq!(got.decision, decision, "{row}");
            assert!(got.reason.contains(phrase), "{row}: {}", got.reason);
            assert!(got.reason.ends_with('.'), "{row}: a sentence: {}", got.reason);
        }
    }

    fn place(path: &str) -> Place {
        let roots = [PathBuf::from("/w"), PathBuf::from("/srv/shared")];
        place_of(
            Path::new(path),
            Path::new("/w/proj"),
            &roots,
            &crate::policy::protected::Protected::under_home(Path::new("/home/p")),
        )
    }

    #[test]
    fn places_are_compared_by_component() {
        for (path, want) in [
            ("/w/proj", Project),
            ("/w/proj/src/deep/main.rs", Project),
            ("/w/project2/main.rs", Roots),
            ("/w/pro", Roots),
            ("/w/other/notes.md", Roots),
            ("/srv/shared/a", Roots),
            ("/srv/shared-not/a", Outside),
            ("/srv", Outside),
            ("/etc/passwd", Outside),
            ("/w/proj/.env", Protected),
            ("/w/proj/.git/config", Protected),
            ("/w/proj/.git", Protected),
            ("/w/proj/sub/.git/objects/ab", Protected),
            ("/w/proj/certs/server.key", Protected),
            ("/w/proj/.gitignore", Project),
            ("/w/proj/.agent/commands/deploy.md", AgentFolder),
            ("/w/proj/.agent", AgentFolder),
            ("/w/proj/.agentx/a", Project),
            ("/w/proj/.lembas/config.yaml", Protected),
            ("/w/proj/keys/id_rsa_deploy", Protected),
            ("/home/p/.ssh/id_ed25519", Protected),
            ("/home/p/.ssh/config", Protected),
            ("/home/p/notes.txt", Outside),
        ] {
            assert_eq!(place(path), want, "{path}");
        }
    }

    #[test]
    fn a_project_outside_every_root_gets_nothing() {
        let roots = [PathBuf::from("/elsewhere")];
        let got = place_of(
            Path::new("/w/proj/a.rs"),
            Path::new("/w/proj"),
            &roots,
            &crate::policy::protected::Protected::under_home(Path::new("/home/p")),
        );
        assert_eq!(got, Outside);
    }

    #[test]
    fn reasons_name_the_path_and_the_protection() {
        let roots = [PathBuf::from("/w")];
        let (project, home) = (
            Path::new("/w/proj"),
            &crate::policy::protected::Protected::under_home(Path::new("/home/p")),
        );
        let judged =
            |access, mode, path: &str| decide_path(access, mode, Path::new(path), project, &roots, home);

        let env = judged(Read, Auto, "/w/proj/.env");
        assert_eq!(env.decision, Deny);
        assert!(
            env.reason.contains("Reading .env is not allowed"),
            "{}",
            env.reason
        );
        assert!(env.reason.contains("(an environment file)"), "{}", env.reason);

        let plan = judged(Write, Plan, "/w/proj/src/main.rs");
        assert_eq!(
            plan.reason,
            "Plan mode only reads: writing src/main.rs is not allowed."
        );

        let outside = judged(Write, Auto, "/tmp/x");
        assert!(
            outside.reason.starts_with("Writing /tmp/x is not allowed"),
            "{}",
            outside.reason
        );

        let sibling = judged(Write, Edit, "/w/other/a.txt");
        assert_eq!(sibling.decision, Ask);
        assert!(sibling.reason.contains("/w/other/a.txt"), "{}", sibling.reason);
    }
}
