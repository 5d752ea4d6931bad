//! The box under every command a remote session runs (docs/protocol.md "The sandbox under every
//! command"): the `bash` tool and its jobs, `_lembas/monitor`'s watch, a scheduled turn's bash;
//! never a terminal, which is the person's own shell.
//!
//! From the outside in, on Linux:
//! - **Namespaces** ([`namespaces`]): its own user, mount and PID namespaces; `/` read-only, the
//!   roots writable (none in plan mode), a temp folder of the session's own at `/tmp`; inside the
//!   roots the governing places read-only and the secret files absent ([`inside_roots`]); the
//!   protected places outside and the person's sockets absent; a fresh `/proc`. Every process a
//!   command starts ends with it.
//! - **Landlock**: under the box, rules the command makes after the mounts ([`landlock_in_box`]):
//!   writes only to the roots, the temp folder, `/dev/shm` and the devices, and its scopes (no
//!   signals or abstract sockets out of the box); without the box, the rules made here from the
//!   person's places ([`grants`], [`landlock`]) are the file wall.
//! - **seccomp** ([`seccomp`]): no `ptrace`, `process_vm_*`, `io_uring`, `TIOCSTI`; no new privileges.
//! - **The environment** ([`environment`]): a list of what passes.
//!
//! Where namespaces cannot be made, the other walls stand and [`support`] says so; macOS makes the
//! description a Seatbelt profile; Windows has none yet. The judge still decides first: this is the
//! floor under its mistakes.

mod environment;
mod grants;
pub mod inside_roots;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod landlock_in_box;
#[cfg(target_os = "linux")]
mod namespaces;
mod prepared;
mod seatbelt;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(all(test, target_os = "linux"))]
mod tests;

pub use environment::passed;
pub use grants::{EntryKind, FileRule, Reach, Tree, grants};
pub use inside_roots::InsideRoots;
use prepared::Confinement;
pub use prepared::Prepared;
#[cfg(target_os = "linux")]
use prepared::{BoxPlaces, LandlockLayer, Walls};
pub use seatbelt::Profile;

use std::io;
use std::path::{Path, PathBuf};

use crate::paths::Dirs;
use crate::policy::Mode;
use crate::policy::protected::HOME_PLACES;
use crate::settings::{Remote, SandboxSetting};

