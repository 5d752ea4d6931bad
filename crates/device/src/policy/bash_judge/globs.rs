//! Glob words (`~/.ss?/id_*`, `*.pem`, `/home/*/.ssh`): bash replaces them with the names they match,
//! which the judge cannot list (it reads no file system). Instead it writes out the names such a
//! glob could match that matter: the protected names, the folders that lead to them, the home
//! folder's own components; a glob is then judged as reading each of those paths.

use std::path::{Component, Path, PathBuf};

use crate::policy::protected::protected;

/// More paths than this from one glob: the judge does not list them, the word is unknown.
const MAX_INSTANCES: usize = 4096;

/// Names a glob component is tried against: those `crate::policy::protected` protects and the
/// folders on the way to them, the `/proc` entries that reach another process's files, and a
/// few ordinary names.
const SAMPLES: [&str; 44] = [
    ".git",
    ".env",
    ".env.local",
    ".ssh",
    ".gnupg",
    ".aws",
    ".config",
    "lembas",
    ".local",
    "share",
    "state",
    "keyrings",
    "Library",
    "Keychains",
    "Application Support",
    "credentials",
    "config",
    "config.yaml",
    "sessions",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "id_rsa.pub",
    "id_dsa.pub",
    "id_ecdsa.pub",
    "id_ed25519.pub",
    "id_ecdsa_sk.pub",
    "id_ed25519_sk.pub",
    "key.pem",
    "tls.key",
    "self",
    "1",
    "root",
    "cwd",
    "fd",
    "environ",
    "mem",
    "map_files",
    "task",
    "README.md",
    "x",
];

/// Suffixes and prefixes a protected name may have around anything: a glob with a fixed start
/// (`server*.pem`) or end (`*local`) is tried with them.
const SUFFIXES: [&str; 2] = [".pem", ".key"];
const PREFIXES: [&str; 1] = [".env."];

pub fn is_glob(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// The paths `path` (absolute, already folded) could stand for, or `None` when too many.
/// `dotglob`: the line turns on matching names that start with a dot (`shopt -s dotglob`,
/// `GLOBIGNORE`).
pub fn instances(path: &Path, home: &Path, dotglob: bool) -> Option<Vec<PathBuf>> {
    let home_names: Vec<String> = names(home);
    let mut out = vec![PathBuf::from("/")];
    for (depth, name) in names(path).iter().enumerate() {
        let options: Vec<String> = if is_glob(name) {
            let mut options: Vec<String> = Some(minimal(name))
                .filter(|m| !m.is_empty())
                .into_iter()
                .collect();
            let candidates = SAMPLES
                .iter()
                .map(|s| s.to_string())
                .chain(home_names.get(depth).cloned())
                .chain(SUFFIXES.iter().map(|s| format!("{}{s}", head(name))))
                .chain(PREFIXES.iter().map(|p| format!("{p}{}", tail(name))));
            // A bare `*` (or `?`) is taken for the ordinary files it matches: `cat *`, `grep x *`
            // in a project are everyday reads, and a key file there under a key's name is the
            // person's own. A glob with a shape of its own (`*.pem`, `id_*`, `.e*`) is not.
            let bare = name.chars().all(|c| c == '*' || c == '?');
            let keyish = |c: &str| !c.starts_with('.') && protected(Path::new(c), Path::new("/"));
            for candidate in candidates {
                if bare && keyish(&candidate) {
                    continue;
                }
                if matches(name, &candidate, dotglob) && !options.contains(&candidate) {
                    options.push(candidate);
                }
            }
            options
        } else {
            vec![name.clone()]
        };
        if out.len().saturating_mul(options.len()) > MAX_INSTANCES {
            return None;
        }
        out = out
            .iter()
            .flat_map(|p| options.iter().map(move |o| p.join(o)))
            .collect();
    }
    Some(out)
}

fn names(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// The literal text before the first wildcard, and after the last.
fn head(glob: &str) -> &str {
    glob.split(['*', '?', '[']).next().unwrap_or("")
}
fn tail(glob: &str) -> &str {
    glob.rsplit(['*', '?', ']']).next().unwrap_or("")
}

/// One name the glob matches: `*` as nothing, `?` as `x`, a bracket as its first character.
fn minimal(glob: &str) -> String {
    let tokens = tokens(glob);
    tokens
        .iter()
        .filter_map(|t| match t {
            Token::Char(c) => Some(*c),
            Token::Any => Some('x'),
            Token::Class {
                chars,
                negated: false,
            } => chars.first().map(|(a, _)| *a),
            Token::Class { .. } => Some('x'),
            Token::Star => None,
        })
        .collect()
}

#[derive(Debug)]
enum Token {
    Char(char),
    Any,
    Star,
    /// `[a-z.]` as ranges; `[!…]`/`[^…]` negated.
    Class {
        chars: Vec<(char, char)>,
        negated: bool,
    },
}

fn tokens(glob: &str) -> Vec<Token> {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => out.push(Token::Star),
            '?' => out.push(Token::Any),
            '[' => {
                if let Some((token, next)) = class(&chars, i) {
                    out.push(token);
                    i = next;
                    continue;
                }
                out.push(Token::Char('['));
            }
            c => out.push(Token::Char(c)),
        }
        i += 1;
    }
    out
}

