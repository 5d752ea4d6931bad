//! The shell integration's rc wrappers (OSC 133 prompt marks and OSC 7), kept as assets beside this
//! file and written per terminal into a private folder (0700) that is removed when the terminal ends.
//!
//! Marks, the same in every shell: `D;<status>` and OSC 7 before each prompt (D only when a command
//! line was run, so never for an empty one or the first prompt), `A` where the prompt starts, `B`
//! where it ends, `C` when a command line is accepted. OSC 7 is `file://<host><cwd>`, the path
//! percent-encoded byte by byte (unreserved ASCII and '/' kept). Sequences end with BEL.
//!
//! - bash: `bash --rcfile <ours> -i`. Ours reads /etc/profile (PS1 unset), then the first of
//!   ~/.bash_profile, ~/.bash_login, ~/.profile. Not being a login shell, it gets an EXIT trap
//!   (set before any EXIT trap the user's files set, which it keeps and runs after) reading
//!   ~/.bash_logout then /etc/bash.bash_logout, and a `logout` function that exits; the trap also
//!   runs when the shell is hung up. Marks: a hook first and one last in PROMPT_COMMAND (array or
//!   string kept as it was), the last one putting A/B around PS1 afresh; C in PS0; "a command ran"
//!   is the prompt's command number (`\#`) having grown. `$?` and `$_` are kept for the user's hooks.
//! - zsh: `zsh -l` with ZDOTDIR at ours. Our .zshenv and .zprofile read the user's with the user's
//!   ZDOTDIR in place (unset, or the environment's, or what their .zshenv set, exported or not);
//!   our .zshrc restores it, removes our variables and functions, reads the user's .zshrc, then adds
//!   precmd hooks first and last (the last one puts itself last again at every prompt) and a
//!   preexec hook. zsh then reads the user's .zlogin itself.
//! - fish: `fish -l --init-command 'source <ours>'`, after the user's configuration: fish_prompt is
//!   wrapped (A, theirs, B), and wrapped again whenever something defines it afresh; events
//!   fish_preexec (C) and fish_postexec (D).
//! - PowerShell (`pwsh`, Windows PowerShell): `-NoExit -EncodedCommand <ours>`, run after the
//!   user's profiles; a command rather than a file, since Windows' default execution policy runs no
//!   script file. The user's `prompt` is wrapped (D and OSC 7, A, theirs, B; `$LASTEXITCODE` kept),
//!   and PSReadLine's `PSConsoleHostReadLine` where it is loaded (C). "A command ran" is the history
//!   having grown. Its wire name is `other` (the spec lists no PowerShell); integration is true.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

const BASHRC: &str = include_str!("integration/bashrc.bash");
const ZSHENV: &str = include_str!("integration/zshenv.zsh");
const ZPROFILE: &str = include_str!("integration/zprofile.zsh");
const ZSHRC: &str = include_str!("integration/zshrc.zsh");
const FISH_CONFIG: &str = include_str!("integration/config.fish");
const POWERSHELL_PROMPT: &str = include_str!("integration/prompt.ps1");

pub const BASH_RC: &str = "bashrc";
pub const FISH_RC: &str = "lembas.fish";

/// A private folder holding one terminal's rc wrappers; removed when dropped.
#[derive(Debug)]
pub struct RcFolder {
    path: PathBuf,
}

