//! The prompt built-ins: what `/review`, `/changelog`, `/init` and `/continue` send to the model,
//! and custom commands and skills expanded with their arguments. `/review` and `/changelog` read
//! git; a command with nothing to send says so instead.

use std::path::Path;
use std::time::Duration;

use super::catalog::{Command, CommandSource};
use crate::decisions::Commands;
use crate::sandbox::Sandbox;

/// What a prompt command becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum Expansion {
    /// The text the model gets.
    Prompt(String),
    /// Nothing to send: this sentence is the answer instead.
    Nothing(String),
}

fn fill(template: &str, pairs: &[(&str, &str)]) -> String {
    pairs.iter().fold(template.to_string(), |text, (key, value)| {
        text.replace(&format!("{{{{{key}}}}}"), value)
    })
}

/// The person's own words after a command's text, when they gave some.
fn with_note(text: String, note: &str) -> String {
    if note.trim().is_empty() {
        text
    } else {
        format!("{text}\n\n{}", note.trim())
    }
}

/// A prompt command (not compact, undo or plan) with its arguments.
/// `sandbox` is the box the device's own git runs in (plan mode: it writes nothing).
/// `numbers`: the decided texts, git's time limit and how much of its output a prompt takes.
pub async fn expand(
    command: &Command,
    args: &str,
    folder: &Path,
    sandbox: &Sandbox,
    numbers: &Commands,
) -> Expansion {
    let texts = &numbers.texts;
    match (command.kind, command.name.as_str()) {
        (CommandSource::Builtin, "review") => review(args, folder, sandbox, numbers).await,
        (CommandSource::Builtin, "changelog") => changelog(args, folder, sandbox, numbers).await,
        (CommandSource::Builtin, "init") => Expansion::Prompt(with_note(texts.init.clone(), args)),
        (CommandSource::Builtin, "continue") => Expansion::Prompt(with_note(texts.r#continue.clone(), args)),
        (CommandSource::Custom, _) if command.body.contains("$ARGUMENTS") => {
            Expansion::Prompt(command.body.replace("$ARGUMENTS", args.trim()))
        }
        _ => Expansion::Prompt(with_note(command.body.clone(), args)),
    }
}

async fn review(args: &str, folder: &Path, sandbox: &Sandbox, numbers: &Commands) -> Expansion {
    let texts = &numbers.texts;
    let args = args.trim();
    let (target, note) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    let target = match target {
        "" => "HEAD",
        t if t.eq_ignore_ascii_case("head") => "HEAD",
        t => t,
    };
    // An option is never passed to git: `--output=…` would write a file.
    if target.starts_with('-') {
        let why = format!("{target} is not a revision; name a branch, a commit or head");
        return Expansion::Nothing(fill(&texts.git_failed, &[("why", &why)]));
    }
    match git(
        folder,
        sandbox,
        numbers,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            target,
            "--",
        ],
    )
    .await
    {
        Err(why) => Expansion::Nothing(fill(&texts.git_failed, &[("why", &why)])),
        Ok(diff) if diff.trim().is_empty() => {
            Expansion::Nothing(fill(&texts.review_nothing, &[("target", target)]))
        }
        Ok(diff) => Expansion::Prompt(with_note(
            fill(
                &texts.review,
                &[
                    ("target", target),
                    ("diff", &cut(&diff, numbers.git_output_max_chars)),
                ],
            ),
            note,
        )),
    }
}

async fn changelog(args: &str, folder: &Path, sandbox: &Sandbox, numbers: &Commands) -> Expansion {
    let texts = &numbers.texts;
    let tag = git(folder, sandbox, numbers, &["describe", "--tags", "--abbrev=0"])
        .await
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let range = tag.as_ref().map(|t| format!("{t}..HEAD"));
    let since = tag.as_deref().unwrap_or("the first commit");
    let mut log_args = vec!["log", "--no-color", "--format=%h %s"];
    log_args.push(range.as_deref().unwrap_or("HEAD"));
    log_args.push("--");
    match git(folder, sandbox, numbers, &log_args).await {
        Err(why) => Expansion::Nothing(fill(&texts.git_failed, &[("why", &why)])),
        Ok(log) if log.trim().is_empty() => {
            Expansion::Nothing(fill(&texts.changelog_nothing, &[("since", since)]))
        }
        Ok(log) => Expansion::Prompt(with_note(
            fill(
                &texts.changelog,
                &[
                    ("since", since),
                    ("log", &cut(&log, numbers.git_output_max_chars)),
                ],
            ),
            args,
        )),
    }
}

/// git's output put in a prompt, cut to its first characters when long.
fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n[{} more characters left out]", count - max)
}

