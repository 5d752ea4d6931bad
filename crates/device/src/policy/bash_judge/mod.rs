//! The bash permission judge (docs/protocol.md): a pure function from a command line, the mode, the
//! rules and the folder to allow, ask or deny, with a reason a person can read.
//!
//! The line is parsed as bash (brush-parser); every simple command in it, in substitutions, in
//! functions and in the commands that run other commands (`env`, `xargs`, `bash -c`, `eval`,
//! `find -exec`…) is judged, and the strictest part decides. Paths are judged lexically: the judge
//! reads no file system, so it follows no symlink.
//!
//! Every file a command reads (`file_args`: arguments, option values, input redirections, `for`
//! lists) is placed (`places`) from every folder the line may be in (`cwd`): protected, denied in
//! every mode; under the home folder outside the roots (and the session's folder), asks, plan
//! denies; unknown (`/proc/<pid>/root`, a `cd "$D"`), asks. Where the judge cannot know, it decides:
//! - a word only known when the line runs (`cat "$f"`, `cat $(git ls-files)`) is judged by the
//!   folder written before it (`cat ~/.ssh/$f` is denied, `cat src/$f` reads); values the line
//!   itself assigns are put back where they are used (`vars`);
//! - a recursive read rooted in the session's folder (`grep -r x .`, `rg x`) is a read, though the
//!   project's own `.git/` and `.env` lie below it; one rooted at or above the home folder, or above
//!   a protected place in it, is denied;
//! - a glob counts as each protected path it could match, but a bare `*` is the ordinary files it
//!   usually matches (`grep x *` reads; `cat *.pem`, `cat ~/.ss?/id_*` are denied).

mod ansi_c;
mod assessment;
mod braces;
mod builtins;
mod commands;
mod contained;
mod cwd;
mod file_args;
#[doc(hidden)]
pub mod fuzz_found;
mod globs;
mod parse;
mod paths;
mod patterns;
mod places;
mod readers;
mod subscripts;
mod vars;
mod walk;

#[cfg(test)]
mod tests;

use serde::Deserialize;
use std::path::{Path, PathBuf};

use crate::policy::Mode;
use crate::policy::protected::Protected;
use assessment::{Assessment, Class, Inner, Scope};
use cwd::Folder;
use places::Reach;
use vars::Vars;
use walk::{Arg, Part, Walk};

/// A project's or the person's own rules for bash lines (`permissions.bash` in the config and
/// in `<project>/.lembas/config.yaml`): patterns that allow, ask or deny.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct BashRules {
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
}

/// Ordered from the most to the least permissive: the strictest part of a line is the largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Judgement {
    pub decision: Decision,
    pub reason: String,
}

pub struct JudgeContext<'a> {
    pub mode: Mode,
    pub global: &'a BashRules,
    /// A trusted project's own rules; `None` for an untrusted folder, whose rules count for nothing.
    pub project: Option<&'a BashRules>,
    pub folder: &'a Path,
    pub roots: &'a [PathBuf],
    pub home: &'a Path,
    /// The protected places, the device's folders where the environment puts them.
    pub protected: &'a Protected,
}

/// Scripts inside scripts (`bash -c "eval '…'"`) deeper than this are not looked into: they ask.
const MAX_DEPTH: usize = 8;

pub fn judge(line: &str, ctx: &JudgeContext) -> Judgement {
    match contained::contained(&|| judge_in_process(line, ctx), contained::LIMITS) {
        contained::Outcome::Judged(judgement) => judgement,
        contained::Outcome::Died(what) => opaque(ctx.mode, what),
        contained::Outcome::NotStarted => judge_in_process(line, ctx),
    }
}

