//! docs/protocol.md "Paths": the places no remote session reads, shows or writes, even inside a root.
//! Shared by the bash judge (which judges paths lexically) and the file tools (which resolve them
//! first). Pure: compares names and components, reads no file system.
//! The device's own folders are protected where the environment puts them ([`Protected`]), and by
//! their usual names under the home folder too.

use std::path::{Path, PathBuf};

/// Private key files by their usual names: `id_` and a key type, with anything after it
/// (`id_rsa_deploy`, `id_ed25519_github`, `id_rsa.old`, `.pub` halves).
const KEY_TYPES: [&str; 5] = ["rsa", "dsa", "ecdsa", "ed25519", "xmss"];

/// Places under the home folder that hold credentials, with what they are: never read by a file
/// tool, hidden from every command (README, "What remote work can and cannot touch").
pub(crate) const HOME_PLACES: [(&str, &str); 27] = [
    (".ssh", "your SSH folder"),
    (".gnupg", "your GnuPG keys"),
    (".aws", "your AWS credentials"),
    (".azure", "your Azure credentials"),
    (".config/gcloud", "your Google Cloud credentials"),
    (".kube", "your Kubernetes credentials"),
    (".docker", "your Docker credentials"),
    (".git-credentials", "your Git credentials"),
    (".netrc", "your network passwords"),
    (".npmrc", "your npm credentials"),
    (".pypirc", "your PyPI credentials"),
    (".cargo/credentials", "your Cargo credentials"),
    (".cargo/credentials.toml", "your Cargo credentials"),
    (".config/gh", "your GitHub CLI credentials"),
    (".password-store", "your password store"),
    (".local/share/keyrings", "the OS keychain"),
    ("Library/Keychains", "the OS keychain"),
    (".mozilla", "your browser profiles"),
    (".config/google-chrome", "your browser profiles"),
    (".config/chromium", "your browser profiles"),
    (".config/BraveSoftware", "your browser profiles"),
    (".config/microsoft-edge", "your browser profiles"),
    ("snap/firefox", "your browser profiles"),
    ("snap/chromium", "your browser profiles"),
    (
        "Library/Application Support/Google/Chrome",
        "your browser profiles",
    ),
    ("Library/Application Support/Firefox", "your browser profiles"),
    ("Library/Cookies", "your browser profiles"),
];

const CONFIG: &str = "this device's own settings";
const STATE: &str = "this device's own state (sessions, turns, the activity log)";

/// The protected places of this computer: the name rules (anywhere), the home folder's credential
/// folders, and the device's own config and state folders wherever the platform and the
/// environment put them. Built once where a session's context is made; pure after that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    home: PathBuf,
    places: Vec<(PathBuf, &'static str)>,
    /// Below a protected place, yet this session's own (its attachments): readable.
    own: Vec<PathBuf>,
}

impl Protected {
    /// `config` and `state` are the device's folders (`Dirs::config`, `Dirs::state`),
    /// resolved; `home` the home folder, resolved.
    pub fn new(home: &Path, config: &Path, state: &Path) -> Protected {
        let mut places: Vec<(PathBuf, &'static str)> = HOME_PLACES
            .iter()
            .map(|(place, what)| (home.join(place), *what))
            .collect();
        places.push((config.to_path_buf(), CONFIG));
        places.push((state.to_path_buf(), STATE));
        // The usual spots too, where the environment moved the folders elsewhere for this process:
        // another process of the person's (the tray, a shell) keeps its files there.
        places.push((home.join(".config/lembas"), CONFIG));
        places.push((home.join(".local/state/lembas"), STATE));
        places.push((home.join("Library/Application Support/lembas"), CONFIG));
        Protected {
            home: home.to_path_buf(),
            places,
            own: Vec::new(),
        }
    }

    /// The device's folders where they are by default under `home` (tests, the bench).
    pub fn under_home(home: &Path) -> Protected {
        Protected::new(
            home,
            &home.join(".config/lembas"),
            &home.join(".local/state/lembas"),
        )
    }

    /// The same, with `own` (a session's attachments folder) readable below a protected place.
    pub fn with_own(mut self, own: PathBuf) -> Protected {
        self.own.push(own);
        self
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The protected places that are folders outside any project, with what they are: what the
    /// sandbox under commands keeps unreadable.
    pub fn places(&self) -> impl Iterator<Item = (&Path, &'static str)> {
        self.places.iter().map(|(p, what)| (p.as_path(), *what))
    }

    pub fn protects(&self, path: &Path) -> bool {
        self.protection(path).is_some()
    }

    /// Why `path` is protected, as a phrase ("Git's internals", "an environment file"…), or
    /// `None`. Names compare without regard to ASCII case: a case-insensitive file system (macOS,
    /// Windows) opens `.ENV` as `.env`, so `.ENV` is protected everywhere. Called for every entry a
    /// search walks, so it allocates nothing.
    pub fn protection(&self, path: &Path) -> Option<&'static str> {
        if let Some(what) = by_name(path) {
            return Some(what);
        }
        if self.own.iter().any(|own| path.starts_with(own)) {
            return None;
        }
        self.places
            .iter()
            .find(|(place, _)| under(path, place))
            .map(|(_, what)| *what)
    }
}

/// Whether `path` is protected by its names alone, with the home folder's credential folders and
/// the device's folders where they are by default. Prefer a [`Protected`] built for the session.
pub fn protected(path: &Path, home: &Path) -> bool {
    protection(path, home).is_some()
}

/// [`protected`]'s reason.
pub fn protection(path: &Path, home: &Path) -> Option<&'static str> {
    by_name(path).or_else(|| {
        let in_home = path.strip_prefix(home).ok()?;
        HOME_PLACES
            .iter()
            .map(|(place, what)| (*place, *what))
            .chain([(".config/lembas", CONFIG), (".local/state/lembas", STATE)])
            .find(|(place, _)| under(in_home, Path::new(place)))
            .map(|(_, what)| what)
    })
}

