//! Which shell a terminal runs and how it is started: the account's login shell, with the shell
//! integration's rc wrappers for bash, zsh and fish, or its command for PowerShell, or as a plain
//! login shell otherwise.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use portable_pty::CommandBuilder;

use super::integration::{self, RcFolder};

/// What the terminal describes itself as (the far end is xterm.js), set whatever the device had.
pub const TERM: &str = "xterm-256color";

/// The shell kinds the spec names, and PowerShell (marked too, named `other`); anything else is
/// `other` and gets no integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    Bash,
    Zsh,
    Fish,
    /// `pwsh` or Windows PowerShell: marked, but named `other` on the wire.
    PowerShell,
    Other,
}

impl ShellKind {
    /// By the executable's file name (`/usr/bin/zsh` is zsh; `pwsh.exe` and `PowerShell.exe`,
    /// in any case as Windows names them, are PowerShell).
    pub fn of(shell: &Path) -> Self {
        match shell.file_name().and_then(OsStr::to_str) {
            Some("bash") => Self::Bash,
            Some("zsh") => Self::Zsh,
            Some("fish") => Self::Fish,
            Some(name) if is_powershell(name) => Self::PowerShell,
            _ => Self::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Fish => "fish",
            // The spec's list is bash, zsh, fish and other.
            Self::PowerShell | Self::Other => "other",
        }
    }
}

/// The environment a shell starts from: this process's, with some variables set or removed.
/// Tests use the overrides for a temporary HOME and a chosen SHELL; the device uses none.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    overrides: BTreeMap<OsString, Option<OsString>>,
}

impl Environment {
    #[cfg(test)]
    pub fn set(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.overrides.insert(key.into(), Some(value.as_ref().to_owned()));
        self
    }

    #[cfg(test)]
    pub fn remove(mut self, key: &str) -> Self {
        self.overrides.insert(key.into(), None);
        self
    }

    pub fn var(&self, key: &str) -> Option<OsString> {
        match self.overrides.get(OsStr::new(key)) {
            Some(value) => value.clone(),
            None => std::env::var_os(key),
        }
    }

    /// `$SHELL` where it names an executable, else the account's shell, else /bin/sh.
    #[cfg(unix)]
    pub fn login_shell(&self) -> PathBuf {
        self.var("SHELL")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .filter(|s| is_executable(s))
            .or_else(|| account_shell().filter(|s| is_executable(s)))
            .unwrap_or_else(|| PathBuf::from("/bin/sh"))
    }

    /// PowerShell (`pwsh.exe` on `PATH`, else Windows PowerShell), else `%ComSpec%` (cmd).
    #[cfg(windows)]
    pub fn login_shell(&self) -> PathBuf {
        let on_path = self.var("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("pwsh.exe"))
                .find(|p| p.is_file())
        });
        let windows_powershell = self
            .var("SystemRoot")
            .map(|root| PathBuf::from(root).join(r"System32\WindowsPowerShell\v1.0\powershell.exe"));
        on_path
            .into_iter()
            .chain(windows_powershell)
            .chain(self.var("ComSpec").map(PathBuf::from))
            .find(|shell| is_executable(shell))
            .unwrap_or_else(|| PathBuf::from(r"C:\Windows\System32\cmd.exe"))
    }

    fn apply(&self, cmd: &mut CommandBuilder) {
        for (key, value) in &self.overrides {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            }
        }
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    path.is_absolute() && path.is_file() && unsafe { libc::access(c_path.as_ptr(), libc::X_OK) } == 0
}

#[cfg(windows)]
fn is_executable(path: &Path) -> bool {
    path.is_absolute() && path.is_file()
}

