//! The prompt built-ins: what `/review`, `/changelog`, `/init` and `/continue` send to the model,
//! and custom commands and skills expanded with their arguments. `/review` and `/changelog` read
//! git; a command with nothing to send says so instead.

use std::path::Path;
use std::time::Duration;

use super::catalog::{Command, Kind};
use crate::decisions::decisions;

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
pub async fn expand(command: &Command, args: &str, folder: &Path) -> Expansion {
    let texts = &decisions().commands.texts;
    match (command.kind, command.name.as_str()) {
        (Kind::Builtin, "review") => review(args, folder).await,
        (Kind::Builtin, "changelog") => changelog(args, folder).await,
        (Kind::Builtin, "init") => Expansion::Prompt(with_note(texts.init.clone(), args)),
        (Kind::Builtin, "continue") => Expansion::Prompt(with_note(texts.r#continue.clone(), args)),
        (Kind::Custom, _) if command.body.contains("$ARGUMENTS") => {
            Expansion::Prompt(command.body.replace("$ARGUMENTS", args.trim()))
        }
        _ => Expansion::Prompt(with_note(command.body.clone(), args)),
    }
}

async fn review(args: &str, folder: &Path) -> Expansion {
    let texts = &decisions().commands.texts;
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
            fill(&texts.review, &[("target", target), ("diff", &cut(&diff))]),
            note,
        )),
    }
}

async fn changelog(args: &str, folder: &Path) -> Expansion {
    let texts = &decisions().commands.texts;
    let tag = git(folder, &["describe", "--tags", "--abbrev=0"])
        .await
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let range = tag.as_ref().map(|t| format!("{t}..HEAD"));
    let since = tag.as_deref().unwrap_or("the first commit");
    let mut log_args = vec!["log", "--no-color", "--format=%h %s"];
    log_args.push(range.as_deref().unwrap_or("HEAD"));
    log_args.push("--");
    match git(folder, &log_args).await {
        Err(why) => Expansion::Nothing(fill(&texts.git_failed, &[("why", &why)])),
        Ok(log) if log.trim().is_empty() => {
            Expansion::Nothing(fill(&texts.changelog_nothing, &[("since", since)]))
        }
        Ok(log) => Expansion::Prompt(with_note(
            fill(&texts.changelog, &[("since", since), ("log", &cut(&log))]),
            args,
        )),
    }
}

/// git's output put in a prompt, cut to its first characters when long.
fn cut(text: &str) -> String {
    let max = decisions().commands.git_output_max_chars;
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n[{} more characters left out]", count - max)
}

/// Runs git in `folder` with no input and the repository's own programs turned off (external
/// diff, text conversion, fsmonitor, signature checks): reading a diff runs nothing of the
/// repository's. Its output, or why it failed.
async fn git(folder: &Path, args: &[&str]) -> Result<String, String> {
    let seconds = decisions().commands.git_timeout_seconds;
    let mut command = tokio::process::Command::new("git");
    command
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "log.showSignature=false",
            "--no-pager",
        ])
        .args(args)
        .current_dir(folder)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(seconds), command.output())
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

    fn custom(body: &str, kind: Kind) -> Command {
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
            expand(&custom("Deploy $ARGUMENTS now", Kind::Custom), " prod ", at).await,
            Expansion::Prompt("Deploy prod now".into())
        );
        assert_eq!(
            expand(&custom("Lint.", Kind::Skill), "src only", at).await,
            Expansion::Prompt("Lint.\n\nsrc only".into())
        );
        assert_eq!(
            expand(&custom("Lint.", Kind::Custom), "", at).await,
            Expansion::Prompt("Lint.".into())
        );
    }

    #[tokio::test]
    async fn review_refuses_an_option_and_a_folder_without_git() {
        let dir = tempfile::tempdir().unwrap();
        let review = custom("", Kind::Builtin);
        let review = Command {
            name: "review".into(),
            ..review
        };
        let Expansion::Nothing(why) = expand(&review, "--output=/tmp/x", dir.path()).await else {
            panic!("an option is not a revision");
        };
        assert!(why.contains("--output=/tmp/x is not a revision"), "{why}");
        assert!(matches!(
            expand(&review, "", dir.path()).await,
            Expansion::Nothing(_)
        ));
    }

    #[test]
    fn long_output_is_cut() {
        let max = decisions().commands.git_output_max_chars;
        let long = "a".repeat(max + 5);
        assert!(cut(&long).ends_with("[5 more characters left out]"));
        assert_eq!(cut("short"), "short");
    }
}
