//! The device token in the OS keychain: Secret Service on Linux, Keychain on macOS, Credential
//! Manager on Windows. This is the only way a token reaches the device: never argv, the
//! environment or a plain file (the explicit `--insecure-storage` opt-in of `lembas login` aside).
//!
//! That opt-in keeps the token in [`token_file`], a file only the user can read (0600) in the config
//! folder, a protected path that remote sessions never read or show. It is never chosen silently:
//! only a login that asked for it writes the file, and every read of it says so in the log.

use std::path::{Path, PathBuf};

use crate::paths::Dirs;
use crate::whole_file::{self, Mode};

/// The keychain entry: service and account names. One device login per user.
pub const SERVICE: &str = "lembas";
pub const ACCOUNT: &str = "device-token";

/// A device token. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Trims white space; an empty token is refused.
    pub fn new(raw: &str) -> Result<Self, KeychainError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(KeychainError::Empty);
        }
        Ok(Self(trimmed.to_string()))
    }

    /// The secret itself, for the Authorization header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KeychainError {
    #[error("the token is empty")]
    Empty,
    #[error(
        "not logged in: there is no device token in the keychain. Log in with: lembas login --token-stdin --server <url>"
    )]
    Missing,
    #[error(
        "no OS keychain is reachable ({0}). On Linux the token is kept by the Secret Service (gnome-keyring or KeePassXC) on the session D-Bus: start one and unlock it, or log in with --insecure-storage to keep the token in a file only you can read"
    )]
    Unavailable(String),
    /// The `--insecure-storage` token file could not be read, written or removed.
    #[error("cannot use the token file {path}: {why}. Check that folder's permissions, or log in again.")]
    File { path: PathBuf, why: String },
}

/// Where a login keeps the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenStorage {
    /// The OS keychain (the default).
    Keychain,
    /// [`token_file`]: a 0600 plain file, only when the person asked for it (`--insecure-storage`).
    InsecureFile,
}

/// Where this device keeps its token: an entry of the OS keychain and, for the
/// `--insecure-storage` opt-in, a file beside `config.yaml` (never in it). Handed down by the
/// program hosting the device, as its [`Dirs`] are; a test takes an entry of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keychain {
    service: String,
    token_file: PathBuf,
}

impl Keychain {
    /// The person's device token: the `lembas` entry, the file in `dirs.config`.
    pub fn of(dirs: &Dirs) -> Keychain {
        Keychain::named(SERVICE, dirs)
    }

    /// An entry under another service name (tests running at once in one keychain).
    pub fn named(service: &str, dirs: &Dirs) -> Keychain {
        Keychain {
            service: service.to_string(),
            token_file: dirs.config.join(ACCOUNT),
        }
    }

    /// The `--insecure-storage` file.
    pub fn token_file(&self) -> &Path {
        &self.token_file
    }

    fn entry(&self) -> Result<keyring::Entry, KeychainError> {
        keyring::Entry::new(&self.service, ACCOUNT).map_err(unavailable)
    }

    /// Stores the token in the keychain, replacing any earlier one. Blocking: call from a
    /// blocking context.
    pub fn store(&self, token: &Token) -> Result<(), KeychainError> {
        self.entry()?.set_password(token.expose()).map_err(unavailable)
    }