impl RcFolder {
    /// A new folder in the temporary directory, readable by this account only.
    pub fn create() -> std::io::Result<Self> {
        let parent = std::env::temp_dir();
        loop {
            let path = parent.join(format!("lembas-terminal-{:016x}", fastrand::u64(..)));
            match private_folder().create(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, name: &str, text: &[u8]) -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(self.path.join(name))?;
        file.write_all(text)
    }
}

impl Drop for RcFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `bashrc`, read through `bash --rcfile`.
pub fn bash(host: &OsStr) -> std::io::Result<RcFolder> {
    let folder = RcFolder::create()?;
    folder.write(
        BASH_RC,
        &fill(BASHRC, &[("@LEMBAS_HOST@", &sh_quote(&os_bytes(host)))]),
    )?;
    Ok(folder)
}

/// `.zshenv`, `.zprofile` and `.zshrc`, read through `ZDOTDIR`. `user_zdotdir` is the ZDOTDIR the
/// shell would have had (the device's own environment's), put back before the user's files run.
pub fn zsh(host: &OsStr, user_zdotdir: Option<&OsStr>) -> std::io::Result<RcFolder> {
    let folder = RcFolder::create()?;
    let ours = sh_quote(&os_bytes(folder.path().as_os_str()));
    let user = sh_quote(&user_zdotdir.map(os_bytes).unwrap_or_default());
    let user_set: &[u8] = if user_zdotdir.is_some() { b"1" } else { b"0" };
    let values: [(&str, &[u8]); 4] = [
        ("@LEMBAS_ZDOTDIR@", &ours),
        ("@LEMBAS_USER_ZDOTDIR_SET@", user_set),
        ("@LEMBAS_USER_ZDOTDIR@", &user),
        ("@LEMBAS_HOST@", &sh_quote(&os_bytes(host))),
    ];
    folder.write(".zshenv", &fill(ZSHENV, &values))?;
    folder.write(".zprofile", &fill(ZPROFILE, &values))?;
    folder.write(".zshrc", &fill(ZSHRC, &values))?;
    Ok(folder)
}

/// `lembas.fish`, sourced by `fish --init-command` after the user's configuration.
pub fn fish(host: &OsStr) -> std::io::Result<RcFolder> {
    let folder = RcFolder::create()?;
    folder.write(
        FISH_RC,
        &fill(FISH_CONFIG, &[("@LEMBAS_HOST@", &fish_quote(&os_bytes(host)))]),
    )?;
    Ok(folder)
}

/// The `-EncodedCommand` that sets up PowerShell's marks: the script as UTF-16LE in base64, as
/// PowerShell reads it (no quoting on the command line to get wrong).
pub fn powershell_command(host: &OsStr) -> String {
    use base64::Engine;
    let script = fill(
        POWERSHELL_PROMPT,
        &[("@LEMBAS_HOST@", &powershell_quote(&os_bytes(host)))],
    );
    let utf16: Vec<u8> = String::from_utf8_lossy(&script)
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    base64::engine::general_purpose::STANDARD.encode(utf16)
}

/// A folder only this account reads: 0700 on Unix; on Windows the temporary directory is the
/// account's own (its ACL), and what is made in it inherits that.
fn private_folder() -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    #[cfg(not(unix))]
    builder.recursive(false);
    builder
}

/// The `--init-command` that sources `rc`.
pub fn fish_source_command(rc: &Path) -> std::ffi::OsString {
    let mut command = b"source ".to_vec();
    command.extend(fish_quote(&os_bytes(rc.as_os_str())));
    os_string(command)
}

/// A name's bytes: as they are on Unix; on Windows (names are UTF-16) its UTF-8, any unpaired
/// surrogate replaced.
fn os_bytes(name: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    return std::borrow::Cow::Borrowed(std::os::unix::ffi::OsStrExt::as_bytes(name));
    #[cfg(windows)]
    std::borrow::Cow::Owned(name.to_string_lossy().into_owned().into_bytes())
}

/// [`os_bytes`] back.
fn os_string(bytes: Vec<u8>) -> std::ffi::OsString {
    #[cfg(unix)]
    return std::os::unix::ffi::OsStringExt::from_vec(bytes);
    #[cfg(windows)]
    std::ffi::OsString::from(String::from_utf8_lossy(&bytes).into_owned())
}