/// The same judge in this process, without the child's memory and time limits: for the fuzz
/// target, where a fork a line would cost most of the time. The device calls [`judge`].
pub fn judge_in_process(line: &str, ctx: &JudgeContext) -> Judgement {
    // brush-parser 0.4 still has `unwrap`s a line can reach (its tokenizer, its tilde words: found by
    // the bash_judge fuzz target past the pre-checks in `parse::parse`): a panic in the judge is an
    // unreadable line, never a crash.
    let start = [Folder::Known(ctx.folder.to_path_buf())];
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        judge_script(line, ctx, 0, &start, &Vars::default())
    }))
    .unwrap_or_else(|_| opaque(ctx.mode, "the line is not bash the judge can read"))
}

/// `outer` and `vars`: the folders the script may start in and the values its variables hold (its
/// caller's, for a nested script).
fn judge_script(line: &str, ctx: &JudgeContext, depth: usize, outer: &[Folder], vars: &Vars) -> Judgement {
    if depth > MAX_DEPTH {
        return opaque(ctx.mode, "scripts nested too deep to read");
    }
    let program = match parse::parse(line) {
        Ok(program) => program,
        Err(_) => return opaque(ctx.mode, "the line is not bash the judge can read"),
    };
    let home = ctx.home.to_string_lossy();
    let walk = Walk::of(&program, &home, vars);
    let folders = cwd::folders(&walk.parts, outer, ctx.home, !walk.functions.is_empty());
    let scope = Scope {
        folder: ctx.folder,
        home: ctx.home,
        protected: ctx.protected,
        roots: ctx.roots,
        functions: &walk.functions,
        folders: &folders,
        vars: &walk.vars,
        // `shopt -s dotglob` and `GLOBIGNORE` make `*` match names that start with a dot.
        dotglob: line.contains("dotglob") || line.contains("GLOBIGNORE"),
    };
    let mut verdict = None;
    for part in &walk.parts {
        let judged = match part {
            Part::Command {
                words,
                writes,
                reads,
                assigns,
            } => judge_command(words, writes, reads, assigns, ctx, &scope, depth),
            Part::Script(script) => judge_script(script, ctx, depth + 1, &folders, &walk.vars),
            Part::Opaque(what) => opaque(ctx.mode, what),
            Part::ForkBomb(name) => deny(format!(
                "`{name}` calls itself in a pipeline or in the background: a fork bomb is never allowed."
            )),
        };
        verdict = stricter(verdict, judged);
    }
    verdict.unwrap_or_else(|| allow("Nothing to run.".into()))
}

fn judge_command(
    words: &[Arg],
    writes: &[Arg],
    reads: &[Arg],
    assigns: &[String],
    ctx: &JudgeContext,
    scope: &Scope,
    depth: usize,
) -> Judgement {
    let mut verdict = None;
    // A redirection is judged apart from its command: a rule allows commands, not the files they
    // write or read.
    for target in writes.iter().filter(|t| !harmless_device(t)) {
        let hit = scope
            .resolve_all(target)
            .into_iter()
            .find(|path| ctx.protected.protects(path));
        let class = match hit {
            Some(path) => Class::Hardline(format!(
                "Writing {} is never allowed: it is a protected path.",
                path.display()
            )),
            None if scope
                .resolve_all(target)
                .iter()
                .any(|p| commands::in_agent_folder(p, scope)) =>
            {
                Class::Opaque(commands::AGENT_FOLDER.into())
            }
            None => Class::Changes,
        };
        let shown = format!("Writing {}", target.text);
        verdict = stricter(verdict, decide(class, &[], &shown, ctx));
    }
    // `cat < ~/.ssh/id_ed25519`: an input redirection reads its file as an argument would.
    for source in reads {
        let class = match places::reach(source, false, scope) {
            Reach::Free => Class::ReadOnly,
            Reach::Protected(what) => Class::Hardline(format!(
                "Reading {what} is never allowed: it is a protected path."
            )),
            Reach::OutsideRoots(why) | Reach::Unplaced(why) | Reach::Unknown(why) => Class::Opaque(why),
        };
        let shown = format!("Reading {}", source.text);
        verdict = stricter(verdict, decide(class, &[], &shown, ctx));
    }
    let Assessment { class, inner } = commands::assess(words, assigns, scope);
    verdict = stricter(verdict, decide(class, words, &shown(words), ctx));
    for command in inner {
        let judged = match command {
            Inner::Words(inner_words) => judge_command(&inner_words, &[], &[], &[], ctx, scope, depth + 1),
            Inner::Script(script) => judge_script(&script, ctx, depth + 1, scope.folders, scope.vars),
        };
        verdict = stricter(verdict, judged);
    }
    verdict.unwrap_or_else(|| allow("Nothing to run.".into()))
}

