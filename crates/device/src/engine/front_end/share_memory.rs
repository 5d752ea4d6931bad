//! `chat.share: ask`'s answers, one per folder (`<state>/chat-share.json`, `{ folder: bool }`),
//! written whole and atomically so a crash leaves the old answers or the new ones.

use std::collections::BTreeMap;
use std::path::Path;

const FILE: &str = "chat-share.json";

fn read(state: &Path) -> BTreeMap<String, bool> {
    std::fs::read(state.join(FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The answer kept for `folder`, if it was asked.
pub(super) fn remembered(state: &Path, folder: &Path) -> Option<bool> {
    read(state).get(&folder.display().to_string()).copied()
}

/// Keeps `share` as `folder`'s answer.
pub(super) fn remember(state: &Path, folder: &Path, share: bool) -> std::io::Result<()> {
    let mut answers = read(state);
    answers.insert(folder.display().to_string(), share);
    let bytes = serde_json::to_vec_pretty(&answers).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(state)?;
    crate::whole_file::write(&state.join(FILE), &bytes, crate::whole_file::Mode::PRIVATE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_kept_per_folder_and_a_broken_file_reads_as_none_asked() {
        let state = tempfile::tempdir().unwrap();
        assert_eq!(remembered(state.path(), Path::new("/w/a")), None);
        remember(state.path(), Path::new("/w/a"), true).unwrap();
        remember(state.path(), Path::new("/w/b"), false).unwrap();
        assert_eq!(remembered(state.path(), Path::new("/w/a")), Some(true));
        assert_eq!(remembered(state.path(), Path::new("/w/b")), Some(false));
        std::fs::write(state.path().join(FILE), "not json").unwrap();
        assert_eq!(remembered(state.path(), Path::new("/w/a")), None);
    }
}
