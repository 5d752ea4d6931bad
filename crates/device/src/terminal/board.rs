//! What this computer's own window sees of the remote terminals: each open terminal with the last
//! [`RING`] bytes of its output, and a stream of what comes after. The window is a second reader
//! that may skip: output goes out on a bounded broadcast that never waits, so a slow window loses
//! frames (and reads the ring again) while the link to the instance goes on at its own pace.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use tokio::sync::broadcast;

use super::session::Session;
use crate::poison::Recover;

/// The output each terminal keeps for a window that opens it late.
pub const RING: usize = 256 * 1024;
/// Frames (each at most a link frame, 64 KiB) the stream holds for its slowest reader.
const STREAM: usize = 32;

/// Cheap to clone: every clone is the same board. One per runtime, shared by its links.
#[derive(Clone)]
pub struct Board(Arc<Inner>);

struct Inner {
    open: Mutex<HashMap<String, Arc<Screen>>>,
    shown: broadcast::Sender<Shown>,
}

impl Default for Board {
    fn default() -> Self {
        Board(Arc::new(Inner {
            open: Mutex::default(),
            shown: broadcast::channel(STREAM).0,
        }))
    }
}

/// One open terminal as the window lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[cfg_attr(test, ts(rename = "ListedTerminal"))]
pub struct Listed {
    pub id: String,
    /// The folder it started in (the shell's own `cd`s come as OSC 7 in its output).
    pub cwd: String,
    pub shell: String,
    pub opened_ms: u64,
    /// Bytes of output so far: where the next output starts.
    pub offset: u64,
    /// The PTY's size, as the instance last set it: the window draws the same screen.
    pub cols: u16,
    pub rows: u16,
}

/// What the window hears: output from `offset` on, or the terminal's end.
#[derive(Debug, Clone)]
pub enum Shown {
    Output {
        id: Arc<str>,
        offset: u64,
        data: Arc<[u8]>,
    },
    Exit {
        id: Arc<str>,
        code: Option<i32>,
    },
}

pub struct Screen {
    id: Arc<str>,
    cwd: String,
    shell: String,
    opened_ms: u64,
    session: Arc<Session>,
    size: Mutex<(u16, u16)>,
    ring: Mutex<Ring>,
}

/// The newest output, at most [`RING`] bytes, and how many bytes came in all.
#[derive(Default)]
struct Ring {
    bytes: VecDeque<u8>,
    end: u64,
}

impl Ring {
    fn push(&mut self, data: &[u8]) -> u64 {
        let start = self.end;
        let keep = data.len().min(RING);
        let over = (self.bytes.len() + keep).saturating_sub(RING);
        self.bytes.drain(..over);
        self.bytes.extend(&data[data.len() - keep..]);
        self.end += data.len() as u64;
        start
    }
}

impl Screen {
    /// Output the link just sent: kept in the ring and offered to the window, never waiting.
    pub fn record(&self, board: &Board, data: &[u8]) {
        let offset = self.lock().push(data);
        // No window listening is the usual case: then nothing is copied.
        if board.0.shown.receiver_count() > 0 {
            let _ = board.0.shown.send(Shown::Output {
                id: self.id.clone(),
                offset,
                data: data.into(),
            });
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ring> {
        self.ring.lock().recover()
    }
}

impl Board {
    /// A terminal just opened on a link.
    pub(super) fn open(
        &self,
        id: &str,
        cwd: &str,
        shell: &str,
        size: (u16, u16),
        session: Arc<Session>,
    ) -> Arc<Screen> {
        let screen = Arc::new(Screen {
            id: id.into(),
            cwd: cwd.to_string(),
            shell: shell.to_string(),
            opened_ms: crate::status::now_ms(),
            session,
            size: Mutex::new(size),
            ring: Mutex::default(),
        });
        self.lock().insert(id.to_string(), screen.clone());
        screen
    }

    /// The terminal ended (its last output is recorded): it leaves the list, and the window hears.
    pub(super) fn close(&self, screen: &Arc<Screen>, code: Option<i32>) {
        {
            let mut open = self.lock();
            if open.get(&*screen.id).is_some_and(|s| Arc::ptr_eq(s, screen)) {
                open.remove(&*screen.id);
            }
        }
        let _ = self.0.shown.send(Shown::Exit {
            id: screen.id.clone(),
            code,
        });
    }

    /// The instance resized the terminal.
    pub(super) fn resized(&self, id: &str, size: (u16, u16)) {
        if let Some(screen) = self.find(id) {
            *screen.size.lock().recover() = size;
        }
    }

    /// The open terminals, the oldest first.
    pub fn list(&self) -> Vec<Listed> {
        let mut listed: Vec<Listed> = self
            .lock()
            .values()
            .map(|s| {
                let (cols, rows) = *s.size.lock().recover();
                Listed {
                    id: s.id.to_string(),
                    cwd: s.cwd.clone(),
                    shell: s.shell.clone(),
                    opened_ms: s.opened_ms,
                    offset: s.lock().end,
                    cols,
                    rows,
                }
            })
            .collect();
        listed.sort_by(|a, b| (a.opened_ms, &a.id).cmp(&(b.opened_ms, &b.id)));
        listed
    }

    /// The ring's bytes and the offset they end at; `None` for a terminal not open.
    pub fn replay(&self, id: &str) -> Option<(Vec<u8>, u64)> {
        let screen = self.find(id)?;
        let ring = screen.lock();
        let (front, back) = ring.bytes.as_slices();
        Some(([front, back].concat(), ring.end))
    }

    /// Hangs the terminal up as the instance's close does; its exit follows on the link.
    pub fn hang_up(&self, id: &str) -> bool {
        match self.find(id) {
            Some(screen) => {
                screen.session.hang_up();
                true
            }
            None => false,
        }
    }

    /// Keystrokes from the window; `Err` names why they went nowhere.
    pub async fn write(&self, id: &str, bytes: Vec<u8>) -> Result<(), WriteError> {
        let screen = self.find(id).ok_or(WriteError::NotOpen)?;
        screen.session.write(bytes).await.map_err(|()| WriteError::Ended)
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Shown> {
        self.0.shown.subscribe()
    }

    fn find(&self, id: &str) -> Option<Arc<Screen>> {
        self.lock().get(id).cloned()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Screen>>> {
        self.0.open.lock().recover()
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum WriteError {
    NotOpen,
    Ended,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_bytes_and_counts_all() {
        let mut ring = Ring::default();
        assert_eq!(ring.push(b"abc"), 0);
        assert_eq!(ring.push(&vec![b'x'; RING]), 3);
        assert_eq!((ring.bytes.len(), ring.end), (RING, RING as u64 + 3));
        assert_eq!(ring.push(b"end"), RING as u64 + 3);
        assert_eq!(ring.bytes.len(), RING);
        let kept: Vec<u8> = ring.bytes.iter().copied().collect();
        assert!(kept.ends_with(b"xend"));
        // One push larger than the ring keeps its own tail.
        let mut big = vec![b'a'; RING];
        big.extend_from_slice(b"tail");
        ring.push(&big);
        let kept: Vec<u8> = ring.bytes.iter().copied().collect();
        assert_eq!((kept.len(), kept.ends_with(b"atail")), (RING, true));
    }
}