/// `> /dev/null` and friends write no file.
fn harmless_device(target: &Arg) -> bool {
    let t = target.text.as_str();
    !target.dynamic
        && (["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"].contains(&t) || t.starts_with("/dev/fd/"))
}

/// docs/protocol.md's precedence for one command: hardline, deny rules, ask rules, allow rules, then
/// the mode's defaults. Plan mode only reads: an allow rule does not open a change there.
fn decide(class: Class, words: &[Arg], shown: &str, ctx: &JudgeContext) -> Judgement {
    if let Class::Hardline(why) = class {
        return deny(why);
    }
    let rules = std::iter::once(ctx.global).chain(ctx.project);
    let rule = |pick: fn(&BashRules) -> &Vec<String>| {
        rules
            .clone()
            .flat_map(pick)
            .find(|p| !words.is_empty() && patterns::matches(p, words))
            .cloned()
    };
    if let Some(pattern) = rule(|r| &r.deny) {
        return deny(format!(
            "{shown} is refused by the permission rule \"{pattern}\"."
        ));
    }
    if let Some(pattern) = rule(|r| &r.ask) {
        return ask(format!("{shown} needs approval: permission rule \"{pattern}\"."));
    }
    let changes = class != Class::ReadOnly;
    if let Some(pattern) = rule(|r| &r.allow) {
        if ctx.mode == Mode::Plan && changes {
            return deny(format!("{shown} may change things, and plan mode only reads."));
        }
        return allow(format!(
            "{shown} is allowed by the permission rule \"{pattern}\"."
        ));
    }
    match (class, ctx.mode) {
        (Class::ReadOnly, _) => allow(format!("{shown} only reads.")),
        (Class::Opaque(what), mode) => opaque(mode, &what),
        (_, Mode::Plan) => deny(format!("{shown} may change things, and plan mode only reads.")),
        (_, Mode::Auto) => allow(format!("{shown} is allowed in auto mode.")),
        (_, mode) => ask(format!("{shown} needs approval in {mode} mode.")),
    }
}

/// What the judge cannot see it does not allow unattended, in any mode.
fn opaque(mode: Mode, what: &str) -> Judgement {
    if mode == Mode::Plan {
        deny(format!(
            "The line has {what}, and plan mode only runs what it can read."
        ))
    } else {
        ask(format!("The line has {what}: it needs approval."))
    }
}

fn shown(words: &[Arg]) -> String {
    let line: String = words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let short: String = line.chars().take(60).collect();
    if words.is_empty() {
        "An assignment".into()
    } else if short.len() < line.len() {
        format!("`{short}…`")
    } else {
        format!("`{short}`")
    }
}

fn stricter(a: Option<Judgement>, b: Judgement) -> Option<Judgement> {
    match a {
        Some(a) if a.decision >= b.decision => Some(a),
        _ => Some(b),
    }
}

fn allow(reason: String) -> Judgement {
    Judgement {
        decision: Decision::Allow,
        reason,
    }
}
fn ask(reason: String) -> Judgement {
    Judgement {
        decision: Decision::Ask,
        reason,
    }
}
fn deny(reason: String) -> Judgement {
    Judgement {
        decision: Decision::Deny,
        reason,
    }
}
