//! The sandbox made for one command ([`Prepared`]), kept until the command is spawned: how its
//! child is confined (the box, Landlock, seccomp on Linux; Seatbelt on macOS) and the environment
//! that passes.

use std::io;
use std::path::{Path, PathBuf};

use super::passed;
#[cfg(target_os = "macos")]
use super::{Profile, SANDBOX_EXEC};
#[cfg(target_os = "linux")]
use super::{landlock, landlock_in_box, namespaces, seccomp};

/// The temp folder as a command in the box sees it.
#[cfg(target_os = "linux")]
const BOX_TEMP: &str = "/tmp";

/// The sandbox made for one command, kept until it has been spawned.
pub struct Prepared {
    pub(super) confinement: Confinement,
    pub(super) temp: PathBuf,
    pub(super) env_keep: Vec<String>,
}

pub(super) enum Confinement {
    /// `remote.sandbox: auto` where none can be had: run as before.
    None,
    /// The kernel has a sandbox but this one could not be made: refuse, saying why.
    #[cfg(target_os = "linux")]
    Broken(String),
    #[cfg(target_os = "linux")]
    Walls(Box<Walls>),
    #[cfg(target_os = "macos")]
    Seatbelt(Profile),
}

/// Linux's walls for one command.
#[cfg(target_os = "linux")]
pub(super) struct Walls {
    /// `None` where namespaces cannot be made.
    pub(super) boxed: Option<BoxPlaces>,
    /// Governing places the roots lack: removed after the command when it made them.
    pub(super) absent: Vec<PathBuf>,
    pub(super) landlock: LandlockLayer,
    pub(super) abi: i32,
    pub(super) seccomp: seccomp::Filter,
}

/// Landlock under a command: made inside the box, or, without one, here from the person's places.
#[cfg(target_os = "linux")]
pub(super) enum LandlockLayer {
    InBox(landlock_in_box::InBox),
    Rules(std::sync::Arc<landlock::Landlock>),
}

/// What the box holds, the folder where the command starts aside.
#[cfg(target_os = "linux")]
pub(super) struct BoxPlaces {
    pub(super) roots: Vec<PathBuf>,
    pub(super) own: Vec<PathBuf>,
    pub(super) plan: bool,
    pub(super) governing: Vec<PathBuf>,
    pub(super) hidden: Vec<PathBuf>,
    pub(super) absent_file: PathBuf,
    pub(super) runtime: Vec<PathBuf>,
}

impl Prepared {
    /// The command that runs `program` in `cwd` in the sandbox, with the environment that passes.
    pub(crate) fn command(
        self,
        program: impl AsRef<std::ffi::OsStr>,
        cwd: &Path,
    ) -> io::Result<tokio::process::Command> {
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
        command.current_dir(cwd);
        let temp = self.temp_seen_by_command();
        command.env_clear();
        command.envs(passed(std::env::vars_os(), &self.env_keep, temp.as_os_str()));
        #[cfg(target_os = "linux")]
        if let Confinement::Walls(walls) = self.confinement {
            walls.confine(&mut command, &self.temp, cwd)?;
        }
        Ok(command)
    }

    /// `/tmp` in the box; the temp folder itself where there is none.
    fn temp_seen_by_command(&self) -> PathBuf {
        #[cfg(target_os = "linux")]
        if let Confinement::Walls(walls) = &self.confinement
            && walls.boxed.is_some()
        {
            return PathBuf::from(BOX_TEMP);
        }
        self.temp.clone()
    }

    /// Whether the command runs sandboxed.
    pub(crate) fn on(&self) -> bool {
        !matches!(self.confinement, Confinement::None)
    }

    /// The governing places to sweep after the command: those it may have made.
    pub(crate) fn absent(&self) -> Vec<PathBuf> {
        match &self.confinement {
            #[cfg(target_os = "linux")]
            Confinement::Walls(walls) => walls.absent.clone(),
            _ => Vec::new(),
        }
    }

    /// Landlock's ABI and rule count, for the benchmark's note; `None` without Landlock.
    pub fn landlock_rules(&self) -> Option<(i32, usize)> {
        match &self.confinement {
            #[cfg(target_os = "linux")]
            Confinement::Walls(walls) => Some((
                walls.abi,
                match &walls.landlock {
                    LandlockLayer::InBox(rules) => rules.rules(),
                    LandlockLayer::Rules(ruleset) => ruleset.rules,
                },
            )),
            _ => None,
        }
    }

    /// Whether the command runs in its own namespaces.
    pub fn boxed(&self) -> bool {
        match &self.confinement {
            #[cfg(target_os = "linux")]
            Confinement::Walls(walls) => walls.boxed.is_some(),
            _ => false,
        }
    }
}

#[cfg(target_os = "linux")]
impl Walls {
    /// Sets the child up to enter the box (where it can be made), then restrict itself: no new
    /// privileges, Landlock, seccomp.
    fn confine(self, command: &mut tokio::process::Command, temp: &Path, cwd: &Path) -> io::Result<()> {
        let mut layout = match &self.boxed {
            Some(places) => Some(namespaces::Layout::new(&namespaces::Description {
                roots: &places.roots,
                own: &places.own,
                plan: places.plan,
                temp,
                governing: &places.governing,
                hidden: &places.hidden,
                absent_file: &places.absent_file,
                emptied: &places.runtime,
                cwd,
            })?),
            None => None,
        };
        let (landlock, seccomp) = (self.landlock, self.seccomp);
        // SAFETY: the closure runs between fork and exec; it makes system calls with what was made
        // here, and allocates nothing (an OS error is a plain number).
        unsafe {
            command.pre_exec(move || {
                if let Some(layout) = &mut layout {
                    layout.enter()?;
                }
                // No new privileges: a setuid program (sudo) cannot leave the sandbox, and
                // Landlock and seccomp require it of an unprivileged caller.
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                match &landlock {
                    LandlockLayer::InBox(rules) => rules.restrict()?,
                    LandlockLayer::Rules(ruleset) => ruleset.restrict()?,
                }
                seccomp.load()
            });
        }
        Ok(())
    }
}
