//! The window is a process of its own (`lembas-window`, a Tauri webview), started when it opens
//! and gone when it closes, so WebKit's memory leaves with it and the tray process links no
//! webview. One at a time: asked again, the open one comes forward (and moves to the view asked).
//!
//! The tray keeps the child's standard input and writes it one JSON object a line:
//! `{"show": null | View}` (come forward, and go to the view). The window asks the device runtime
//! for what it shows over the control socket; its first view comes as `--view <json>`. It exits
//! when its window closes or its standard input ends (the tray quit); the tray reaps it.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};

use lembas_device::poison::Recover;
use lembas_device::status::now_ms;
use lembas_protocol::view::{View, WindowLine};
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, Command};
use tokio::sync::mpsc;

/// Where the window's binary is, for tests and odd layouts; else beside this executable.
pub const BIN_ENV: &str = "LEMBAS_WINDOW_BIN";
const BIN_NAME: &str = "lembas-window";

/// The window process, if one runs. Cheap to clone.
#[derive(Clone)]
pub struct WindowProcess {
    /// The window's executable.
    bin: Arc<PathBuf>,
    slot: Arc<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    running: Option<Running>,
    started: u64,
}

struct Running {
    lines: mpsc::UnboundedSender<String>,
    /// Which start this is, so a reaped child clears only its own slot.
    nth: u64,
}

fn line(what: &WindowLine) -> String {
    let mut text = serde_json::to_string(what).unwrap_or_default();
    text.push('\n');
    text
}

/// `lembas-window` beside this executable (found on the `PATH` when this one's folder cannot be
/// told).
pub fn beside_this() -> PathBuf {
    let name = format!("{BIN_NAME}{}", std::env::consts::EXE_SUFFIX);
    match std::env::current_exe() {
        Ok(exe) => match exe.parent() {
            Some(dir) => dir.join(name),
            None => PathBuf::from(name),
        },
        Err(_) => PathBuf::from(name),
    }
}

impl WindowProcess {
    /// No window yet; `bin` is the window's executable.
    pub fn new(bin: PathBuf) -> WindowProcess {
        WindowProcess {
            bin: Arc::new(bin),
            slot: Arc::default(),
        }
    }

    /// Has the kernel read the window's files into the page cache (`lembas-window --warm-up`), so
    /// the first open after a boot does not wait on the disk for WebKit. The page cache is the
    /// system's: the tray's own memory does not grow. Silent when it cannot run (the window says
    /// why on open).
    #[cfg(target_os = "linux")]
    pub async fn warm_up(&self) {
        let started = std::time::Instant::now();
        let ran = Command::new(self.bin.as_path())
            .arg("--warm-up")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await;
        match ran {
            Ok(status) => {
                tracing::debug!(ms = started.elapsed().as_millis() as u64, %status, "window files read ahead")
            }
            Err(e) => tracing::debug!("cannot read the window's files ahead: {e}"),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().recover()
    }

    pub fn is_open(&self) -> bool {
        self.slot().running.is_some()
    }

    /// Opens the window on `view` (`None`: where it is, or the settings): the open one comes
    /// forward, else a window process starts. Call within the tokio runtime.
    pub fn open(&self, view: Option<View>) -> std::io::Result<()> {
        let mut slot = self.slot();
        if let Some(running) = &slot.running
            && running.lines.send(line(&WindowLine::Show(view.clone()))).is_ok()
        {
            tracing::info!("the window comes forward");
            return Ok(());
        }
        let bin = self.bin.as_path();
        let mut command = Command::new(bin);
        if let Some(view) = &view {
            command
                .arg("--view")
                .arg(serde_json::to_string(view).unwrap_or_default());
        }
        command.stdin(Stdio::piped()).kill_on_drop(true);
        let at_ms = now_ms();
        let mut child = command
            .spawn()
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot start {}: {e}", bin.display())))?;
        tracing::info!(pid = child.id(), at_ms, "window started");
        let stdin = child.stdin.take();
        let (lines, queued) = mpsc::unbounded_channel();
        slot.started += 1;
        let nth = slot.started;
        slot.running = Some(Running { lines, nth });
        let shared = self.slot.clone();
        tokio::spawn(async move {
            let writer = tokio::spawn(write_lines(stdin, queued));
            let ended = child.wait().await;
            writer.abort();
            match ended {
                Ok(status) => tracing::info!(at_ms = now_ms(), "window ended ({status})"),
                Err(e) => tracing::warn!("cannot wait for the window process: {e}"),
            }
            let mut slot = shared.lock().recover();
            if slot.running.as_ref().is_some_and(|r| r.nth == nth) {
                slot.running = None;
            }
        });
        Ok(())
    }
}

async fn write_lines(stdin: Option<ChildStdin>, mut queued: mpsc::UnboundedReceiver<String>) {
    let Some(mut stdin) = stdin else { return };
    while let Some(text) = queued.recv().await {
        if stdin.write_all(text.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One object a line (the protocol's test says what the object is).
    #[test]
    fn a_line_is_one_object_and_a_newline() {
        assert_eq!(line(&WindowLine::Show(None)), "{\"show\":null}\n");
    }
}