/// The devices a command writes to without writing a file.
pub(crate) const DEVICES: [&str; 3] = ["/dev/null", "/dev/tty", "/dev/pts"];
/// What a refused read or write says, in the languages of Linux and macOS alike.
const REFUSALS: [&str; 3] = [
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
];
/// Sockets of the machine's that reach the person's programs.
const SOCKET_FILES: [&str; 4] = [
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
];

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
    /// Where writes may go: the roots (none in plan mode), the temp folder, the devices.
    pub writable: Vec<PathBuf>,
    /// Neither read nor written: the protected places, resolved (and as named, when different).
    pub hidden: Vec<PathBuf>,
    /// The session's own places inside hidden ones (its attachments): read, and written unless in
    /// plan mode.
    pub own: Vec<PathBuf>,
    /// The roots writes may go to, as the refusal line names them.
    pub roots: Vec<PathBuf>,
    /// The session's temp folder (`/tmp` in the box), inside the device's state folder.
    pub temp: PathBuf,
    /// The person's runtime folders (`/run/user/<uid>`): empty in the box.
    pub runtime: Vec<PathBuf>,
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
            .chain([dirs.config.clone(), dirs.state.clone(), dirs.runtime.clone()])
            .chain(dirs.keyrings.clone())
            .chain(SOCKET_FILES.iter().map(PathBuf::from))
            .chain(agent_sockets());
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
        // Resolved again: a root that became a link since it was set is bound where it leads, and
        // one that is gone has nothing to bind.
        let roots: Vec<PathBuf> = roots
            .iter()
            .map(|r| grants::resolve_leniently(r))
            .filter(|r| !inside_hidden(r))
            .collect();
        let plan = mode == Mode::Plan;
        let temp = grants::resolve_leniently(&dirs.state.join("tmp").join("commands"));
        let mut sandbox = Self {
            writable: Vec::new(),
            hidden,
            own: own.to_vec(),
            roots,
            temp,
            runtime: runtime_folders(dirs),
            plan,
            env_keep: remote.env_keep.clone(),
            setting: remote.sandbox,
            kernel,
        };
        sandbox.make_writable();
        sandbox
    }

    /// The same, with a session's own temp folder (`Store::temp_dir`): what one command leaves
    /// there the next finds.
    pub fn with_temp(mut self, temp: PathBuf) -> Self {
        self.temp = grants::resolve_leniently(&temp);
        self.make_writable();
        self
    }

    fn make_writable(&mut self) {
        self.writable.clear();
        if !self.plan {
            self.writable.extend(self.roots.iter().cloned());
            self.writable.extend(self.own.iter().cloned());
        }
        push_new(&mut self.writable, self.temp.clone());
        self.writable
            .extend(DEVICES.iter().map(PathBuf::from).filter(|d| d.exists()));
    }

    /// What Landlock grants for this sandbox, over `tree`.
    pub fn grants(&self, tree: &dyn Tree) -> Vec<FileRule> {
        grants(&self.readable(), &self.writable, &self.hidden, tree)
    }

    /// Where reads may go before the hidden places are cut out: everywhere, and the own places.
    fn readable(&self) -> Vec<PathBuf> {
        let mut readable = vec![PathBuf::from("/")];
        readable.extend(self.own.iter().cloned());
        readable
    }

    /// Makes the sandbox for one command: an error (a sentence) when `remote.sandbox: required`
    /// and the box cannot be made whole, or when the kernel has walls but they could not be made.
    pub fn prepare(&self) -> io::Result<Prepared> {
        std::fs::create_dir_all(&self.temp).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "The command's temp folder {} could not be made: {e}",
                    self.temp.display()
                ),
            )
        })?;
        restrict_to_owner(&self.temp);
        let confinement = match self.confine() {
            Ok(confinement) => confinement,
            Err(Unavailable(why)) => match self.setting {
                SandboxSetting::Required => {
                    return Err(io::Error::other(format!(
                        "This computer runs remote commands only in a whole sandbox (remote.sandbox: \
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
            temp: self.temp.clone(),
            env_keep: self.env_keep.clone(),
        })
    }

    #[cfg(target_os = "linux")]
    fn confine(&self) -> Result<Confinement, Unavailable> {
        if let Kernel::Lacks(why) = &self.kernel {
            return Err(Unavailable(why.clone()));
        }
        let abi = landlock::abi().map_err(Unavailable)?;
        let boxed = namespaces::available();
        if let (Err(why), SandboxSetting::Required) = (&boxed, self.setting) {
            return Err(Unavailable(why.clone()));
        }
        // Under the box, Landlock's rules are made inside it; without one, here, and they are the
        // file wall. A kernel that has Landlock but would not take the rules: refuse, never run
        // unconfined.
        let landlock = match &boxed {
            Ok(()) => landlock_in_box::InBox::new(abi, &self.box_writable())
                .map(LandlockLayer::InBox)
                .map_err(|e| e.to_string()),
            Err(_) => landlock::ruleset_for(&self.readable(), &self.writable, &self.hidden)
                .map(LandlockLayer::Rules),
        };
        let landlock = match landlock {
            Ok(landlock) => landlock,
            Err(why) => return Ok(Confinement::Broken(why)),
        };
        let inside = InsideRoots::of(&self.roots);
        let boxed = boxed.is_ok().then(|| self.box_places(&inside));
        Ok(Confinement::Walls(Box::new(Walls {
            boxed,
            absent: if self.plan { Vec::new() } else { inside.absent },
            landlock,
            abi,
            seccomp: seccomp::Filter::new(),
        })))
    }

    /// Where a command in the box may write, as the box shows it.
    #[cfg(target_os = "linux")]
    fn box_writable(&self) -> Vec<PathBuf> {
        let mut writable: Vec<PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .map(PathBuf::from)
            .collect();
        if !self.plan {
            writable.extend(self.roots.iter().cloned());
            writable.extend(self.own.iter().cloned());
        }
        writable
    }

    /// The box's places, with what the walk found inside the roots.
    #[cfg(target_os = "linux")]
    fn box_places(&self, inside: &InsideRoots) -> BoxPlaces {
        let mut hidden: Vec<PathBuf> = inside.secrets.clone();
        hidden.extend(self.hidden.iter().cloned());
        BoxPlaces {
            // A root that is gone has nothing to bind.
            roots: self.roots.iter().filter(|r| r.is_dir()).cloned().collect(),
            own: self.own.clone(),
            plan: self.plan,
            governing: inside.governing.clone(),
            hidden,
            absent_file: absent_file(&self.temp),
            runtime: self.runtime.clone(),
        }
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
            "writes only in its temp folder /tmp".to_string()
        } else {
            let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
            format!("writes only inside {} and its temp folder /tmp", roots.join(", "))
        };
        let plan = if self.plan { " (plan mode)" } else { "" };
        Some(format!(
            "[the sandbox refused a write or read outside what remote work may touch: {writes}{plan}; \
             .git/config, .git/hooks, .lembas and .agent are read-only; no .env, key or credential \
             files, no sockets of the person's, no other processes]"
        ))
    }
}

#[cfg(target_os = "macos")]
pub(super) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
const NO_SANDBOX_HERE: &str =
    "this system has no kernel sandbox for commands yet (on Windows one is planned: docs/windows.md)";

/// Why no sandbox can be had.
struct Unavailable(String);

/// An empty file of mode 000 beside the temp folders, to cover hidden files with in the box.
#[cfg(target_os = "linux")]
fn absent_file(temp: &Path) -> PathBuf {
    use std::os::unix::fs::OpenOptionsExt;
    let file = temp.with_file_name(".absent");
    if std::fs::symlink_metadata(&file).is_err() {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o000)
            .open(&file);
    }
    file
}

