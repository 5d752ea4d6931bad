//! The sandbox under every command a remote session runs (docs/protocol.md "The sandbox under every
//! command"): the `bash` tool, `_lembas/monitor`'s watch, a scheduled turn's bash; never a
//! terminal, which is the person's own shell.
//!
//! - Writes: only inside `remote.roots` and the temp folders (plan mode: the temp folders only),
//!   plus `/dev/null`, `/dev/tty`, `/dev/pts`.
//! - Reads (and running programs): everywhere but the protected places outside a project
//!   (docs/protocol.md "Paths"): `~/.ssh`, `~/.gnupg`, `~/.aws`, the keychain files, and the device's
//!   own config folder (the opt-in token file is in it) and state folder, wherever the environment
//!   puts them. A protected place inside a root stays out of reach for reads and writes.
//! - No new privileges; variables whose names look secret are left out of the environment.
//!
//! [`Sandbox`] is the description, made from the limits at the moment a command runs; Linux makes
//! it a Landlock ruleset ([`grants`] lists what it grants), macOS a Seatbelt profile; Windows has
//! none yet. The judge still decides first: this is the floor under its mistakes.

mod grants;
#[cfg(target_os = "linux")]
mod landlock;
mod seatbelt;
#[cfg(all(test, target_os = "linux"))]
mod tests;

pub use grants::{Grant, Kind, Reach, Tree, grants};
pub use seatbelt::Profile;

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use crate::paths::Dirs;
use crate::policy::Mode;
use crate::policy::protected::HOME_PLACES;
use crate::settings::{Remote, SandboxSetting};

/// Parts of a variable's name that say it holds a secret (compared without regard to case).
const SECRET_NAMES: [&str; 5] = ["KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"];
/// The devices a command writes to without writing a file.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/tty", "/dev/pts"];
/// What a refused read or write says, in the languages of Linux and macOS alike.
const REFUSALS: [&str; 2] = ["Permission denied", "Operation not permitted"];

/// Whether the kernel is asked for a sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kernel {
    /// Ask it (the product).
    Ask,
    /// Take it that it has none, for this reason (tests of `remote.sandbox`, benchmark baselines).
    Lacks(String),
}

/// The sandbox for one command, from the limits at that moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Sandbox {
    /// Where writes may go: the roots (none in plan mode), the temp folders, the devices.
    pub writable: Vec<PathBuf>,
    /// Neither read nor written: the protected places, resolved (and as named, when different).
    pub hidden: Vec<PathBuf>,
    /// The session's own places inside hidden ones (its attachments): read, and written unless in
    /// plan mode.
    pub own: Vec<PathBuf>,
    /// The roots writes may go to, as the refusal line names them.
    pub roots: Vec<PathBuf>,
    pub plan: bool,
    /// `remote.env_keep`.
    pub env_keep: Vec<String>,
    /// `remote.sandbox`.
    pub setting: SandboxSetting,
    pub kernel: Kernel,
}

impl Sandbox {
    /// The product's sandbox: `roots` resolved (`FolderRules`), `own` the session's own places
    /// the device named among its roots.
    pub fn for_remote(remote: &Remote, roots: &[PathBuf], own: &[PathBuf], mode: Mode, dirs: &Dirs) -> Self {
        Self::new(remote, roots, own, mode, Kernel::Ask, dirs)
    }