/// What every git run for the model is given, so that reading a diff or a log runs nothing the
/// repository names (the model can write `.git/config` and `.gitattributes`): no system or global
/// config, no hooks, no fsmonitor, no attributes file outside the repository, no implicit bare
/// repository (whose config would be the model's), no pager, no signature checks. External diff and
/// text conversion are turned off on the diff's own line (`--no-ext-diff --no-textconv`), the
/// repository's filters by name ([`filters_named`]).
const SAFE_CONFIG: [&str; 7] = [
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.attributesFile=/dev/null",
    "safe.bareRepository=explicit",
    "diff.external=",
    "log.showSignature=false",
    "core.pager=cat",
];

/// Inherited variables that would point git elsewhere or hand it config or programs.
const UNSET: [&str; 7] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
];

/// Of a filter driver's keys, those that run a program or make its absence fatal.
const FILTER_KEYS: [&str; 4] = ["clean", "smudge", "process", "required"];

/// git in `folder`, in the box `sandbox` makes, with [`SAFE_CONFIG`], no input, killed when
/// dropped; why not, when the box cannot be made.
fn safe_git(folder: &Path, sandbox: &Sandbox) -> Result<tokio::process::Command, String> {
    let prepared = sandbox.prepare().map_err(|e| e.to_string())?;
    let mut command = prepared.command("git", folder).map_err(|e| e.to_string())?;
    for setting in SAFE_CONFIG {
        command.args(["-c", setting]);
    }
    for name in UNSET {
        command.env_remove(name);
    }
    command
        .arg("--no-pager")
        .current_dir(folder)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    Ok(command)
}

