//! `lembas serve --stdio`: the engine for an editor, on stdin and stdout, one JSON-RPC message a
//! line (docs/protocol.md). The editor runs on the person's own machine, so there are no remote limits: the
//! session's folder is the editor's, nothing needs trusting, and initialize says `limits: null`.
//! No device lock and no link: the service may run beside it. The login is still needed, for the
//! instance's models. Nothing but the protocol goes to stdout (logs go to stderr).

use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::JoinSet;

use crate::client::outbound::{self, OutboundQueue};
use crate::dispatcher::{Announced, Dispatcher};
use crate::editor_login::EditorLogin;
use crate::engine::Engine;
use crate::link::incoming;
use crate::policy::Mode;
use crate::rpc::{self, RpcError};
use crate::settings::Settings;
use crate::setup::Setup;

/// The longest line read: a prompt may carry 25 MB of attachments, base64 makes that about 34.
const MAX_LINE: u64 = 64 * 1024 * 1024;
/// The most written at once when messages wait (a message bigger than it goes alone).
const BATCH_BYTES: usize = 1 << 20;
/// At the end of input, how long running turns get to stop and write their records.
const CANCEL_WAIT: Duration = Duration::from_secs(10);
/// Then how long the answers of the cancelled prompts get to go out.
const ANSWERS_WAIT: Duration = Duration::from_secs(2);

/// The settings an editor's sessions run under: the person's own limits, not the remote ones.
/// Every folder is a session's folder (the editor's cwd), inside the one root `/`, trusted or not,
/// every mode allowed; writes outside the session's folder still ask, protected paths stay denied,
/// and terminals and scheduled work are the link's alone.
pub fn editor_settings(mut settings: Settings) -> Settings {
    let remote = &mut settings.remote;
    remote.enabled = true;
    remote.roots = vec![PathBuf::from("/")];
    remote.require_trust = false;
    remote.max_mode = Mode::Auto;
    remote.terminal = false;
    remote.scheduled = false;
    settings
}

/// Serves one editor until its input ends: then every running turn is cancelled, what it wrote is
/// on disk, the last answers are written, and this returns. `Err` only when the input could not
/// be read at all.
pub async fn serve<R, W>(input: R, output: W, settings: Settings, setup: Setup) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let connection = settings.server.as_ref().and_then(|s| s.connection.clone());
    let settings = editor_settings(settings);
    let announced = Announced::for_editor(&settings);
    let (settings_tx, settings_rx) = watch::channel(Arc::new(settings));
    // Nobody listens: the activity log and the desktop are the service's.
    let (events, _) = broadcast::channel(256);
    let engine = Engine::for_editor(settings_rx.clone(), events.clone(), setup.clone());
    let (out, queue) = outbound::channel();
    let (finish, finished) = oneshot::channel();
    let writer = tokio::spawn(write_lines(output, queue, finished));
    let dispatcher = Arc::new(
        Dispatcher::new(
            settings_rx,
            announced,
            connection,
            out.clone(),
            events,
            engine.clone(),
            // An editor's link opens no terminals.
            crate::terminal::board::Board::default(),
        )
        .with_login(EditorLogin::new(settings_tx, editor_settings, setup)),
    );
    let mut input = input;
    let mut tasks = JoinSet::new();
    let mut line = Vec::new();
    let read = loop {
        line.clear();
        tokio::select! {
            got = read_line(&mut input, &mut line) => match got {
                Ok(Line::End) => break Ok(()),
                Ok(Line::TooLong) => {
                    let error = RpcError::new(rpc::PARSE_ERROR, format!("The line is longer than {MAX_LINE} bytes: send each message as one shorter line."));
                    incoming::spawn_answer(&mut tasks, &out, Value::Null, Err(error));
                }
                Ok(Line::Read) => match std::str::from_utf8(&line) {
                    Ok(text) if text.trim().is_empty() => {}
                    Ok(text) => incoming::receive(text, &dispatcher, &out, None, &mut tasks).await,
                    Err(_) => {
                        let error = RpcError::new(rpc::PARSE_ERROR, "The line is not UTF-8 text: send each message as one line of JSON.");
                        incoming::spawn_answer(&mut tasks, &out, Value::Null, Err(error));
                    }
                },
                Err(e) => break Err(e),
            },
            Some(_) = tasks.join_next() => {}
        }
    };

    // The editor is gone: nothing runs on without it.
    if !engine.cancel_all(CANCEL_WAIT).await {
        tracing::warn!("a turn did not stop within {CANCEL_WAIT:?} of the end of input");
    }
    engine.stop_all_mcp_servers().await;
    let _ = tokio::time::timeout(ANSWERS_WAIT, async { while tasks.join_next().await.is_some() {} }).await;
    dispatcher.close_all();
    tasks.abort_all();
    drop(dispatcher);
    drop(out);
    let _ = finish.send(());
    let _ = writer.await;
    read
}

