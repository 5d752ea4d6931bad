//! A test's `config.yaml`, said by what it holds rather than typed out as YAML: the instance, the
//! link's fast timings, remote work in a folder, the toggles, and any other YAML after them.

use lembas_device::policy::Mode;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct Config {
    server: Option<String>,
    fast_link: bool,
    remote: bool,
    roots: Vec<PathBuf>,
    trusted: Vec<PathBuf>,
    scheduled: bool,
    terminal: bool,
    max_mode: Option<Mode>,
    extra: String,
}

impl Config {
    /// Logged in to `server` (connection `example`), with link timings fast enough that tests see
    /// redials quickly.
    pub fn linked_to(server: &str) -> Config {
        Config {
            server: Some(server.to_string()),
            fast_link: true,
            ..Config::default()
        }
    }

    /// Not logged in to any instance.
    pub fn not_logged_in() -> Config {
        Config::default()
    }

    /// Remote work on, in `folder`, trusted.
    pub fn work_in(mut self, folder: &Path) -> Config {
        self.remote = true;
        self.roots.push(folder.to_path_buf());
        self.trusted.push(folder.to_path_buf());
        self
    }

    /// Remote work on, with no root yet.
    pub fn remote_on(mut self) -> Config {
        self.remote = true;
        self
    }

    /// Accept scheduled work.
    pub fn scheduled(mut self) -> Config {
        self.scheduled = true;
        self
    }

    /// Remote terminals on.
    pub fn terminals(mut self) -> Config {
        self.terminal = true;
        self
    }

    pub fn max_mode(mut self, mode: Mode) -> Config {
        self.max_mode = Some(mode);
        self
    }

    /// More YAML at the top level, after the rest (a key the builder does not have).
    pub fn yaml(mut self, extra: &str) -> Config {
        self.extra.push_str(extra);
        self
    }

    /// The file's text.
    pub fn text(&self) -> String {
        let mut text = String::new();
        if let Some(server) = &self.server {
            text.push_str(&format!("server:\n  url: {server}\n  connection: example\n"));
        }
        if self.fast_link {
            text.push_str("link:\n  backoff_first_ms: 100\n  backoff_max_ms: 400\n");
        }
        if self.remote {
            text.push_str("remote:\n  enabled: true\n");
            if self.scheduled {
                text.push_str("  scheduled: true\n");
            }
            if self.terminal {
                text.push_str("  terminal: true\n");
            }
            if let Some(mode) = self.max_mode {
                text.push_str(&format!("  max_mode: {}\n", mode.as_str()));
            }
            if !self.roots.is_empty() {
                text.push_str("  roots:\n");
                for root in &self.roots {
                    text.push_str(&format!("    - {}\n", root.display()));
                }
            }
        }
        if !self.trusted.is_empty() {
            text.push_str("trusted:\n");
            for folder in &self.trusted {
                text.push_str(&format!("  - {}\n", folder.display()));
            }
        }
        text.push_str(&self.extra);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_reads_back_as_what_was_said() {
        let config = Config::linked_to("http://127.0.0.1:9")
            .work_in(Path::new("/w"))
            .scheduled()
            .max_mode(Mode::Plan)
            .yaml("permissions:\n  bash:\n    allow: [ls]\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, config.text()).unwrap();
        let read = lembas_device::settings::load_from(&path, Path::new("/home/x")).unwrap();
        assert_eq!(read.server.unwrap().url, "http://127.0.0.1:9");
        assert_eq!(read.link.backoff_first_ms, Some(100));
        assert!(read.remote.enabled && read.remote.scheduled && !read.remote.terminal);
        assert_eq!(read.remote.max_mode, Mode::Plan);
        assert_eq!(read.remote.roots, [PathBuf::from("/w")]);
        assert_eq!(read.trusted, [PathBuf::from("/w")]);
        assert_eq!(read.permissions.bash.allow, ["ls"]);
        assert!(Config::not_logged_in().text().is_empty());
    }
}