    /// The sandbox from the limits now: the protected places where `dirs` has them.
    pub fn new(
        remote: &Remote,
        roots: &[PathBuf],
        own: &[PathBuf],
        mode: Mode,
        kernel: Kernel,
        dirs: &Dirs,
    ) -> Self {
        // The keyring files where XDG_DATA_HOME moves them too (gnome-keyring keeps them there).
        let named = HOME_PLACES
            .iter()
            .map(|(place, _)| dirs.home.join(place))
            .chain([dirs.config.clone(), dirs.state.clone()])
            .chain(dirs.keyrings.clone());
        let mut hidden = Vec::new();
        for place in named {
            let resolved = grants::resolve_leniently(&place);
            if resolved != place {
                push_new(&mut hidden, place);
            }
            push_new(&mut hidden, resolved);
        }
        let inside_hidden = |p: &Path| hidden.iter().any(|h| p.starts_with(h));
        // A protected place is never a root (the folder judge says so too); the device's own
        // places inside one are named apart, in `own`.
        let roots: Vec<PathBuf> = roots.iter().filter(|r| !inside_hidden(r)).cloned().collect();
        let plan = mode == Mode::Plan;
        let mut writable = Vec::new();
        if !plan {
            writable.extend(roots.iter().cloned());
            writable.extend(own.iter().cloned());
        }
        for temp in temp_folders() {
            push_new(&mut writable, temp);
        }
        writable.extend(DEVICES.iter().map(PathBuf::from).filter(|d| d.exists()));
        Self {
            writable,
            hidden,
            own: own.to_vec(),
            roots,
            plan,
            env_keep: remote.env_keep.clone(),
            setting: remote.sandbox,
            kernel,
        }
    }

    /// What Landlock grants for this sandbox, over `tree`.
    pub fn grants(&self, tree: &dyn Tree) -> Vec<Grant> {
        grants(&self.readable(), &self.writable, &self.hidden, tree)
    }

    /// Where reads may go before the hidden places are cut out: everywhere, and the own places.
    fn readable(&self) -> Vec<PathBuf> {
        let mut readable = vec![PathBuf::from("/")];
        readable.extend(self.own.iter().cloned());
        readable
    }

    /// Makes the sandbox for one command: an error (a sentence) when `remote.sandbox: required`
    /// and none can be had, or when the kernel has one but it could not be made.
    pub fn prepare(&self) -> io::Result<Prepared> {
        let confinement = match self.confine() {
            Ok(confinement) => confinement,
            Err(Unavailable(why)) => match self.setting {
                SandboxSetting::Required => {
                    return Err(io::Error::other(format!(
                        "This computer runs remote commands only in a sandbox (remote.sandbox: \
                         required), and it cannot make one: {why}. Nothing was run; set \
                         remote.sandbox to auto to run commands without it."
                    )));
                }
                SandboxSetting::Auto => {
                    say_once_unsandboxed(&why);
                    Confinement::None
                }
            },
        };
        Ok(Prepared {
            confinement,
            env_removed: removed_variables(std::env::vars_os().map(|(name, _)| name), &self.env_keep),
        })
    }

    #[cfg(target_os = "linux")]
    fn confine(&self) -> Result<Confinement, Unavailable> {
        if let Kernel::Lacks(why) = &self.kernel {
            return Err(Unavailable(why.clone()));
        }
        let abi = landlock::abi().map_err(Unavailable)?;
        // A kernel that has Landlock but would not take the rules: refuse, never run unconfined.
        Ok(
            match landlock::ruleset_for(&self.readable(), &self.writable, &self.hidden, abi) {
                Ok(ruleset) => Confinement::Landlock(ruleset),
                Err(why) => Confinement::Broken(why),
            },
        )
    }

    #[cfg(target_os = "macos")]
    fn confine(&self) -> Result<Confinement, Unavailable> {
        if let Kernel::Lacks(why) = &self.kernel {
            return Err(Unavailable(why.clone()));
        }
        if !Path::new(SANDBOX_EXEC).exists() {
            return Err(Unavailable(format!("{SANDBOX_EXEC} is missing")));
        }
        Ok(Confinement::Seatbelt(Profile::new(
            &self.writable,
            &self.hidden,
            &self.own,
            !self.plan,
        )))
    }

    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    fn confine(&self) -> Result<Confinement, Unavailable> {
        Err(Unavailable(NO_SANDBOX_HERE.into()))
    }