/// The asset with each placeholder replaced (bytes: a path need not be UTF-8).
fn fill(asset: &str, values: &[(&str, &[u8])]) -> Vec<u8> {
    let mut text = asset.as_bytes().to_vec();
    for (placeholder, value) in values {
        let mut out = Vec::with_capacity(text.len());
        let mut rest = text.as_slice();
        while let Some(at) = find(rest, placeholder.as_bytes()) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(value);
            rest = &rest[at + placeholder.len()..];
        }
        out.extend_from_slice(rest);
        text = out;
    }
    text
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A single-quoted word for bash and zsh.
fn sh_quote(value: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &b in value {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// A single-quoted word for fish, where `\\` and `\'` are the escapes inside single quotes.
fn fish_quote(value: &[u8]) -> Vec<u8> {
    let mut out = vec![b'\''];
    for &b in value {
        if b == b'\'' || b == b'\\' {
            out.push(b'\\');
        }
        out.push(b);
    }
    out.push(b'\'');
    out
}

/// A single-quoted string for PowerShell, where `''` is a quote inside one. PowerShell also takes
/// the typographic quotes (U+2018, U+2019, U+201A, U+201B) as quotes: doubled as well.
fn powershell_quote(value: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(value);
    let mut out = String::from("'");
    for c in text.chars() {
        if matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}') {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powershell_gets_the_script_encoded_with_the_host_quoted() {
        use base64::Engine;
        let encoded = powershell_command(OsStr::new("o'brien-pc"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&encoded)
            .unwrap();
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
            .collect();
        let script = String::from_utf16(&units).unwrap();
        assert!(
            script.contains("$Global:__LembasHost = 'o''brien-pc'"),
            "{script}"
        );
        assert!(!script.contains("@LEMBAS_"));
        for mark in ["133;D;$status", "]7;file://", "133;A", "133;B", "133;C"] {
            assert!(script.contains(mark), "{mark}");
        }
        assert_eq!(
            powershell_quote("a\u{2019}b".as_bytes()),
            "'a\u{2019}\u{2019}b'".as_bytes()
        );
    }

    #[test]
    fn quoting_round_trips_through_the_shells() {
        let values = [
            "plain",
            "it's",
            "a b",
            "back\\slash",
            "x'\\'y",
            "é",
            "$HOME `x` \"q\"",
        ];
        for value in values {
            let sh = String::from_utf8(sh_quote(value.as_bytes())).unwrap();
            let out = std::process::Command::new("bash")
                .args(["--norc", "-c", &format!("printf %s {sh}")])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), value, "bash {sh}");
            let fish = String::from_utf8(fish_quote(value.as_bytes())).unwrap();
            let out = std::process::Command::new("fish")
                .args(["--no-config", "-c", &format!("printf %s {fish}")])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), value, "fish {fish}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn folder_is_private_and_removed() {
        let folder = bash(OsStr::new("host")).unwrap();
        let path = folder.path().to_owned();
        let mode = std::fs::metadata(&path).unwrap().permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777, 0o700);
        let rc = std::fs::read_to_string(path.join(BASH_RC)).unwrap();
        assert!(rc.contains("'host'") && !rc.contains("@LEMBAS_"), "{rc}");
        drop(folder);
        assert!(!path.exists());
    }

    #[test]
    fn zsh_wrappers_carry_both_folders() {
        let folder = zsh(OsStr::new("h"), Some(OsStr::new("/home/u/zsh conf"))).unwrap();
        let env = std::fs::read_to_string(folder.path().join(".zshenv")).unwrap();
        assert!(env.contains("__lembas_user_zdotdir='/home/u/zsh conf'"), "{env}");
        assert!(env.contains("__lembas_user_zdotdir_set=1"));
        assert!(env.contains(&format!("__lembas_zdotdir='{}'", folder.path().display())));
        for name in [".zshenv", ".zprofile", ".zshrc"] {
            let text = std::fs::read_to_string(folder.path().join(name)).unwrap();
            assert!(!text.contains("@LEMBAS_"), "{name}");
        }
    }
}
