//! The device token in the OS keychain: Secret Service on Linux, Keychain on macOS, Credential
//! Manager on Windows. This is the only way a token reaches the device: never argv, the
//! environment or a plain file (the explicit `--insecure-storage` opt-in of `lembas login` aside).

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
}

fn entry() -> Result<keyring::Entry, KeychainError> {
    keyring::Entry::new(SERVICE, ACCOUNT).map_err(unavailable)
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

/// Stores the token, replacing any earlier one. Blocking: call from a blocking context.
pub fn store(token: &Token) -> Result<(), KeychainError> {
    entry()?.set_password(token.expose()).map_err(unavailable)
}

/// Reads the token. Blocking.
pub fn load() -> Result<Token, KeychainError> {
    match entry()?.get_password() {
        Ok(secret) => Token::new(&secret).map_err(|_| KeychainError::Missing),
        Err(keyring::Error::NoEntry) => Err(KeychainError::Missing),
        Err(e) => Err(unavailable(e)),
    }
}

/// Removes the token; absent already is fine. Blocking.
pub fn delete() -> Result<(), KeychainError> {
    match entry()?.delete_credential() {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(unavailable(e)),
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
}