/// The shell in this account's passwd entry.
#[cfg(unix)]
fn account_shell() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStringExt;
    let mut buf = vec![0u8; 1024];
    loop {
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = unsafe {
            libc::getpwuid_r(
                libc::getuid(),
                &mut entry,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut found,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 || found.is_null() || entry.pw_shell.is_null() {
            return None;
        }
        let shell = unsafe { CStr::from_ptr(entry.pw_shell) }.to_bytes().to_vec();
        return (!shell.is_empty()).then(|| PathBuf::from(OsString::from_vec(shell)));
    }
}

/// How one terminal's shell is started.
pub struct Launch {
    pub command: CommandBuilder,
    pub kind: ShellKind,
    /// Whether the prompt marks will come.
    pub integration: bool,
    /// The rc wrappers, removed when the terminal ends.
    pub rc_folder: Option<RcFolder>,
}

fn is_powershell(file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    let stem = lower.strip_suffix(".exe").unwrap_or(&lower);
    stem == "pwsh" || stem == "powershell"
}

/// Builds the command for `shell` started in `cwd`. With `integration` (and bash, zsh or fish) the
/// rc wrappers are written to a private folder first; PowerShell's marks come as its command.
pub fn launch(
    env: &Environment,
    shell: &Path,
    cwd: &Path,
    integration: bool,
    host: &OsStr,
) -> std::io::Result<Launch> {
    let kind = ShellKind::of(shell);
    let mut rc_folder = None;
    let mut command = match (integration, kind) {
        (true, ShellKind::Bash) => {
            let folder = integration::bash(host)?;
            let mut cmd = CommandBuilder::new(shell);
            cmd.arg("--rcfile");
            cmd.arg(folder.path().join(integration::BASH_RC));
            cmd.arg("-i");
            rc_folder = Some(folder);
            cmd
        }
        (true, ShellKind::Zsh) => {
            let folder = integration::zsh(host, env.var("ZDOTDIR").as_deref())?;
            let mut cmd = CommandBuilder::new(shell);
            cmd.arg("-l");
            rc_folder = Some(folder);
            cmd
        }
        (true, ShellKind::Fish) => {
            let folder = integration::fish(host)?;
            let mut cmd = CommandBuilder::new(shell);
            cmd.arg("-l");
            cmd.arg("--init-command");
            cmd.arg(integration::fish_source_command(
                &folder.path().join(integration::FISH_RC),
            ));
            rc_folder = Some(folder);
            cmd
        }
        (true, ShellKind::PowerShell) => {
            let mut cmd = CommandBuilder::new(shell);
            cmd.args(["-NoExit", "-EncodedCommand"]);
            cmd.arg(integration::powershell_command(host));
            cmd
        }
        // A plain login shell: argv[0] is "-<name>", as login(1) starts it.
        #[cfg(unix)]
        _ => CommandBuilder::new_default_prog(),
        // Windows has no login shells: the shell itself.
        #[cfg(windows)]
        _ => CommandBuilder::new(shell),
    };
    env.apply(&mut command);
    // portable-pty starts the default program from $SHELL, and sets SHELL for the child.
    command.env("SHELL", shell);
    command.env("TERM", TERM);
    if let (ShellKind::Zsh, Some(folder)) = (kind, &rc_folder) {
        // zsh reads our wrappers; the first one puts the user's own ZDOTDIR (or none) back.
        command.env("ZDOTDIR", folder.path());
    }
    command.cwd(cwd);
    Ok(Launch {
        command,
        kind,
        integration: rc_folder.is_some() || (integration && kind == ShellKind::PowerShell),
        rc_folder,
    })
}

/// Whether this bash can carry the marks: PS0 and `${x@P}` came with bash 4.4.
pub async fn bash_supports_marks(shell: &Path) -> bool {
    let probe = tokio::process::Command::new(shell)
        .args([
            "--norc",
            "--noprofile",
            "-c",
            "echo $((BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1]))",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(std::time::Duration::from_secs(5), probe).await {
        Ok(Ok(out)) => String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u32>()
            .is_ok_and(|version| version >= 404),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_file_name() {
        let cases = [
            ("/bin/bash", ShellKind::Bash),
            ("/usr/local/bin/zsh", ShellKind::Zsh),
            ("/opt/homebrew/bin/fish", ShellKind::Fish),
            ("/bin/sh", ShellKind::Other),
            ("/bin/dash", ShellKind::Other),
            ("/usr/bin/bash5", ShellKind::Other),
            ("pwsh.exe", ShellKind::PowerShell),
            ("/usr/bin/pwsh", ShellKind::PowerShell),
            ("PowerShell.exe", ShellKind::PowerShell),
            ("cmd.exe", ShellKind::Other),
            ("pwsh-preview", ShellKind::Other),
        ];
        for (path, kind) in cases {
            assert_eq!(ShellKind::of(Path::new(path)), kind, "{path}");
        }
    }

    #[test]
    fn shell_from_env_else_account() {
        let bash = Environment::default().set("SHELL", "/bin/bash");
        assert_eq!(bash.login_shell(), PathBuf::from("/bin/bash"));
        let missing = Environment::default().set("SHELL", "/nonexistent/shell");
        let from_account = Environment::default().remove("SHELL").login_shell();
        assert_eq!(missing.login_shell(), from_account);
        assert!(is_executable(&from_account), "{}", from_account.display());
    }
}