/// The temp folder is the session's alone: no other account's program reads it.
fn restrict_to_owner(folder: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700));
    }
    #[cfg(not(unix))]
    let _ = folder;
}

/// The person's runtime folders: `$XDG_RUNTIME_DIR` and `/run/user/<uid>`.
fn runtime_folders(dirs: &Dirs) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    // The device's runtime folder is `$XDG_RUNTIME_DIR/lembas`, or inside the state folder.
    if let Some(runtime) = dirs.runtime.parent().filter(|_| dirs.runtime.ends_with("lembas"))
        && !runtime.starts_with(&dirs.state)
    {
        folders.push(runtime.to_owned());
    }
    #[cfg(unix)]
    {
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        push_new(&mut folders, PathBuf::from(format!("/run/user/{uid}")));
    }
    folders
}

/// The agents' sockets the environment names (`SSH_AUTH_SOCK`, the session bus's path).
fn agent_sockets() -> Vec<PathBuf> {
    let mut sockets = Vec::new();
    if let Some(agent) = std::env::var_os("SSH_AUTH_SOCK").filter(|a| !a.is_empty()) {
        sockets.push(PathBuf::from(agent));
    }
    if let Some(bus) = std::env::var_os("DBUS_SESSION_BUS_ADDRESS") {
        for part in bus.to_string_lossy().split([';', ',']) {
            if let Some(path) = part.split_once("path=").map(|(_, p)| p) {
                sockets.push(PathBuf::from(path));
            }
        }
    }
    sockets
}

/// Which walls stand under commands here, for `lembas status`, the doctor and the window:
/// `namespaces, landlock ABI n (scopes), seccomp`, the same with `no namespaces: <why>`, or
/// `none: <why>`.
#[cfg(target_os = "linux")]
pub fn support() -> String {
    let abi = match landlock::abi() {
        Ok(abi) => abi,
        Err(why) => return format!("none: {why}"),
    };
    let scopes = if abi >= 6 { " (scopes)" } else { "" };
    match namespaces::available() {
        Ok(()) => format!("namespaces, landlock ABI {abi}{scopes}, seccomp"),
        Err(why) => format!("landlock ABI {abi}{scopes}, seccomp; no namespaces: {why}"),
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

/// The device itself: not dumpable, so no other program of the person's reads its memory or its
/// environment (`/proc/<pid>/environ`, `ptrace`), and no core file holds the token.
pub fn harden_this_process() {
    #[cfg(target_os = "linux")]
    // SAFETY: a plain flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

fn push_new(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

/// Whether the box covers `path` with a place of its own (its temp folder at `/tmp` and
/// `/var/tmp`, its own `/dev/shm`): a root above such a place (an editor's `/`) does not bring
/// what lies below it into the box; a root of its own there does.
pub fn covered_by_the_box(path: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        namespaces::covered(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        false
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
        assert!(plan.writable.contains(&plan.temp));
        assert!(!plan.writable.contains(&PathBuf::from("/tmp")));
        let session = plan.clone().with_temp(PathBuf::from("/home/nobody-here/t/ses_1"));
        assert!(session.temp.ends_with("t/ses_1") && session.writable.contains(&session.temp));
        assert!(!session.writable.contains(&plan.temp));
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
            line.contains("writes only inside /w/a, /w/b and its temp folder /tmp;"),
            "{line}"
        );
        assert_eq!(sandbox.refusal_line("Permission denied", Some(0)), None);
        assert_eq!(sandbox.refusal_line("no such file", Some(1)), None);
        assert!(
            sandbox
                .refusal_line("touch: x: Read-only file system", Some(1))
                .is_some()
        );
        sandbox.plan = true;
        let line = sandbox
            .refusal_line("touch: Operation not permitted", None)
            .unwrap();
        assert!(
            line.contains("writes only in its temp folder /tmp (plan mode);"),
            "{line}"
        );
    }
}