    /// Stores the token where `storage` says and removes it from the other place, so that exactly one
    /// token is kept and [`Keychain::load`] cannot find a stale one. Blocking.
    pub fn store_in(&self, token: &Token, storage: TokenStorage) -> Result<(), KeychainError> {
        match storage {
            TokenStorage::Keychain => {
                self.store(token)?;
                remove_file(&self.token_file).map(|_| ())
            }
            TokenStorage::InsecureFile => {
                write_file(&self.token_file, token)?;
                // A keychain that cannot be reached holds nothing we could read instead of the file.
                match self.delete_from_keychain() {
                    Ok(()) | Err(KeychainError::Unavailable(_)) => Ok(()),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Reads the token: the keychain first, then the `--insecure-storage` file if there is one. Blocking.
    pub fn load(&self) -> Result<Token, KeychainError> {
        self.load_with_storage().map(|(token, _)| token)
    }

    /// [`Keychain::load`], also saying where the token was found. Every read of the file is logged as a warning.
    pub fn load_with_storage(&self) -> Result<(Token, TokenStorage), KeychainError> {
        let from_keychain = self.entry().and_then(|entry| match entry.get_password() {
            Ok(secret) => Token::new(&secret).map_err(|_| KeychainError::Missing),
            Err(keyring::Error::NoEntry) => Err(KeychainError::Missing),
            Err(e) => Err(unavailable(e)),
        });
        match from_keychain {
            Ok(token) => Ok((token, TokenStorage::Keychain)),
            Err(keychain_error @ (KeychainError::Missing | KeychainError::Unavailable(_))) => {
                let path = &self.token_file;
                match read_file(path)? {
                    Some(token) => {
                        tracing::warn!(
                            "using the device token from {}, a plain file (logged in with --insecure-storage); log in again without it to keep the token in the OS keychain",
                            path.display()
                        );
                        Ok((token, TokenStorage::InsecureFile))
                    }
                    None => Err(keychain_error),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Removes the token from the keychain and the file; absent already is fine. An unreachable
    /// keychain is an error only when there was no file either: a token kept in the file means the
    /// login never used the keychain. Blocking.
    pub fn delete(&self) -> Result<(), KeychainError> {
        let removed_file = remove_file(&self.token_file)?;
        match self.delete_from_keychain() {
            Err(KeychainError::Unavailable(_)) if removed_file => Ok(()),
            other => other,
        }
    }

    fn delete_from_keychain(&self) -> Result<(), KeychainError> {
        match self.entry()?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(unavailable(e)),
        }
    }
}

fn unavailable(e: keyring::Error) -> KeychainError {
    KeychainError::Unavailable(match e {
        keyring::Error::NoDefaultStore => {
            "no credential store could be opened: is there a session D-Bus?".to_string()
        }
        keyring::Error::NoStorageAccess(_) => "the keychain refused access: is it locked?".to_string(),
        other => other.to_string(),
    })
}

fn file_error(path: &Path, e: impl std::fmt::Display) -> KeychainError {
    KeychainError::File {
        path: path.to_owned(),
        why: e.to_string(),
    }
}

/// Writes the token file whole ([`whole_file`]), readable and writable by its owner only from the
/// first byte.
fn write_file(path: &Path, token: &Token) -> Result<(), KeychainError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| file_error(dir, e))?;
    let text = format!("{}\n", token.expose());
    whole_file::write(path, text.as_bytes(), Mode::PRIVATE).map_err(|e| file_error(path, e))
}

/// The token in the file; `None` when there is no file or it holds nothing.
fn read_file(path: &Path) -> Result<Option<Token>, KeychainError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            #[cfg(unix)]
            if let Ok(meta) = std::fs::metadata(path) {
                use std::os::unix::fs::PermissionsExt;
                if meta.permissions().mode() & 0o077 != 0 {
                    tracing::warn!(
                        "{} can be read by other users (mode {:o}); run chmod 600 on it, or log in again",
                        path.display(),
                        meta.permissions().mode() & 0o777
                    );
                }
            }
            Ok(Token::new(&text).ok())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(file_error(path, e)),
    }
}

/// Removes the file; whether there was one.
fn remove_file(path: &Path) -> Result<bool, KeychainError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(file_error(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_never_show() {
        let t = Token::new("  s3cret-token\n").unwrap();
        assert_eq!(t.expose(), "s3cret-token");
        assert!(!format!("{t:?} {t}").contains("s3cret"));
        assert!(matches!(Token::new(" \n"), Err(KeychainError::Empty)));
    }

    #[cfg(unix)]
    #[test]
    fn the_token_file_is_private_and_round_trips() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/device-token");
        assert!(read_file(&path).unwrap().is_none());
        let token = Token::new("file-token-1").unwrap();
        write_file(&path, &token).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read_file(&path).unwrap(), Some(token));
        write_file(&path, &Token::new("file-token-2").unwrap()).unwrap();
        assert_eq!(read_file(&path).unwrap().unwrap().expose(), "file-token-2");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary is left behind");
        assert!(remove_file(&path).unwrap());
        assert!(!remove_file(&path).unwrap());
    }
}