    /// The line added to a command's output when it failed the way a refusal by the sandbox
    /// looks, while one was on; `None` otherwise.
    pub fn refusal_line(&self, output: &str, exit: Option<i32>) -> Option<String> {
        if exit == Some(0) || !REFUSALS.iter().any(|r| output.contains(r)) {
            return None;
        }
        let writes = if self.plan || self.roots.is_empty() {
            "writes only in the temp folder".to_string()
        } else {
            let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
            format!("writes only inside {} and the temp folder", roots.join(", "))
        };
        let plan = if self.plan { " (plan mode)" } else { "" };
        Some(format!(
            "[the sandbox refused a write or read outside what remote work may touch: {writes}{plan}; \
             no reads of the SSH, GnuPG, AWS or keychain folders or this device's own files]"
        ))
    }
}

#[cfg(target_os = "macos")]
const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
const NO_SANDBOX_HERE: &str = "there is no sandbox for commands on this platform yet";

/// Why no sandbox can be had.
struct Unavailable(String);

/// The sandbox made for one command, kept until it has been spawned.
pub struct Prepared {
    confinement: Confinement,
    env_removed: Vec<OsString>,
}

enum Confinement {
    /// `remote.sandbox: auto` where none can be had: run as before.
    None,
    /// The kernel has a sandbox but this one could not be made: refuse, saying why.
    #[cfg(target_os = "linux")]
    Broken(String),
    #[cfg(target_os = "linux")]
    Landlock(std::sync::Arc<landlock::Landlock>),
    #[cfg(target_os = "macos")]
    Seatbelt(Profile),
}

impl Prepared {
    /// The command that runs `program` in the sandbox, its environment less the secrets.
    pub(crate) fn command(&self, program: &str) -> io::Result<tokio::process::Command> {
        let mut command = match &self.confinement {
            #[cfg(target_os = "macos")]
            Confinement::Seatbelt(profile) => {
                let mut command = tokio::process::Command::new(SANDBOX_EXEC);
                command.args(profile.args()).arg(program);
                command
            }
            #[cfg(target_os = "linux")]
            Confinement::Broken(why) => {
                return Err(io::Error::other(format!(
                    "The command's sandbox could not be made: {why}."
                )));
            }
            _ => tokio::process::Command::new(program),
        };
        #[cfg(target_os = "linux")]
        if let Confinement::Landlock(ruleset) = &self.confinement {
            ruleset.confine(&mut command);
        }
        for name in &self.env_removed {
            command.env_remove(name);
        }
        Ok(command)
    }

    /// Whether the command runs sandboxed.
    pub(crate) fn on(&self) -> bool {
        !matches!(self.confinement, Confinement::None)
    }

    /// Landlock's ABI and rule count, for the benchmark's note; `None` without Landlock.
    pub fn landlock_rules(&self) -> Option<(i32, usize)> {
        match &self.confinement {
            #[cfg(target_os = "linux")]
            Confinement::Landlock(ruleset) => Some((ruleset.abi, ruleset.rules)),
            _ => None,
        }
    }
}

/// The variables to leave out: names holding a secret's word, unless `keep` names them exactly.
pub fn removed_variables(names: impl Iterator<Item = OsString>, keep: &[String]) -> Vec<OsString> {
    names
        .filter(|name| {
            let text = name.to_string_lossy();
            let upper = text.to_ascii_uppercase();
            SECRET_NAMES.iter().any(|s| upper.contains(s)) && !keep.iter().any(|k| *k == text)
        })
        .collect()
}

/// Whether commands run sandboxed here, for `lembas status`: `landlock ABI n`, `seatbelt`, or
/// `none: <why>`.
#[cfg(target_os = "linux")]
pub fn support() -> String {
    match landlock::abi() {
        Ok(abi) => format!("landlock ABI {abi}"),
        Err(why) => format!("none: {why}"),
    }
}

