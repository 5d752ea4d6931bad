//! The config reader on any text (never a panic); and, for a text it accepts, one change made the
//! way `lembas`/the desktop make it: the result reads back, holding the change.

#![no_main]

use std::path::{Path, PathBuf};

use lembas_device::policy::Mode;
use lembas_device::settings::edit::{self, Change};
use lembas_device::settings::{self, Settings};
use libfuzzer_sys::fuzz_target;

/// A folder that exists, for the changes that name one.
fn folder() -> PathBuf {
    std::env::temp_dir()
}

fn change(pick: u8) -> Change {
    match pick % 13 {
        0 => Change::RemoteEnabled(true),
        1 => Change::RemoteEnabled(false),
        2 => Change::MaxMode(Mode::Auto),
        3 => Change::RequireTrust(false),
        4 => Change::Terminal(true),
        5 => Change::Scheduled(true),
        6 => Change::SetServer {
            url: "https://llembas.example".into(),
            connection: Some("c1".into()),
        },
        7 => Change::ClearServer,
        8 => Change::SetEmbeddingIfUnset("c1/embed".into()),
        9 => Change::Trust(folder()),
        10 => Change::Untrust(folder()),
        11 => Change::AddRoot(folder()),
        _ => Change::RemoveRoot(folder()),
    }
}

/// What the settings must say once `change` was made.
fn holds(change: &Change, s: &Settings) -> bool {
    match change {
        Change::RemoteEnabled(b) => s.remote.enabled == *b,
        Change::MaxMode(m) => s.remote.max_mode == *m,
        Change::RequireTrust(b) => s.remote.require_trust == *b,
        Change::Terminal(b) => s.remote.terminal == *b,
        Change::Scheduled(b) => s.remote.scheduled == *b,
        Change::SetServer { url, connection } => s
            .server
            .as_ref()
            .is_some_and(|server| &server.url == url && &server.connection == connection),
        Change::ClearServer => s.server.is_none(),
        Change::SetEmbeddingIfUnset(_) => s.embedding.as_ref().is_some_and(|e| !e.is_empty()),
        Change::Trust(_) => !s.trusted.is_empty(),
        Change::AddRoot(_) => !s.remote.roots.is_empty(),
        _ => true,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let path = Path::new("/fuzz/config.yaml");
    if settings::parse(path, text).is_err() {
        return;
    }
    let change = change(pick);
    if let Ok(new) = edit::edit_in_memory(path, Path::new("/fuzz"), text, std::slice::from_ref(&change)) {
        let read = settings::parse(path, &new)
            .unwrap_or_else(|e| panic!("{change:?} on {text:?} wrote a file that does not read: {e}"));
        assert!(holds(&change, &read), "{change:?} on {text:?} gave {new:?}");
    }
});
