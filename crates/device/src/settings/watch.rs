//! Placeholder until the settings branch lands.
use super::SettingsError;
use std::path::Path;

pub fn watch(path: &Path) -> Result<(notify::RecommendedWatcher, tokio::sync::mpsc::Receiver<()>), SettingsError> {
    use notify::Watcher;
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let dir = path.parent().unwrap_or(Path::new("/")).to_owned();
    let _ = std::fs::create_dir_all(&dir);
    let mut w = notify::recommended_watcher(move |_res: notify::Result<notify::Event>| {
        let _ = tx.try_send(());
    })
    .map_err(|e| SettingsError::Io { path: dir.clone(), source: std::io::Error::other(e) })?;
    w.watch(&dir, notify::RecursiveMode::NonRecursive)
        .map_err(|e| SettingsError::Io { path: dir.clone(), source: std::io::Error::other(e) })?;
    Ok((w, rx))
}