/// The bracket expression starting at `chars[at]`, and the index after it; `None` when unclosed
/// (then `[` is itself).
fn class(chars: &[char], at: usize) -> Option<(Token, usize)> {
    let mut i = at + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let start = i;
    while let Some(&c) = chars.get(i) {
        if c == ']' && i > start {
            return Some((
                Token::Class {
                    chars: ranges,
                    negated,
                },
                i + 1,
            ));
        }
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') {
            ranges.push((c, chars[i + 2]));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    None
}

/// Whether `glob` matches `name` as bash matches one path component (ASCII case ignored, as
/// the protected names are). A leading `*` or `?` does not match a leading dot unless `dotglob`.
pub fn matches(glob: &str, name: &str, dotglob: bool) -> bool {
    let tokens = tokens(glob);
    if name.starts_with('.') && !dotglob && matches!(tokens.first(), Some(Token::Star | Token::Any)) {
        return false;
    }
    let name: Vec<char> = name.chars().map(|c| c.to_ascii_lowercase()).collect();
    // `reach[j]`: the tokens so far can match the first `j` characters.
    let mut reach = vec![false; name.len() + 1];
    reach[0] = true;
    for token in &tokens {
        let mut next = vec![false; name.len() + 1];
        for j in 0..=name.len() {
            if !reach[j] {
                continue;
            }
            match token {
                Token::Star => {
                    for slot in next.iter_mut().skip(j) {
                        *slot = true;
                    }
                }
                _ if j < name.len() && one(token, name[j]) => next[j + 1] = true,
                _ => {}
            }
        }
        reach = next;
    }
    reach[name.len()]
}

fn one(token: &Token, c: char) -> bool {
    match token {
        Token::Char(t) => t.to_ascii_lowercase() == c,
        Token::Any | Token::Star => true,
        Token::Class { chars, negated } => {
            let inside = chars
                .iter()
                .any(|(a, b)| (a.to_ascii_lowercase()..=b.to_ascii_lowercase()).contains(&c));
            inside != *negated
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_bash_does() {
        assert!(matches("*.pem", "key.pem", false));
        assert!(matches("id_*", "id_rsa", false));
        assert!(matches(".ss?", ".ssh", false));
        assert!(matches("[.]ssh", ".ssh", false));
        assert!(matches(".[s]sh", ".ssh", false));
        assert!(!matches("*", ".env", false));
        assert!(matches("*", ".env", true));
        assert!(!matches("*.rs", "x.pem", false));
        assert!(matches("s*.k?y", "s.key", false));
        assert!(matches("[!a]x", "bx", false));
        assert!(!matches("[!a]x", "ax", false));
    }

    #[test]
    fn a_glob_stands_for_the_protected_names_it_could_match() {
        let home = Path::new("/home/p");
        let all = |p: &str| instances(Path::new(p), home, false).unwrap_or_default();
        assert!(all("/home/*/.ssh").contains(&PathBuf::from("/home/p/.ssh")));
        assert!(all("/w/s*.k?y").contains(&PathBuf::from("/w/s.key")));
        assert!(all("/w/.*local").contains(&PathBuf::from("/w/.env.local")));
        assert!(!all("/w/*.rs").iter().any(|p| p.ends_with(".env")));
        assert!(instances(Path::new("/*/*/*/*"), home, true).is_none());
    }
}
