//! The task that writes the log: it reads the runtime's events and appends their lines. Writes run
//! on the blocking pool, one at a time; the runtime only ever sends on a broadcast channel, so a
//! slow or failing disk never holds it up. Events it falls behind on are counted, and a line says
//! how many.

use std::io;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::file::LogFile;
use super::line::{self, Lines};
use crate::events::DeviceEvent;
use crate::status::now_ms;

/// How long the runtime waits at its end for the lines still queued, so a stuck disk cannot keep
/// a quitting device alive.
const FINISH_WITHIN: Duration = Duration::from_secs(2);

/// The running writer; [`Writer::finish`] ends it.
pub struct Writer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// Starts writing every event `events` receives from now on to `file`.
pub fn spawn(events: broadcast::Receiver<DeviceEvent>, file: LogFile) -> Writer {
    let (stop, stopped) = oneshot::channel();
    let task = tokio::spawn(write_events(events, file, stopped));
    Writer { stop, task }
}

impl Writer {
    /// Writes what was sent before this call (the link's last state, say), then ends.
    pub async fn finish(self) {
        let _ = self.stop.send(());
        let mut task = self.task;
        if tokio::time::timeout(FINISH_WITHIN, &mut task).await.is_err() {
            tracing::warn!("the activity log did not finish writing in time");
            task.abort();
        }
    }
}

struct State {
    file: LogFile,
    lines: Lines,
    /// Events not written yet: the count goes into the next line that can be written.
    missed: u64,
    /// Whether the last write failed: warn once, not at every line.
    failing: bool,
}

async fn write_events(
    mut events: broadcast::Receiver<DeviceEvent>,
    file: LogFile,
    mut stop: oneshot::Receiver<()>,
) {
    let mut state = State {
        file,
        lines: Lines::default(),
        missed: 0,
        failing: false,
    };
    loop {
        // Events first: those sent before the stop are written before it is heard.
        let received = tokio::select! {
            biased;
            received = events.recv() => received,
            _ = &mut stop => break,
        };
        match received {
            Ok(event) => {
                let at_ms = now_ms();
                if let Some(line) = state.lines.line(&event, at_ms) {
                    state.write(line, at_ms).await;
                }
            }
            Err(RecvError::Lagged(n)) => state.missed += n,
            Err(RecvError::Closed) => break,
        }
    }
    if state.missed > 0 {
        let at_ms = now_ms();
        state.write_missed(at_ms).await;
    }
}

impl State {
    /// Writes `line`, after the count of missed events if there is one.
    async fn write(&mut self, line: String, at_ms: u64) {
        let mut lines = Vec::with_capacity(2);
        if self.missed > 0 {
            lines.push(line::missed(self.missed, at_ms));
        }
        let with_missed = !lines.is_empty();
        lines.push(line);
        match self.append(lines).await {
            Ok(()) => {
                self.missed = 0;
                self.recovered();
            }
            Err((written, e)) => {
                if with_missed && written > 0 {
                    self.missed = 0;
                }
                self.missed += 1;
                self.failed(e);
            }
        }
    }

    /// The last word at the end: how many events were never written.
    async fn write_missed(&mut self, at_ms: u64) {
        let line = line::missed(self.missed, at_ms);
        if let Err((_, e)) = self.append(vec![line]).await {
            self.failed(e);
        }
    }

    /// Appends `lines` in order on the blocking pool; on an error, how many were written first.
    async fn append(&self, lines: Vec<String>) -> Result<(), (usize, io::Error)> {
        let file = self.file.clone();
        let written = tokio::task::spawn_blocking(move || {
            for (n, line) in lines.iter().enumerate() {
                file.append(line).map_err(|e| (n, e))?;
            }
            Ok(())
        })
        .await;
        written.unwrap_or_else(|e| Err((0, io::Error::other(e))))
    }

    fn failed(&mut self, e: io::Error) {
        if !self.failing {
            tracing::warn!(
                "cannot write the activity log {}: {e}; its lines are counted until it can",
                self.file.path().display()
            );
            self.failing = true;
        }
    }

    fn recovered(&mut self) {
        if self.failing {
            tracing::info!("the activity log is written again");
            self.failing = false;
        }
    }
}
