//! macOS: the same limits as a Seatbelt profile for `sandbox-exec -p <profile> -D NAME=path…`.
//! Seatbelt can deny, so no listing is needed; its rules are last-match-wins, so the order below
//! is the meaning: everything allowed, then writes taken away, writable places given back, hidden
//! places taken away from reads and writes, and a session's own places inside them given back.
//! Paths travel as parameters (`(param "W0")`), never inside the profile's text, so no path can
//! be read as profile syntax. Generated on every platform, so it is tested here; it runs only on
//! macOS, where it has been written and reviewed, not run.

use std::ffi::OsString;
use std::path::PathBuf;

/// A profile and the `-D NAME=value` parameters it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub text: String,
    pub params: Vec<(String, PathBuf)>,
}

impl Profile {
    /// The profile for these places (all resolved: Seatbelt matches real paths, `/private/tmp`
    /// and not `/tmp`).
    pub fn new(writable: &[PathBuf], hidden: &[PathBuf], own: &[PathBuf], own_writable: bool) -> Self {
        let mut params = Vec::new();
        let mut names = |prefix: &str, places: &[PathBuf]| -> String {
            places
                .iter()
                .enumerate()
                .map(|(n, place)| {
                    let name = format!("{prefix}{n}");
                    params.push((name.clone(), place.clone()));
                    format!(" (subpath (param \"{name}\"))")
                })
                .collect()
        };
        let writable = names("W", writable);
        let hidden = names("H", hidden);
        let own = names("O", own);
        let mut text = String::from(
            "(version 1)\n\
             ; Everything but the file system is as without the sandbox (network, processes).\n\
             (allow default)\n\
             (deny file-write*)\n\
             ; The terminal's own devices (/dev/ttys000…), besides the writable places.\n\
             (allow file-write* (regex #\"^/dev/ttys[0-9]+$\")",
        );
        text.push_str(&writable);
        text.push_str(")\n");
        if !hidden.is_empty() {
            text.push_str("(deny file-read* file-write*");
            text.push_str(&hidden);
            text.push_str(")\n");
        }
        if !own.is_empty() {
            let ops = if own_writable {
                "file-read* file-write*"
            } else {
                "file-read*"
            };
            text.push_str(&format!("(allow {ops}{own})\n"));
        }
        Self { text, params }
    }

    /// `sandbox-exec`'s arguments before the command's own program.
    pub fn args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from("-p"), OsString::from(&self.text)];
        for (name, path) in &self.params {
            let mut define = OsString::from(format!("{name}="));
            define.push(path.as_os_str());
            args.push(OsString::from("-D"));
            args.push(define);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn the_profile_takes_writes_away_then_gives_places_back_in_order() {
        let profile = Profile::new(
            &paths(&["/Users/p/code", "/private/tmp", "/dev/null"]),
            &paths(&["/Users/p/.ssh", "/Users/p/Library/Application Support/lembas"]),
            &paths(&["/Users/p/.local/state/lembas/attachments/s1"]),
            true,
        );
        assert_eq!(
            profile.text,
            "(version 1)\n\
             ; Everything but the file system is as without the sandbox (network, processes).\n\
             (allow default)\n\
             (deny file-write*)\n\
             ; The terminal's own devices (/dev/ttys000…), besides the writable places.\n\
             (allow file-write* (regex #\"^/dev/ttys[0-9]+$\") (subpath (param \"W0\")) (subpath (param \"W1\")) (subpath (param \"W2\")))\n\
             (deny file-read* file-write* (subpath (param \"H0\")) (subpath (param \"H1\")))\n\
             (allow file-read* file-write* (subpath (param \"O0\")))\n"
        );
        let args: Vec<String> = profile
            .args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[0], "-p");
        assert_eq!(
            args[2..],
            [
                "-D",
                "W0=/Users/p/code",
                "-D",
                "W1=/private/tmp",
                "-D",
                "W2=/dev/null",
                "-D",
                "H0=/Users/p/.ssh",
                "-D",
                "H1=/Users/p/Library/Application Support/lembas",
                "-D",
                "O0=/Users/p/.local/state/lembas/attachments/s1",
            ]
        );
    }

    #[test]
    fn paths_never_enter_the_text_and_read_only_own_places_stay_read_only() {
        let odd = "/Users/p/a\")(allow file-write* (subpath \"/";
        let profile = Profile::new(&paths(&[odd]), &paths(&[]), &paths(&["/o"]), false);
        assert!(!profile.text.contains("/Users"), "{}", profile.text);
        assert!(
            !profile.text.contains("(deny file-read*"),
            "no hidden places, no rule"
        );
        assert!(
            profile
                .text
                .ends_with("(allow file-read* (subpath (param \"O0\")))\n")
        );
    }
}
