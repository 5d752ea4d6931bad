//! Windows: ConPTY through portable-pty. The reader and writer are the pseudo console's pipes,
//! each served by a thread; a waiter thread reports the shell's exit code. Hang-up ends the shell
//! (ConPTY tells the console's other programs when the pseudo console is closed, with the session).
//!
//! Under Wine 8 no output reaches the reader (docs/testing.md): this is checked on Windows only.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};

use portable_pty::{ChildKiller, CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::sync::{mpsc, oneshot};

use super::{INPUT_QUEUE, PtyError, READ_CHUNK, READ_QUEUE, Started};
use crate::poison::Recover;
use crate::terminal::integration::RcFolder;

/// A running terminal, shared by the handlers and its output task.
pub struct Session {
    master: Mutex<Box<dyn MasterPty + Send>>,
    input: mpsc::Sender<Vec<u8>>,
    killer: Mutex<Box<dyn ChildKiller + Send + Sync>>,
    /// The rc wrappers: removed when the session is gone.
    _rc_folder: Option<RcFolder>,
}

/// Starts `command` in a new pseudo console of `size`.
pub fn start(
    command: CommandBuilder,
    rc_folder: Option<RcFolder>,
    size: PtySize,
) -> Result<Started, PtyError> {
    let pair = native_pty_system()
        .openpty(size)
        .map_err(|e| PtyError::Open(e.to_string()))?;
    let reader = pair
        .master
        .try_clone_reader()
        .map_err(|e| PtyError::Open(e.to_string()))?;
    let writer = pair
        .master
        .take_writer()
        .map_err(|e| PtyError::Open(e.to_string()))?;
    let mut child = pair
        .slave
        .spawn_command(command)
        .map_err(|e| PtyError::Spawn(e.to_string()))?;
    drop(pair.slave);
    let killer = child.clone_killer();
    let id = child.process_id().unwrap_or_default();

    let (exit_tx, exited) = oneshot::channel();
    let (output_tx, output) = mpsc::channel(READ_QUEUE);
    let (input, input_rx) = mpsc::channel(INPUT_QUEUE);
    let session = Arc::new(Session {
        master: Mutex::new(pair.master),
        input,
        killer: Mutex::new(killer),
        _rc_folder: rc_folder,
    });
    let threads = std::thread::Builder::new()
        .name(format!("terminal-wait-{id}"))
        .spawn(move || {
            // An exit code above i32's range (an NTSTATUS) is said as the negative number it is.
            let code = child.wait().ok().map(|status| status.exit_code() as i32);
            let _ = exit_tx.send(code);
        })
        .and_then(|_| {
            std::thread::Builder::new()
                .name(format!("terminal-read-{id}"))
                .spawn(move || read_pty(reader, output_tx))
        })
        .and_then(|_| {
            std::thread::Builder::new()
                .name(format!("terminal-write-{id}"))
                .spawn(move || write_pty(writer, input_rx))
        });
    if let Err(e) = threads {
        session.hang_up();
        return Err(PtyError::Spawn(format!("its terminal could not be served ({e})")));
    }
    Ok(Started {
        session,
        output,
        exited,
    })
}

impl Session {
    /// Keystrokes, in order. Errors once the shell is gone.
    pub async fn write(&self, bytes: Vec<u8>) -> Result<(), ()> {
        self.input.send(bytes).await.map_err(|_| ())
    }

    pub fn resize(&self, size: PtySize) -> Result<(), PtyError> {
        let master = self.master.lock().recover();
        master.resize(size).map_err(|e| PtyError::Resize(e.to_string()))
    }

    /// Ends the shell, as closing its window does.
    pub fn hang_up(&self) {
        let _ = self.killer.lock().recover().kill();
    }

    /// Nothing to do: the reader ends when the pseudo console is closed, with the session.
    pub(super) fn stop_reading(&self) {}
}

/// The reader thread: reads and hands chunks over, blocking while the channel is full (the
/// backpressure). Ends at the pseudo console's end or when the output task is gone.
fn read_pty(mut pty: Box<dyn Read + Send>, chunks: mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match pty.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if chunks.blocking_send(buf[..n].to_vec()).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// The writer thread: keystrokes in order, until the session is gone or the pseudo console is.
fn write_pty(mut pty: Box<dyn Write + Send>, mut input: mpsc::Receiver<Vec<u8>>) {
    while let Some(bytes) = input.blocking_recv() {
        if pty.write_all(&bytes).is_err() {
            return;
        }
    }
}
