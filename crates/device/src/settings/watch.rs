//! Noticing that `config.yaml` changed, whoever changed it (this device, the CLI, the tray, an editor).
//!
//! The folder is watched rather than the file: an atomic save renames a new file over the old one,
//! and a watch on the old file would go quiet after the first save.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::SettingsError;

/// Watches the config file at `path` (creating its folder when missing). The receiver gets `()`
/// after changes to the file; bursts are coalesced (at most one signal waits), so a receiver should
/// re-read the file each time. Keep the watcher: dropping it stops the watching.
pub fn watch(path: &Path) -> Result<(RecommendedWatcher, mpsc::Receiver<()>), SettingsError> {
    let watch_error = |source| SettingsError::Watch {
        path: path.to_owned(),
        source,
    };
    let mut places = vec![place(path)?];
    // A config.yaml that links elsewhere is saved there, so that folder is watched as well.
    if path.is_symlink()
        && let Ok(target) = crate::canonical::canonicalize(path)
    {
        places.push(place(&target)?);
    }
    for (dir, _) in &places {
        crate::paths::ensure_private_dir(dir).map_err(|source| SettingsError::Write {
            path: dir.clone(),
            source,
        })?;
    }

    let (sender, receiver) = mpsc::channel(1);
    let names: Vec<OsString> = places.iter().map(|(_, name)| name.clone()).collect();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        if let Ok(event) = event
            && names_config(&event, &names)
        {
            // Full means a signal is already waiting: this change will be seen with it.
            let _ = sender.try_send(());
        }
    })
    .map_err(watch_error)?;
    for (dir, _) in &places {
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(watch_error)?;
    }
    Ok((watcher, receiver))
}

/// The folder to watch and the file name to look for in it.
fn place(path: &Path) -> Result<(PathBuf, OsString), SettingsError> {
    let name = path
        .file_name()
        .ok_or_else(|| SettingsError::Refused(format!("{} does not name a file to watch", path.display())))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_owned()))
}

/// Whether `event` may have changed one of the watched files. Reads are not changes (a reader that
/// reloads on them would wake itself forever); closing after writing is, as it marks an in-place
/// write as finished. On Linux, where that close is seen, a write itself is not: an editor that
/// truncates and writes in place would otherwise be read half-way (an empty file is remote work
/// off, which stops every job).
fn names_config(event: &Event, names: &[OsString]) -> bool {
    if let EventKind::Access(kind) = event.kind
        && kind != AccessKind::Close(AccessMode::Write)
    {
        return false;
    }
    if cfg!(target_os = "linux")
        && matches!(event.kind, EventKind::Modify(notify::event::ModifyKind::Data(_)))
    {
        return false;
    }
    event
        .paths
        .iter()
        .any(|p| p.file_name().is_some_and(|n| names.iter().any(|name| name == n)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::edit::{Change, apply_to};
    use notify::event::{CreateKind, DataChange, ModifyKind, RenameMode};
    use std::io::Write;
    use std::time::Duration;

    /// A signal arrives within a generous bound (the bound only keeps a broken watcher from hanging
    /// the test run).
    async fn signalled(receiver: &mut mpsc::Receiver<()>) {
        let got = tokio::time::timeout(Duration::from_secs(20), receiver.recv()).await;
        assert_eq!(got, Ok(Some(())), "no change was signalled");
    }

    #[tokio::test]
    async fn fires_on_an_atomic_save_into_a_new_folder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lembas/config.yaml");
        let (_watcher, mut receiver) = watch(&path).unwrap();
        assert!(
            path.parent().unwrap().is_dir(),
            "the folder should have been created"
        );
        apply_to(
            &path,
            std::path::Path::new("/home/nobody-here"),
            &[Change::RemoteEnabled(true)],
        )
        .unwrap();
        signalled(&mut receiver).await;
        // And again after the file was replaced once (a watch on the old file would be dead now).
        while receiver.try_recv().is_ok() {}
        tokio::time::sleep(Duration::from_millis(200)).await;
        while receiver.try_recv().is_ok() {}
        apply_to(
            &path,
            std::path::Path::new("/home/nobody-here"),
            &[Change::RemoteEnabled(false)],
        )
        .unwrap();
        signalled(&mut receiver).await;
    }

    #[tokio::test]
    async fn fires_on_an_in_place_edit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, "remote:\n  enabled: false\n").unwrap();
        let (_watcher, mut receiver) = watch(&path).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.write_all(b"remote:\n  enabled: true\n").unwrap();
        drop(file);
        signalled(&mut receiver).await;
    }

    #[test]
    fn only_changes_to_the_config_count() {
        let names = [OsString::from("config.yaml")];
        let dir = Path::new("/home/u/.config/lembas");
        let event = |kind, files: &[&str]| {
            files
                .iter()
                .fold(Event::new(kind), |e, f| e.add_path(dir.join(f)))
        };
        let data = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        let cases = [
            // Linux sees the close after the write; elsewhere the write is the signal.
            (event(data, &["config.yaml"]), !cfg!(target_os = "linux")),
            (event(EventKind::Create(CreateKind::File), &["config.yaml"]), true),
            (
                event(
                    EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
                    &[".config.yaml.1.ab.tmp", "config.yaml"],
                ),
                true,
            ),
            (
                event(
                    EventKind::Access(AccessKind::Close(AccessMode::Write)),
                    &["config.yaml"],
                ),
                true,
            ),
            (
                event(
                    EventKind::Access(AccessKind::Open(AccessMode::Any)),
                    &["config.yaml"],
                ),
                false,
            ),
            (
                event(
                    EventKind::Access(AccessKind::Close(AccessMode::Read)),
                    &["config.yaml"],
                ),
                false,
            ),
            (event(data, &[".config.yaml.1.ab.tmp"]), false),
            (event(data, &["config.yaml.bak"]), false),
            (event(data, &["other.yaml"]), false),
        ];
        for (event, expected) in cases {
            assert_eq!(names_config(&event, &names), expected, "{event:?}");
        }
    }
}