/// The filter drivers the repository's config names (`filter.<name>.clean` and the like, includes
/// followed), read with the same settings the run will have. A filter applies to any file an
/// attribute names, from `.gitattributes` or `.git/info/attributes`, which cannot all be turned
/// off: so each driver is emptied by name instead. Reading config runs nothing.
async fn filters_named(folder: &Path, sandbox: &Sandbox, numbers: &Commands) -> Vec<String> {
    let Ok(mut command) = safe_git(folder, sandbox) else {
        return Vec::new();
    };
    command.args(["config", "--name-only", "--get-regexp", r"^filter\."]);
    let Ok(Ok(output)) = tokio::time::timeout(git_timeout(numbers), command.output()).await else {
        return Vec::new();
    };
    let mut names: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|key| {
            let rest = key.strip_prefix("filter.")?;
            let (name, _key) = rest.rsplit_once('.')?;
            Some(name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn git_timeout(numbers: &Commands) -> Duration {
    Duration::from_secs(numbers.git_timeout_seconds)
}

/// Runs git in `folder` as [`safe_git`] does, with the repository's filter drivers emptied: reading
/// a diff runs nothing of the repository's. Its output, or why it failed.
async fn git(folder: &Path, sandbox: &Sandbox, numbers: &Commands, args: &[&str]) -> Result<String, String> {
    let seconds = numbers.git_timeout_seconds;
    let filters = filters_named(folder, sandbox, numbers).await;
    let mut command = safe_git(folder, sandbox)?;
    // Through the environment's key/value pairs rather than `-c key=value`: a driver's name may
    // hold a `=`, which `-c` would split at.
    let mut count = 0;
    for name in &filters {
        for key in FILTER_KEYS {
            let empty = if key == "required" { "false" } else { "" };
            command
                .env(format!("GIT_CONFIG_KEY_{count}"), format!("filter.{name}.{key}"))
                .env(format!("GIT_CONFIG_VALUE_{count}"), empty);
            count += 1;
        }
    }
    command.env("GIT_CONFIG_COUNT", count.to_string()).args(args);
    let output = tokio::time::timeout(git_timeout(numbers), command.output())
        .await
        .map_err(|_| format!("git did not answer within {seconds} seconds"))?
        .map_err(|e| format!("git could not be run ({e})"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let line = stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("it failed");
        Err(line.trim().trim_start_matches("fatal: ").to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers() -> &'static Commands {
        &crate::decisions::Decisions::built_in().commands
    }

    async fn expand(command: &Command, args: &str, folder: &Path, sandbox: &Sandbox) -> Expansion {
        super::expand(command, args, folder, sandbox, numbers()).await
    }

    fn cut(text: &str) -> String {
        super::cut(text, numbers().git_output_max_chars)
    }

    /// The box git runs in, its temp folder in a home of the test's own.
    fn boxed(folder: &Path) -> (tempfile::TempDir, Sandbox) {
        let home = tempfile::tempdir().unwrap();
        let dirs = crate::paths::Dirs::under_home(home.path(), &home.path().join("run"));
        let roots = [std::fs::canonicalize(folder).unwrap()];
        let sandbox = Sandbox::for_remote(&Default::default(), &roots, &[], crate::policy::Mode::Plan, &dirs);
        (home, sandbox)
    }

    fn custom(body: &str, kind: CommandSource) -> Command {
        Command {
            name: "x".into(),
            description: String::new(),
            hint: None,
            kind,
            body: body.into(),
            mode: None,
            model: None,
            effort: None,
        }
    }

    #[tokio::test]
    async fn arguments_go_where_the_command_says() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path();
        assert_eq!(
            expand(
                &custom("Deploy $ARGUMENTS now", CommandSource::Custom),
                " prod ",
                at,
                &boxed(at).1
            )
            .await,
            Expansion::Prompt("Deploy prod now".into())
        );
        assert_eq!(
            expand(
                &custom("Lint.", CommandSource::Skill),
                "src only",
                at,
                &boxed(at).1
            )
            .await,
            Expansion::Prompt("Lint.\n\nsrc only".into())
        );
        assert_eq!(
            expand(&custom("Lint.", CommandSource::Custom), "", at, &boxed(at).1).await,
            Expansion::Prompt("Lint.".into())
        );
    }

    #[tokio::test]
    async fn review_refuses_an_option_and_a_folder_without_git() {
        let dir = tempfile::tempdir().unwrap();
        let review = custom("", CommandSource::Builtin);
        let review = Command {
            name: "review".into(),
            ..review
        };
        let Expansion::Nothing(why) =
            expand(&review, "--output=/tmp/x", dir.path(), &boxed(dir.path()).1).await
        else {
            panic!("an option is not a revision");
        };
        assert!(why.contains("--output=/tmp/x is not a revision"), "{why}");
        assert!(matches!(
            expand(&review, "", dir.path(), &boxed(dir.path()).1).await,
            Expansion::Nothing(_)
        ));
    }

    #[test]
    fn long_output_is_cut() {
        let max = numbers().git_output_max_chars;
        let long = "a".repeat(max + 5);
        assert!(cut(&long).ends_with("[5 more characters left out]"));
        assert_eq!(cut("short"), "short");
    }

    fn git_in(repo: &Path, args: &[&str]) {
        let done = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(repo)
            .output()
            .unwrap();
        assert!(done.status.success(), "{done:?}");
    }

    /// Attack (issue 33): the model wrote a clean filter into `.git/config` and an attribute that
    /// applies it (in `.gitattributes` and in `.git/info/attributes`); `/review` runs `git diff`,
    /// which must run none of it.
    #[tokio::test]
    async fn review_runs_no_filter_the_repository_names() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let repo = base.join("repo");
        let outside = base.join("outside");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        git_in(&repo, &["init", "-q"]);
        // One file for each way a filter is named: by .gitattributes, by .git/info/attributes, and
        // a driver whose name holds a `=`.
        let files = ["a.txt", "b.txt", "c.txt"];
        for file in files {
            std::fs::write(repo.join(file), "one\n").unwrap();
        }
        git_in(&repo, &["add", "."]);
        git_in(&repo, &["commit", "-q", "-m", "one"]);
        for file in files {
            std::fs::write(repo.join(file), "one\ntwo\n").unwrap();
        }
        let marker = |name: &str| outside.join(name);
        let config = format!(
            "[filter \"x\"]\n\tclean = touch {}; cat\n\trequired = true\n\
             [filter \"y\"]\n\tprocess = touch {}\n\
             [filter \"a=b\"]\n\tclean = touch {}; cat\n\
             [diff \"t\"]\n\ttextconv = touch {}; cat\n\
             [core]\n\tfsmonitor = touch {}\n\thooksPath = {}\n",
            marker("clean").display(),
            marker("process").display(),
            marker("named-with-equals").display(),
            marker("textconv").display(),
            marker("fsmonitor").display(),
            outside.display(),
        );
        let mut git_config = std::fs::read_to_string(repo.join(".git/config")).unwrap();
        git_config.push_str(&config);
        std::fs::write(repo.join(".git/config"), git_config).unwrap();
        std::fs::write(repo.join(".gitattributes"), "* filter=x diff=t\n").unwrap();
        std::fs::create_dir_all(repo.join(".git/info")).unwrap();
        std::fs::write(
            repo.join(".git/info/attributes"),
            "a.txt filter=y\nb.txt filter=a=b\n",
        )
        .unwrap();
        let review = Command {
            name: "review".into(),
            ..custom("", CommandSource::Builtin)
        };
        let (_home, sandbox) = boxed(&repo);
        let expanded = expand(&review, "", &repo, &sandbox).await;
        let ran: Vec<String> = std::fs::read_dir(&outside)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(ran.is_empty(), "the repository's programs ran: {ran:?}");
        let Expansion::Prompt(text) = expanded else {
            panic!("the diff is reviewed: {expanded:?}");
        };
        assert!(text.contains("+two"), "{text}");
        // /changelog reads git log the same way.
        let _ = expand(
            &Command {
                name: "changelog".into(),
                ..custom("", CommandSource::Builtin)
            },
            "",
            &repo,
            &sandbox,
        )
        .await;
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}
