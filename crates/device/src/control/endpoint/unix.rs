//! Unix: a socket file in a private folder, the peer's uid from the socket's credentials.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

use crate::control::credentials::{self, Folder};

pub type Stream = tokio::net::UnixStream;

pub struct Listener {
    inner: tokio::net::UnixListener,
}

/// The effective uid this process runs as.
pub fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

impl Listener {
    /// Makes the folder private (0700, ours), replaces a socket a runtime that died left
    /// behind (the caller holds the device lock, so no live runtime of ours serves there),
    /// binds, and makes the socket 0600.
    pub fn bind(path: &Path) -> io::Result<Listener> {
        let dir = path
            .parent()
            .ok_or_else(|| io::Error::other("the socket's path has no folder"))?;
        crate::paths::ensure_private_dir(dir)?;
        let meta = std::fs::symlink_metadata(dir)?;
        match credentials::folder(meta.uid(), meta.mode(), meta.is_dir(), own_uid()) {
            Folder::Private => {}
            Folder::Narrow => std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?,
            Folder::Refuse => {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{} is not a folder of this user's (or is a symbolic link): the control socket is not served there",
                        dir.display()
                    ),
                ));
            }
        }
        match std::fs::symlink_metadata(path) {
            Ok(old) if old.file_type().is_socket() => std::fs::remove_file(path)?,
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is not a socket: remove it", path.display()),
                ));
            }
            Err(_) => {}
        }
        let inner = tokio::net::UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(Listener { inner })
    }

    /// The next connection and its peer's uid (`None` when the OS could not say).
    pub async fn accept(&self) -> io::Result<(Stream, Option<u32>)> {
        let (stream, _) = self.inner.accept().await?;
        let uid = stream.peer_cred().ok().map(|c| c.uid());
        Ok((stream, uid))
    }
}

pub async fn connect(path: &Path) -> io::Result<Stream> {
    tokio::net::UnixStream::connect(path).await
}