/// Whether a file's name says it holds a secret (an environment file, a key or certificate, an SSH
/// key): what the sandbox leaves out of a root for commands, which may read the rest of `.git`.
pub(crate) fn secret_name(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    same(name.as_bytes(), ".env")
        || starts_with(&name, ".env.")
        || ends_with(&name, ".pem")
        || ends_with(&name, ".key")
        || key_file(&name)
}

/// The rules by name that hold anywhere: Git's internals, a project's own rules (`.lembas/`),
/// environment files, keys and certificates.
fn by_name(path: &Path) -> Option<&'static str> {
    for c in path.components() {
        let c = c.as_os_str().as_encoded_bytes();
        if same(c, ".git") {
            return Some("Git's internals");
        }
        if same(c, ".lembas") {
            return Some("the project's own permission rules");
        }
    }
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    if same(name.as_bytes(), ".env") || starts_with(&name, ".env.") {
        return Some("an environment file");
    }
    if ends_with(&name, ".pem") || ends_with(&name, ".key") {
        return Some("a key or certificate file");
    }
    if key_file(&name) {
        return Some("an SSH key");
    }
    None
}

/// `id_` and a key type with anything after it, or `id_` and a name with no extension (or only
/// `.pub`): `id_work`, `id_work.pub`. `id_card.txt` or `id_map.rs` are not keys.
fn key_file(name: &str) -> bool {
    if !starts_with(name, "id_") {
        return false;
    }
    let rest = &name[3..];
    if KEY_TYPES.iter().any(|k| starts_with(rest, k)) {
        return true;
    }
    let stem = if ends_with(rest, ".pub") {
        &rest[..rest.len() - 4]
    } else {
        rest
    };
    !stem.is_empty() && !stem.contains('.')
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
            // Keys under other names, a project's own rules, the device's state.
            "/w/id_rsa_deploy",
            "/w/id_ed25519_github",
            "/w/id_rsa.old",
            "/w/id_rsa.pubx",
            "/w/id_work",
            "/w/id_work.pub",
            "/w/.lembas/config.yaml",
            "/w/.lembas",
            "/home/p/.local/state/lembas/sessions/ses_x.jsonl",
        ] {
            assert!(protected(Path::new(yes), home), "{yes}");
        }
        for no in [
            "/w/.envrc",
            "/w/src/env.rs",
            "/w/keys.txt",
            "/w/id_card.txt",
            "/w/src/id_map.rs",
            "/w/.gitignore",
            "/home/p/.config/other",
            "/home/p/.sshrc",
            "/other/.ssh/config",
            "/w/.envy",
            "/w/.gitx/config",
            "/w/pem",
            "/home/p/.sshx/config",
        ] {
            assert!(!protected(Path::new(no), home), "{no}");
        }
    }

    #[test]
    fn the_device_folders_where_the_environment_puts_them() {
        let home = Path::new("/home/p");
        let places = Protected::new(
            home,
            Path::new("/etc/xdg-elsewhere/lembas"),
            Path::new("/srv/state/lembas"),
        )
        .with_own(PathBuf::from("/srv/state/lembas/attachments/ses_mine"));
        for yes in [
            "/etc/xdg-elsewhere/lembas/config.yaml",
            "/etc/xdg-elsewhere/lembas/device-token",
            "/srv/state/lembas/sessions/ses_other.jsonl",
            "/srv/state/lembas/attachments/ses_other/a.txt",
            "/srv/state/lembas/attachments/ses_mine/.env",
            "/home/p/.config/lembas/config.yaml",
            "/home/p/.ssh/known_hosts",
        ] {
            assert!(places.protects(Path::new(yes)), "{yes}");
        }
        for no in [
            "/srv/state/lembas/attachments/ses_mine/a.txt",
            "/etc/xdg-elsewhere/other",
            "/srv/state/lembas2/x",
            "/home/p/work/notes.md",
        ] {
            assert!(!places.protects(Path::new(no)), "{no}");
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
