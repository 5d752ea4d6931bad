//! Windows: Git for Windows' `bash.exe`, looked for once.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::{NO_GIT_BASH, git_bash_candidates};

/// The `bash.exe` found, or why there is none; said in the log the first time it is asked.
pub(super) fn found() -> Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let git = std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|folder| folder.join("git.exe"))
                    .find(|git| git.is_file())
            });
            let program_files = std::env::var_os("ProgramFiles").map(PathBuf::from);
            let local = std::env::var_os("LOCALAPPDATA").map(PathBuf::from);
            let found = git_bash_candidates(git.as_deref(), program_files.as_deref(), local.as_deref())
                .into_iter()
                .find(|bash| bash.is_file());
            match found {
                Some(bash) => {
                    tracing::info!("Commands run with {}", bash.display());
                    Ok(bash)
                }
                None => {
                    tracing::warn!("{NO_GIT_BASH}.");
                    Err(format!("{NO_GIT_BASH}."))
                }
            }
        })
        .clone()
}
