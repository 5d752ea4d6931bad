//! DECISIONS.md "Paths": the places no remote session reads, shows or writes, even inside a root.
//! Shared by the bash judge (which judges paths lexically) and the file tools (which resolve them
//! first). Pure: compares names and components, reads no file system.

use std::path::Path;

/// Private key files by their usual names (and their `.pub` halves, which name the pair).
const KEY_NAMES: [&str; 6] = [
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
];

/// Folders under the home folder that hold credentials, with what they are.
const HOME_PLACES: [(&str, &str); 6] = [
    (".ssh", "your SSH folder"),
    (".gnupg", "your GnuPG keys"),
    (".aws", "your AWS credentials"),
    (".config/lembas", "this device's own settings"),
    (".local/share/keyrings", "the OS keychain"),
    ("Library/Keychains", "the OS keychain"),
];

/// Whether `path` is protected.
pub fn protected(path: &Path, home: &Path) -> bool {
    protection(path, home).is_some()
}

/// Why `path` is protected, as a phrase ("Git's internals", "an environment file"…), or `None`.
/// Names compare without regard to ASCII case: a case-insensitive file system (macOS, Windows)
/// opens `.ENV` as `.env`, so `.ENV` is protected everywhere. Called for every entry a search
/// walks, so it allocates nothing.
pub fn protection(path: &Path, home: &Path) -> Option<&'static str> {
    if path
        .components()
        .any(|c| same(c.as_os_str().as_encoded_bytes(), ".git"))
    {
        return Some("Git's internals");
    }
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if same(name.as_bytes(), ".env") || starts_with(&name, ".env.") {
        return Some("an environment file");
    }
    if ends_with(&name, ".pem") || ends_with(&name, ".key") {
        return Some("a key or certificate file");
    }
    let key = |k: &&str| {
        same(name.as_bytes(), k) || (starts_with(&name, k) && same(&name.as_bytes()[k.len()..], ".pub"))
    };
    if KEY_NAMES.iter().any(key) {
        return Some("an SSH key");
    }
    let in_home = path.strip_prefix(home).ok()?;
    HOME_PLACES
        .iter()
        .find(|(place, _)| under(in_home, Path::new(place)))
        .map(|(_, what)| *what)
}

fn same(a: impl AsRef<[u8]>, b: impl AsRef<[u8]>) -> bool {
    a.as_ref().eq_ignore_ascii_case(b.as_ref())
}

fn starts_with(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len() && same(&name.as_bytes()[..prefix.len()], prefix)
}

fn ends_with(name: &str, suffix: &str) -> bool {
    name.len() >= suffix.len() && same(&name.as_bytes()[name.len() - suffix.len()..], suffix)
}

/// `path` is `place` or below it, whole components compared without regard to ASCII case.
fn under(path: &Path, place: &Path) -> bool {
    let mut components = path.components();
    place.components().all(|p| {
        components
            .next()
            .is_some_and(|c| same(c.as_os_str().as_encoded_bytes(), p.as_os_str().as_encoded_bytes()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_places() {
        let home = Path::new("/home/p");
        for yes in [
            "/w/.git/config",
            "/w/.git",
            "/w/.env",
            "/w/.env.local",
            "/w/a.pem",
            "/w/tls.key",
            "/home/p/.ssh/config",
            "/home/p/.ssh",
            "/w/id_ed25519.pub",
            "/w/id_rsa",
            "/home/p/.config/lembas/config.yaml",
            "/home/p/.aws/credentials",
            // Odd spellings a case-insensitive file system opens as the protected file.
            "/w/.ENV",
            "/w/.Env.Local",
            "/w/.GIT/config",
            "/w/KEY.PEM",
            "/w/ID_RSA",
            "/w/Id_Ed25519.PUB",
            "/home/p/.SSH/id_rsa",
            "/home/p/.Config/Lembas/config.yaml",
        ] {
            assert!(protected(Path::new(yes), home), "{yes}");
        }
        for no in [
            "/w/.envrc",
            "/w/src/env.rs",
            "/w/keys.txt",
            "/w/id_card.txt",
            "/w/.gitignore",
            "/home/p/.config/other",
            "/home/p/.sshrc",
            "/other/.ssh/config",
            "/w/.envy",
            "/w/.gitx/config",
            "/w/pem",
            "/w/id_rsa.pubx",
            "/home/p/.sshx/config",
        ] {
            assert!(!protected(Path::new(no), home), "{no}");
        }
    }

    #[test]
    fn each_protection_says_what_it_is() {
        let home = Path::new("/home/p");
        for (path, what) in [
            ("/w/.git/HEAD", "Git's internals"),
            ("/w/.env.production", "an environment file"),
            ("/w/server.pem", "a key or certificate file"),
            ("/w/id_ecdsa", "an SSH key"),
            ("/home/p/.ssh/known_hosts", "your SSH folder"),
            ("/home/p/.local/share/keyrings/login.keyring", "the OS keychain"),
        ] {
            assert_eq!(protection(Path::new(path), home), Some(what), "{path}");
        }
    }
}
