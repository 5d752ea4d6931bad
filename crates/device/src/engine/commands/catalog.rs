//! The command set of a folder: the built-ins in the spec's order, then custom commands
//! (`<project>/.agent/commands/<name>.md`, `<config>/commands/<name>.md`), then skills
//! (`<project>/.agent/skills/<name>/SKILL.md`, `<config>/skills/<name>/SKILL.md`). The project's
//! win over the user's; a name already taken, a built-in's or a TUI command's is not a command.
//! A project's files are read only in a trusted project (never the home folder), through the tools'
//! gate ([`ReadGate`]): inside the project, not protected, not a hard link of a protected file. A file
//! the model could have linked to `~/.ssh` or `.env` is never sent to it.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::decisions::Commands;
use crate::policy::Mode;
use crate::policy::protected::Protected;
use crate::policy::roots;
use crate::tools::read_gate::ReadGate;
use lembas_protocol::composer::{AvailableCommand, CommandInput, CommandKind};
use lembas_protocol::{Effort, LembasMeta};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandSource {
    Builtin,
    Custom,
    Skill,
}

impl CommandSource {
    fn as_str(self) -> &'static str {
        match self {
            CommandSource::Builtin => "builtin",
            CommandSource::Custom => "custom",
            CommandSource::Skill => "skill",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub name: String,
    pub description: String,
    pub hint: Option<String>,
    pub kind: CommandSource,
    /// A custom command's or skill's text (front matter left out); none for a built-in.
    pub body: String,
    /// What its front matter asks for its prompt: a mode (the session's from then on, lowered to
    /// `remote.max_mode`), a model and an effort (for this prompt only).
    pub mode: Option<Mode>,
    pub model: Option<String>,
    pub effort: Option<Effort>,
}

impl Command {
    /// ACP's `AvailableCommand`, with `_meta.lembas.kind`.
    pub fn acp(&self) -> AvailableCommand {
        AvailableCommand {
            name: self.name.clone(),
            description: self.description.clone(),
            input: self.hint.clone().map(|hint| CommandInput { hint }),
            meta: LembasMeta {
                lembas: CommandKind {
                    kind: self.kind.as_str().to_string(),
                },
            },
        }
    }
}

/// Where the custom commands and skills come from.
pub struct Sources {
    /// The project holding `.agent/`; `None` when the folder is not in a trusted project.
    pub project: Option<PathBuf>,
    /// The user's config folder (`~/.config/lembas`).
    pub user: PathBuf,
    /// The protected places of this computer (the user's config folder, where their own commands
    /// are, among them).
    pub protected: Protected,
    /// The built-ins and how long a command's file may be.
    pub numbers: &'static Commands,
}

/// The project a trusted folder belongs to: the nearest folder, from it up to the trusted folder
/// holding it, that has `.agent/`, never the home folder (`home`, resolved: its `.agent/` would
/// make every folder under it one project). `None` for an untrusted folder or one with no
/// `.agent/`.
pub fn project_of(folder: &Path, trusted: &[PathBuf], home: &Path) -> Option<PathBuf> {
    if !roots::is_trusted(folder, trusted) {
        return None;
    }
    let top = trusted
        .iter()
        .filter(|t| folder.starts_with(t))
        .max_by_key(|t| t.components().count())?;
    folder
        .ancestors()
        .take_while(|d| d.starts_with(top) && *d != home)
        .find(|d| d.join(".agent").is_dir())
        .map(Path::to_path_buf)
}

pub fn command_set(sources: &Sources) -> Vec<Command> {
    let numbers = sources.numbers;
    let mut set: Vec<Command> = numbers
        .builtins
        .iter()
        .map(|b| Command {
            name: b.name.clone(),
            description: b.description.clone(),
            hint: b.hint.clone(),
            kind: CommandSource::Builtin,
            body: String::new(),
            mode: None,
            model: None,
            effort: None,
        })
        .collect();
    let project = sources.project.as_deref();
    for kind in [CommandSource::Custom, CommandSource::Skill] {
        let mut found = Vec::new();
        if let Some(project) = project
            && let Ok(project) = crate::canonical::canonicalize(project)
        {
            let gate = ReadGate::new(std::slice::from_ref(&project), &sources.protected);
            found.extend(read_kind(
                kind,
                &project.join(".agent"),
                &gate,
                numbers.file_max_bytes,
            ));
        }
        // The person's own commands lie in the device's config folder, protected from the model
        // but theirs to read.
        if let Ok(user) = crate::canonical::canonicalize(&sources.user) {
            let protected = sources.protected.clone().with_own(user.clone());
            let within = [user];
            found.extend(read_kind(
                kind,
                &within[0],
                &ReadGate::new(&within, &protected),
                numbers.file_max_bytes,
            ));
        }
        // The project's come first, so they win a name over the user's.
        let mut these: Vec<Command> = Vec::new();
        for command in found {
            let taken = set.iter().chain(&these).any(|c| c.name == command.name)
                || numbers.tui_only.contains(&command.name);
            if !taken {
                these.push(command);
            }
        }
        these.sort_by(|a, b| a.name.cmp(&b.name));
        set.extend(these);
    }
    set
}

/// The commands or skills under `base` (`.agent` or the user's config folder), each read through
/// `gate`.
fn read_kind(kind: CommandSource, base: &Path, gate: &ReadGate, max_bytes: u64) -> Vec<Command> {
    let folder = base.join(match kind {
        CommandSource::Skill => "skills",
        _ => "commands",
    });
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut commands = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let (name, file) = match kind {
            CommandSource::Skill => (entry.file_name(), path.join("SKILL.md")),
            _ if path.extension().is_some_and(|e| e == "md") => match path.file_stem() {
                Some(stem) => (stem.to_os_string(), path.clone()),
                None => continue,
            },
            _ => continue,
        };
        let Some(name) = name.to_str().filter(|n| is_name(n)) else {
            continue;
        };
        let Some(text) = read_through(gate, &file, max_bytes) else {
            continue;
        };
        let (front, body) = front_matter(&text);
        let field = |key: &str| {
            front
                .as_ref()
                .and_then(|f| f.get(key))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let description = field("description").unwrap_or_else(|| first_line(body));
        let hint = field("argument-hint").or_else(|| {
            (kind == CommandSource::Custom && body.contains("$ARGUMENTS")).then(|| "arguments".to_string())
        });
        commands.push(Command {
            name: name.to_string(),
            description,
            hint,
            kind,
            body: body.trim().to_string(),
            mode: field("mode").and_then(|m| m.parse().ok()),
            model: field("model"),
            effort: field("effort").map(|e| Effort::asked(&e)),
        });
    }
    commands
}

/// A command's name: what can follow the `/` in a prompt (letters, digits, `-`, `_`, `.`).
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The file's text when the gate opens it and it is not too long and UTF-8.
fn read_through(gate: &ReadGate, file: &Path, max_bytes: u64) -> Option<String> {
    let bytes = gate
        .read(file, max_bytes)
        .inspect_err(|refusal| refusal.log_unless_missing("not a command"))
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// YAML front matter between `---` lines at the very start, and the text after it.
fn front_matter(text: &str) -> (Option<Value>, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let Some(end) = rest.find("\n---") else {
        return (None, text);
    };
    let yaml = &rest[..end];
    let after = &rest[end + 4..];
    let body = after.split_once('\n').map(|(_, b)| b).unwrap_or("");
    let front = serde_norway::from_str::<Value>(yaml).ok();
    (front, body)
}

/// A description from the body when the front matter has none: its first line, cut.
fn first_line(body: &str) -> String {
    let line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    line.chars().take(120).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn front_matter_and_descriptions() {
        let (front, body) =
            front_matter("---\ndescription: Ship it\nargument-hint: <v>\n---\nBody $ARGUMENTS\n");
        assert_eq!(front.unwrap()["description"], "Ship it");
        assert_eq!(body, "Body $ARGUMENTS\n");
        let (front, body) = front_matter("# Title\nmore");
        assert!(front.is_none());
        assert_eq!(first_line(body), "Title");
        assert_eq!(front_matter("---\nno end").1, "---\nno end");
        for (name, ok) in [
            ("deploy", true),
            ("a.b-c_d", true),
            (".hidden", false),
            ("a b", false),
            ("", false),
            ("é", false),
        ] {
            assert_eq!(is_name(name), ok, "{name}");
        }
    }

    #[test]
    fn the_set_in_order_with_the_projects_winning() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let project = base.join("work/proj");
        let user = base.join("config");
        write(
            &project.join(".agent/commands/deploy.md"),
            "Deploy $ARGUMENTS from the project",
        );
        write(&user.join("commands/deploy.md"), "Deploy from the user");
        write(
            &user.join("commands/zeta.md"),
            "---\ndescription: Last\nmode: plan\nmodel: m2\neffort: high\n---\nZ",
        );
        write(&project.join(".agent/commands/review.md"), "not the built-in");
        write(&project.join(".agent/commands/settings.md"), "a TUI command");
        write(&project.join(".agent/commands/notes.txt"), "not markdown");
        write(
            &project.join(".agent/skills/lint/SKILL.md"),
            "---\ndescription: Lint it\n---\nRun the linter.",
        );
        write(
            &user.join("skills/deploy/SKILL.md"),
            "taken by the custom command",
        );
        let sources = Sources {
            project: Some(project.clone()),
            user: user.clone(),
            protected: Protected::under_home(&base.join("home")),
            numbers: &crate::decisions::Decisions::built_in().commands,
        };
        let set = command_set(&sources);
        let names: Vec<(&str, CommandSource)> = set.iter().map(|c| (c.name.as_str(), c.kind)).collect();
        assert_eq!(
            names,
            [
                ("compact", CommandSource::Builtin),
                ("plan", CommandSource::Builtin),
                ("undo", CommandSource::Builtin),
                ("review", CommandSource::Builtin),
                ("changelog", CommandSource::Builtin),
                ("init", CommandSource::Builtin),
                ("continue", CommandSource::Builtin),
                ("deploy", CommandSource::Custom),
                ("zeta", CommandSource::Custom),
                ("lint", CommandSource::Skill),
            ]
        );
        assert_eq!(set[7].body, "Deploy $ARGUMENTS from the project");
        assert_eq!(set[7].acp().input.map(|i| i.hint).as_deref(), Some("arguments"));
        assert_eq!(set[8].description, "Last");
        assert_eq!(
            (set[8].mode, set[8].model.as_deref(), set[8].effort),
            (Some(Mode::Plan), Some("m2"), Some(Effort::High))
        );
        assert_eq!((set[7].mode, &set[7].model), (None, &None));
        assert_eq!(set[9].description, "Lint it");
        assert_eq!(set[9].body, "Run the linter.");
        assert_eq!(
            set[3].acp().input.map(|i| i.hint).as_deref(),
            Some("head | <branch>")
        );

        // Without the project (untrusted): the user's own only.
        let sources = Sources {
            project: None,
            ..sources
        };
        let names: Vec<String> = command_set(&sources)
            .into_iter()
            .map(|c| c.name)
            .skip(7)
            .collect();
        assert_eq!(
            names,
            ["deploy", "zeta"],
            "the user's skill deploy is taken by their command"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_projects_file_leading_outside_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let project = base.join("proj");
        write(&base.join("secret.md"), "the secret");
        write(&project.join(".agent/commands/ok.md"), "fine");
        std::os::unix::fs::symlink(base.join("secret.md"), project.join(".agent/commands/leak.md")).unwrap();
        let sources = Sources {
            project: Some(project),
            user: base.join("none"),
            protected: Protected::under_home(&base.join("home")),
            numbers: &crate::decisions::Decisions::built_in().commands,
        };
        let names: Vec<String> = command_set(&sources)
            .into_iter()
            .map(|c| c.name)
            .skip(7)
            .collect();
        assert_eq!(names, ["ok"]);
    }

    #[test]
    fn only_a_trusted_folder_has_a_project() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let proj = base.join("work/proj");
        std::fs::create_dir_all(proj.join(".agent")).unwrap();
        std::fs::create_dir_all(proj.join("src/deep")).unwrap();
        let trusted = vec![base.join("work")];
        assert_eq!(
            project_of(&proj.join("src/deep"), &trusted, &base.join("home")),
            Some(proj.clone())
        );
        assert_eq!(project_of(&proj, &[], &base.join("home")), None);
        assert_eq!(project_of(&base.join("work"), &trusted, &base.join("home")), None);
    }

    /// Attack (issue 33): a project's command or skill that is a hard link of `~/.ssh/id_ed25519`
    /// or a symlink to `.env` is not a command, and its text never reaches the model.
    #[cfg(unix)]
    #[test]
    fn a_projects_command_or_skill_linked_to_a_secret_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let project = base.join("proj");
        write(&home.join(".ssh/id_ed25519"), "PRIVATE KEY");
        write(&project.join(".env"), "API_TOKEN=hunter2");
        write(&project.join(".agent/commands/ok.md"), "fine");
        std::fs::create_dir_all(project.join(".agent/skills/keyskill")).unwrap();
        std::fs::hard_link(
            home.join(".ssh/id_ed25519"),
            project.join(".agent/commands/key.md"),
        )
        .unwrap();
        std::fs::hard_link(
            home.join(".ssh/id_ed25519"),
            project.join(".agent/skills/keyskill/SKILL.md"),
        )
        .unwrap();
        std::os::unix::fs::symlink(project.join(".env"), project.join(".agent/commands/env.md")).unwrap();
        let sources = Sources {
            project: Some(project),
            user: base.join("none"),
            protected: Protected::under_home(&home),
            numbers: &crate::decisions::Decisions::built_in().commands,
        };
        let set = command_set(&sources);
        let names: Vec<&str> = set.iter().map(|c| c.name.as_str()).skip(7).collect();
        assert_eq!(names, ["ok"]);
    }

    /// Attack (issue 33): the home folder, trusted and holding `.agent/`, is not a project: its
    /// commands are not a project's.
    #[test]
    fn the_home_folder_is_never_a_project() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(home.join(".agent")).unwrap();
        std::fs::create_dir_all(home.join("work/notes")).unwrap();
        let trusted = [home.clone()];
        assert_eq!(project_of(&home.join("work/notes"), &trusted, &home), None);
        assert_eq!(project_of(&home, &trusted, &home), None);
    }
}
