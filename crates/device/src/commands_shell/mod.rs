//! The shell the `bash` tool, jobs and watches run their commands with.
//!
//! - Unix: `bash`, found on `PATH` when the command is spawned.
//! - Windows ([`windows`]): Git for Windows' `bash.exe`, found where Git installs it (never a
//!   `bash.exe` on `PATH`: `System32\bash.exe` is WSL's, which runs in another system with other
//!   paths). Where there is none, the device says so once, the `bash` tool is not offered, and a
//!   watch or job is refused with the same sentence.

#[cfg(windows)]
mod windows;

use std::path::{Path, PathBuf};

/// The shell for commands: a program name or path to spawn, or why there is none (a sentence a
/// person can act on).
pub fn bash() -> std::io::Result<PathBuf> {
    found().map_err(|why| std::io::Error::new(std::io::ErrorKind::NotFound, why))
}

/// The shell for commands, or why there is none; looked for once per process.
pub fn found() -> Result<PathBuf, String> {
    #[cfg(windows)]
    return windows::found();
    #[cfg(not(windows))]
    Ok(PathBuf::from("bash"))
}

/// Where Git for Windows puts `bash.exe`, in the order looked at: beside the `git.exe` found on
/// `PATH` (`<Git>\cmd\git.exe` or `<Git>\mingw64\bin\git.exe`, both `<Git>\bin\bash.exe`), then
/// the machine's install under `%ProgramFiles%`, then the per-user one under `%LOCALAPPDATA%`.
/// Pure, so it is tested on any system.
pub fn git_bash_candidates(
    git_on_path: Option<&Path>,
    program_files: Option<&Path>,
    local_app_data: Option<&Path>,
) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(folder) = git_on_path.and_then(Path::parent) {
        let git_root = if folder.ends_with("mingw64/bin") || folder.ends_with("mingw64\\bin") {
            folder.parent().and_then(Path::parent)
        } else {
            folder.parent()
        };
        if let Some(root) = git_root {
            candidates.push(root.join("bin").join("bash.exe"));
        }
    }
    if let Some(programs) = program_files {
        candidates.push(programs.join("Git").join("bin").join("bash.exe"));
    }
    if let Some(local) = local_app_data {
        candidates.push(local.join("Programs").join("Git").join("bin").join("bash.exe"));
    }
    let mut unique = Vec::new();
    for candidate in candidates {
        if !unique.contains(&candidate) {
            unique.push(candidate);
        }
    }
    unique
}

/// What is said where there is no shell for commands (the log, the doctor, a refused command).
pub const NO_GIT_BASH: &str = "Git for Windows' bash.exe was not found (beside git.exe on PATH, \
     in %ProgramFiles%\\Git or in %LOCALAPPDATA%\\Programs\\Git): remote commands, jobs and watches \
     cannot run and the bash tool is not offered. Install Git for Windows to have them";

#[cfg(test)]
mod tests {
    use super::git_bash_candidates;
    use std::path::{Path, PathBuf};

    #[test]
    fn bash_is_looked_for_beside_git_then_where_git_installs() {
        let found = git_bash_candidates(
            Some(Path::new("D:/Tools/Git/cmd/git.exe")),
            Some(Path::new("C:/Program Files")),
            Some(Path::new("C:/Users/a/AppData/Local")),
        );
        assert_eq!(
            found,
            [
                PathBuf::from("D:/Tools/Git/bin/bash.exe"),
                PathBuf::from("C:/Program Files/Git/bin/bash.exe"),
                PathBuf::from("C:/Users/a/AppData/Local/Programs/Git/bin/bash.exe"),
            ]
        );
    }

    #[test]
    fn git_in_mingw64_and_places_said_twice_are_looked_at_once() {
        let found = git_bash_candidates(
            Some(Path::new("C:/Program Files/Git/mingw64/bin/git.exe")),
            Some(Path::new("C:/Program Files")),
            None,
        );
        assert_eq!(found, [PathBuf::from("C:/Program Files/Git/bin/bash.exe")]);
        assert!(git_bash_candidates(None, None, None).is_empty());
    }
}