enum Line {
    Read,
    TooLong,
    End,
}

/// One line into `line` (without its newline). A line past [`MAX_LINE`] is skipped to its end.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, line: &mut Vec<u8>) -> std::io::Result<Line> {
    let n = (&mut *input).take(MAX_LINE).read_until(b'\n', line).await?;
    if n == 0 {
        return Ok(Line::End);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return Ok(Line::Read);
    }
    if (n as u64) < MAX_LINE {
        // The last line, with no newline after it.
        return Ok(Line::Read);
    }
    let mut rest = Vec::new();
    loop {
        rest.clear();
        let n = (&mut *input).take(MAX_LINE).read_until(b'\n', &mut rest).await?;
        if n == 0 || rest.last() == Some(&b'\n') {
            return Ok(Line::TooLong);
        }
    }
}

/// Writes each queued message as one line, flushed at once (the editor waits for it). Told to
/// finish, it writes what is still queued first.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut queue: OutboundQueue,
    mut finish: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            biased;
            _ = &mut finish => {
                while let Some(text) = queue.try_next() {
                    if write_line(&mut output, text).await.is_err() {
                        return;
                    }
                }
                return;
            }
            text = queue.next() => match text {
                Some(text) => {
                    // Every message already waiting goes in the same write: a replayed history is
                    // thousands of lines, and a write and a flush each would be most of its time.
                    let mut lines = text.into_bytes();
                    lines.push(b'\n');
                    while lines.len() < BATCH_BYTES
                        && let Some(more) = queue.try_next()
                    {
                        lines.extend_from_slice(more.as_bytes());
                        lines.push(b'\n');
                    }
                    if write_lines_out(&mut output, &lines).await.is_err() {
                        tracing::warn!("the editor's end of stdout is closed");
                        return;
                    }
                }
                None => return,
            },
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &mut W, text: String) -> std::io::Result<()> {
    let mut line = text.into_bytes();
    line.push(b'\n');
    write_lines_out(output, &line).await
}

async fn write_lines_out<W: AsyncWrite + Unpin>(output: &mut W, lines: &[u8]) -> std::io::Result<()> {
    output.write_all(lines).await?;
    output.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::Capability;

    #[test]
    fn an_editor_has_the_person_s_own_limits() {
        let mut settings = Settings::default();
        settings.remote.roots = vec![PathBuf::from("/somewhere")];
        settings.remote.terminal = true;
        settings.remote.scheduled = true;
        settings.remote.approval_timeout = 42;
        let editor = editor_settings(settings);
        assert!(editor.remote.enabled);
        assert_eq!(editor.remote.roots, vec![PathBuf::from("/")]);
        assert!(!editor.remote.require_trust);
        assert_eq!(editor.remote.max_mode, Mode::Auto);
        assert!(!editor.remote.terminal && !editor.remote.scheduled);
        assert_eq!(
            editor.remote.approval_timeout, 42,
            "the person's own setting stays"
        );
    }

    #[test]
    fn initialize_tells_an_editor_no_limits_and_no_link_only_capability() {
        let mut settings = Settings::default();
        settings.remote.terminal = true;
        let announced = Announced::for_editor(&editor_settings(settings));
        let answer = announced.initialize_answer(None, Vec::new(), crate::decisions::Decisions::built_in());
        let says = &answer.meta.lembas;
        assert_eq!(says.limits, None);
        for only_link in [
            Capability::Directories,
            Capability::Scheduled,
            Capability::Terminal,
            Capability::Shell,
        ] {
            assert!(
                !says.capabilities.contains(&only_link),
                "{only_link} in {:?}",
                says.capabilities
            );
        }
        assert!(says.capabilities.contains(&Capability::Sessions));
        assert_eq!(answer.protocol_version, 1);
        // As written on the wire: the limits are there, and null.
        let written = lembas_protocol::request::answer(&answer).unwrap();
        assert_eq!(written["_meta"]["lembas"]["limits"], Value::Null);
    }

    async fn lines_of(input: &[u8]) -> Vec<Result<String, &'static str>> {
        let mut reader = tokio::io::BufReader::new(input);
        let mut out = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut reader, &mut line).await.unwrap() {
                Line::End => return out,
                Line::TooLong => out.push(Err("too long")),
                Line::Read => out.push(Ok(String::from_utf8(line.clone()).unwrap())),
            }
        }
    }

    #[tokio::test]
    async fn lines_are_split_on_newlines_crlf_and_the_end() {
        assert_eq!(
            lines_of(b"{\"a\":1}\n{\"b\":2}\r\n\nlast").await,
            vec![
                Ok("{\"a\":1}".to_string()),
                Ok("{\"b\":2}".to_string()),
                Ok(String::new()),
                Ok("last".to_string()),
            ]
        );
    }
}
