//! A command's output told as it comes, to a client that draws it (Zed's convention: the client
//! said `_meta.terminal_output`): the call becomes a terminal (`terminal_info`), each piece of
//! output follows in a `tool_call_update`'s `_meta.terminal_output`, and its end in
//! `terminal_exit`. The model's result is the same either way.

use std::path::Path;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::engine::Engine;
use lembas_protocol::SessionId;
use lembas_protocol::update::{
    SessionUpdate, TerminalExit, TerminalInfo, TerminalMeta, TerminalOutput, ToolCallContent, ToolCallStatus,
    ToolCallUpdate,
};

/// Chunks of output waiting to be told; the command's reading waits when they are this many.
const WAITING: usize = 64;

/// Telling one call's output; [`LiveOutput::finish`] says how it ended.
pub(super) struct LiveOutput {
    engine: Engine,
    session: SessionId,
    call: String,
    telling: JoinHandle<()>,
}

impl LiveOutput {
    /// The call `call` of `session` drawn as a terminal in `cwd`; what the command prints goes to
    /// the sender.
    pub async fn start(
        engine: &Engine,
        session: &SessionId,
        call: &str,
        cwd: &Path,
    ) -> (LiveOutput, mpsc::Sender<Vec<u8>>) {
        let meta = TerminalMeta {
            terminal_info: Some(TerminalInfo {
                terminal_id: call.to_string(),
                cwd: cwd.display().to_string(),
            }),
            ..TerminalMeta::default()
        };
        let content = vec![ToolCallContent::Terminal {
            terminal_id: call.to_string(),
        }];
        engine.update(session, update(call, Some(content), meta)).await;
        let (forward, chunks) = mpsc::channel(WAITING);
        let telling = tokio::spawn(tell(engine.clone(), session.clone(), call.to_string(), chunks));
        let live = LiveOutput {
            engine: engine.clone(),
            session: session.clone(),
            call: call.to_string(),
            telling,
        };
        (live, forward)
    }

    /// Everything read is told, then the end: `exit` the status, `None` when a signal (a stop, a
    /// time limit) ended it.
    pub async fn finish(self, exit: Option<i32>) {
        let _ = self.telling.await;
        let meta = TerminalMeta {
            terminal_exit: Some(TerminalExit {
                terminal_id: self.call.clone(),
                exit_code: exit,
                signal: exit.is_none().then(|| "SIGKILL".to_string()),
            }),
            ..TerminalMeta::default()
        };
        self.engine
            .update(&self.session, update(&self.call, None, meta))
            .await;
    }
}

fn update(call: &str, content: Option<Vec<ToolCallContent>>, meta: TerminalMeta) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate {
        tool_call_id: call.to_string(),
        status: ToolCallStatus::InProgress,
        content,
        meta: Some(meta),
    })
}

/// Tells each chunk as text, up to as much as the model is given (`bash_output_kept_bytes`): a
/// command printing without end is not copied to the client without end. Reads every chunk all
/// the same, so the command is never held up by what is not told.
async fn tell(engine: Engine, session: SessionId, call: String, mut chunks: mpsc::Receiver<Vec<u8>>) {
    let mut left = engine.setup().decisions.engine.bash_output_kept_bytes;
    let mut text = Utf8Pieces::default();
    while let Some(chunk) = chunks.recv().await {
        if left == 0 {
            continue;
        }
        let chunk = &chunk[..chunk.len().min(left)];
        left -= chunk.len();
        let data = text.push(chunk);
        if data.is_empty() {
            continue;
        }
        let meta = TerminalMeta {
            terminal_output: Some(TerminalOutput {
                terminal_id: call.clone(),
                data,
            }),
            ..TerminalMeta::default()
        };
        engine.update(&session, update(&call, None, meta)).await;
    }
}

/// Output as text, a character cut between two chunks kept whole for the next one.
#[derive(Default)]
struct Utf8Pieces {
    held: Vec<u8>,
}

impl Utf8Pieces {
    fn push(&mut self, chunk: &[u8]) -> String {
        self.held.extend_from_slice(chunk);
        let whole = match std::str::from_utf8(&self.held) {
            Ok(_) => self.held.len(),
            // Bytes that can still become a character wait; anything else is shown as �.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.held.len(),
        };
        let text = String::from_utf8_lossy(&self.held[..whole]).into_owned();
        self.held.drain(..whole);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_cut_between_chunks_is_told_whole() {
        let mut pieces = Utf8Pieces::default();
        let e_acute = "é".as_bytes();
        assert_eq!(pieces.push(b"caf"), "caf");
        assert_eq!(pieces.push(&e_acute[..1]), "");
        assert_eq!(pieces.push(&[e_acute[1], b'!']), "é!");
        assert_eq!(pieces.push(&[0xff, b'x']), "\u{fffd}x");
    }
}