#[cfg(target_os = "macos")]
pub fn support() -> String {
    if Path::new(SANDBOX_EXEC).exists() {
        "seatbelt".into()
    } else {
        format!("none: {SANDBOX_EXEC} is missing")
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub fn support() -> String {
    format!("none: {NO_SANDBOX_HERE}")
}

/// The temp folders that exist, resolved: `$TMPDIR` (or the platform's), `/tmp`, `/var/tmp`.
fn temp_folders() -> Vec<PathBuf> {
    [
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
    ]
    .iter()
    .filter_map(|t| std::fs::canonicalize(t).ok())
    .collect()
}

fn push_new(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

/// `remote.sandbox: auto` without a sandbox is said once per process (status says it too).
fn say_once_unsandboxed(why: &str) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| tracing::warn!("Remote commands run without a sandbox: {why}."));
}

#[cfg(test)]
mod description_tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_left_out_unless_kept() {
        let names = [
            "PATH",
            "MY_API_KEY",
            "github_token",
            "Db_Password",
            "AWS_SECRET_ACCESS_KEY",
            "KEEP_TOKEN",
            "HOME",
            "GIT_CREDENTIAL_HELPER",
            "MONKEY",
        ];
        let removed = removed_variables(names.iter().map(OsString::from), &["KEEP_TOKEN".into()]);
        let removed: Vec<_> = removed.iter().map(|n| n.to_string_lossy().into_owned()).collect();
        // MONKEY holds KEY: names are matched by their parts' letters, as decided.
        assert_eq!(
            removed,
            [
                "MY_API_KEY",
                "github_token",
                "Db_Password",
                "AWS_SECRET_ACCESS_KEY",
                "GIT_CREDENTIAL_HELPER",
                "MONKEY"
            ]
        );
    }

    fn remote() -> Remote {
        Remote::default()
    }

    /// A home that is none of this machine's: these checks look at writable places only.
    fn dirs() -> Dirs {
        Dirs::under_home(Path::new("/home/nobody-here"), Path::new("/run/user/0"))
    }

    #[test]
    fn plan_mode_writes_only_to_temp_and_devices() {
        let root = PathBuf::from("/nonexistent-root");
        let edit = Sandbox::new(
            &remote(),
            std::slice::from_ref(&root),
            &[],
            Mode::Edit,
            Kernel::Ask,
            &dirs(),
        );
        let plan = Sandbox::new(
            &remote(),
            std::slice::from_ref(&root),
            &[],
            Mode::Plan,
            Kernel::Ask,
            &dirs(),
        );
        assert!(edit.writable.contains(&root));
        assert!(!plan.writable.contains(&root));
        assert!(plan.writable.iter().all(|w| edit.writable.contains(w)));
        assert!(plan.writable.contains(&PathBuf::from("/dev/null")));
        assert!(plan.writable.contains(&std::fs::canonicalize("/tmp").unwrap()));
    }

    #[test]
    fn the_refusal_line_names_the_roots_only_for_a_failed_refused_command() {
        let mut sandbox = Sandbox::new(
            &remote(),
            &[PathBuf::from("/w/a"), PathBuf::from("/w/b")],
            &[],
            Mode::Edit,
            Kernel::Ask,
            &dirs(),
        );
        let line = sandbox
            .refusal_line("bash: /home/p/x: Permission denied\n", Some(1))
            .unwrap();
        assert!(
            line.contains("writes only inside /w/a, /w/b and the temp folder;"),
            "{line}"
        );
        assert_eq!(sandbox.refusal_line("Permission denied", Some(0)), None);
        assert_eq!(sandbox.refusal_line("no such file", Some(1)), None);
        sandbox.plan = true;
        let line = sandbox
            .refusal_line("touch: Operation not permitted", None)
            .unwrap();
        assert!(
            line.contains("writes only in the temp folder (plan mode);"),
            "{line}"
        );
    }
}
