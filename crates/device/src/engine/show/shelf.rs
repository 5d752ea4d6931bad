//! The files sessions showed, kept for the desktop's viewer (control `shown/list`, `shown/read`).
//! In memory only: the viewer is for what happens while the runtime runs, and a shown file is the
//! session's own file on this disk anyway. Bounded twice: the newest `kept_per_session` of each
//! session, and `kept_total_bytes` of text in all (the oldest dropped first).

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::kind::ShownKind;
use crate::poison::Recover;

/// One file shown, as listed (without its text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ShownFile {
    pub id: String,
    pub session_id: String,
    /// As the client was sent it: relative to the session's folder when inside it.
    pub path: String,
    pub kind: ShownKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub line: Option<u64>,
    /// The text's length in bytes.
    pub size: u64,
    pub shown_ms: u64,
}

struct Kept {
    file: ShownFile,
    text: Arc<str>,
}

/// Cheap to share: the engine holds one.
#[derive(Default)]
pub struct Shelf {
    kept: Mutex<VecDeque<Kept>>,
    next: AtomicU64,
}

/// How much a shelf keeps.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub per_session: usize,
    pub total_bytes: u64,
}

impl Shelf {
    fn kept(&self) -> MutexGuard<'_, VecDeque<Kept>> {
        self.kept.lock().recover()
    }

    /// Keeps `file` (its id given here) with its text; the oldest go past the bounds.
    pub fn keep(&self, mut file: ShownFile, text: String, bounds: Bounds) -> ShownFile {
        file.id = format!("shown-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let mut kept = self.kept();
        kept.push_back(Kept {
            file: file.clone(),
            text: text.into(),
        });
        let of_session = kept
            .iter()
            .filter(|k| k.file.session_id == file.session_id)
            .count();
        let mut over = of_session.saturating_sub(bounds.per_session);
        kept.retain(|k| {
            let drop = over > 0 && k.file.session_id == file.session_id;
            over -= usize::from(drop);
            !drop
        });
        let mut total: u64 = kept.iter().map(|k| k.file.size).sum();
        // The newest stays even alone past the bound: it is at most the show tool's limit.
        while total > bounds.total_bytes && kept.len() > 1 {
            if let Some(oldest) = kept.pop_front() {
                total -= oldest.file.size;
            }
        }
        file
    }

    /// The files kept, newest first; only `session_id`'s when given.
    pub fn list(&self, session_id: Option<&str>) -> Vec<ShownFile> {
        self.kept()
            .iter()
            .rev()
            .filter(|k| session_id.is_none_or(|id| k.file.session_id == id))
            .map(|k| k.file.clone())
            .collect()
    }

    /// One file with its text; `None` when it is not (or no longer) kept.
    pub fn read(&self, id: &str) -> Option<(ShownFile, Arc<str>)> {
        self.kept()
            .iter()
            .find(|k| k.file.id == id)
            .map(|k| (k.file.clone(), k.text.clone()))
    }

    /// A deleted session's files go with it.
    pub fn forget_session(&self, session_id: &str) {
        self.kept().retain(|k| k.file.session_id != session_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(session: &str, path: &str, size: u64) -> ShownFile {
        ShownFile {
            id: String::new(),
            session_id: session.into(),
            path: path.into(),
            kind: ShownKind::Text,
            language: None,
            line: None,
            size,
            shown_ms: 0,
        }
    }

    #[test]
    fn newest_first_by_session_and_bounded() {
        let shelf = Shelf::default();
        let bounds = Bounds {
            per_session: 2,
            total_bytes: 100,
        };
        let a1 = shelf.keep(file("a", "1", 1), "1".into(), bounds);
        shelf.keep(file("b", "x", 1), "x".into(), bounds);
        shelf.keep(file("a", "2", 1), "2".into(), bounds);
        shelf.keep(file("a", "3", 1), "3".into(), bounds);
        let paths: Vec<String> = shelf.list(Some("a")).into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["3", "2"]);
        assert!(
            shelf.read(&a1.id).is_none(),
            "the oldest of a went past the bound"
        );
        assert_eq!(shelf.list(None).len(), 3);
        shelf.forget_session("a");
        assert_eq!(shelf.list(None).len(), 1);
    }

    #[test]
    fn the_oldest_go_past_the_total() {
        let shelf = Shelf::default();
        let bounds = Bounds {
            per_session: 10,
            total_bytes: 10,
        };
        let first = shelf.keep(file("a", "1", 6), "x".repeat(6), bounds);
        let second = shelf.keep(file("b", "2", 6), "y".repeat(6), bounds);
        assert!(shelf.read(&first.id).is_none());
        let (kept, text) = shelf.read(&second.id).expect("the newest is kept");
        assert_eq!((kept.path.as_str(), &*text), ("2", "yyyyyy"));
        // One alone past the total is still kept: it is the newest.
        let big = shelf.keep(file("c", "3", 20), "z".repeat(20), bounds);
        assert_eq!(shelf.list(None), vec![big]);
    }
}
