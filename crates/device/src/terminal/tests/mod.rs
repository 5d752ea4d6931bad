//! Real shells in real PTYs, each in a temporary HOME with its own start files, read back through
//! the link's outbound queue as the client would see them.

mod lifecycle;
mod shells;

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::shell::Environment;
use super::*;
use crate::client::outbound::{OutboundQueue, channel};
use crate::settings::Remote;
use lembas_protocol::request::{self, Request, method};

/// `request`'s params as the client writes them.
pub fn params<R: Request>(request: R, params: Value) -> R::Params {
    request::read(request, params).expect("params of the right shape")
}

/// Every wait in these tests: generous, for a loaded machine; a pass never waits this long.
const WAIT: Duration = Duration::from_secs(20);

enum Event {
    Output(String, Vec<u8>),
    Exit(String, Value),
}

struct Harness {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
    terminals: Terminals,
    queue: OutboundQueue,
    events: Vec<Event>,
    integration: bool,
}

impl Harness {
    /// A temporary HOME holding `files` (path relative to HOME, text), with `root` (HOME/work) the
    /// only root, and `shell` as $SHELL.
    fn new(shell: &str, files: &[(&str, &str)]) -> Self {
        Self::with_env(shell, files, |env| env)
    }

    fn with_env(shell: &str, files: &[(&str, &str)], env: impl FnOnce(Environment) -> Environment) -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(tmp.path()).unwrap();
        let root = home.join("work");
        std::fs::create_dir_all(&root).unwrap();
        for (path, text) in files {
            let path = home.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let environment = env(Environment::default()
            .set("HOME", &home)
            .set("SHELL", shell)
            .set("LANG", "C.UTF-8")
            .set("HISTFILE", home.join(".history"))
            .remove("LC_ALL")
            .remove("ZDOTDIR")
            .remove("XDG_CONFIG_HOME")
            .remove("PROMPT_COMMAND")
            .remove("ENV")
            .remove("BASH_ENV"));
        let (out, queue) = channel();
        let terminals = Terminals::with_environment(
            out,
            environment,
            super::Board::default(),
            &decisions::Decisions::built_in().terminal,
        );
        Self {
            _tmp: tmp,
            home,
            root,
            terminals,
            queue,
            events: Vec::new(),
            integration: true,
        }
    }

    fn settings(&self) -> Settings {
        Settings {
            remote: Remote {
                enabled: true,
                roots: vec![self.root.clone()],
                require_trust: false,
                terminal: true,
                terminal_integration: self.integration,
                ..Remote::default()
            },
            ..Settings::default()
        }
    }

    async fn open(&self, params: Value) -> Result<Value, RpcError> {
        let params = request::read(method::TerminalOpen, params)?;
        let opened = self.terminals.open(params, &self.settings()).await?;
        request::answer(opened)
    }

    async fn open_id(&self) -> String {
        let answer = self.open(json!({})).await.unwrap();
        answer["terminalId"].as_str().unwrap().to_string()
    }

    async fn send(&self, id: &str, text: &str) {
        let data = base64::engine::general_purpose::STANDARD.encode(text);
        self.terminals
            .input(params(
                method::TerminalInput,
                json!({ "terminalId": id, "data": data }),
            ))
            .await
            .unwrap();
    }

    /// Reads frames until `done` holds; panics with what arrived when it does not within [`WAIT`].
    async fn until(&mut self, what: &str, id: &str, done: impl Fn(&Self) -> bool) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !done(self) {
            let frame = tokio::time::timeout_at(deadline, self.queue.next()).await;
            let Ok(Some(frame)) = frame else {
                panic!(
                    "waited for {what}; marks so far {:?}; output:\n{}",
                    self.marks(id),
                    String::from_utf8_lossy(&self.output(id)).escape_debug()
                );
            };
            self.record(&frame);
        }
    }

    fn record(&mut self, frame: &str) {
        let message: Value = serde_json::from_str(frame).unwrap();
        let params = &message["params"];
        let id = params["terminalId"].as_str().unwrap_or_default().to_string();
        match message["method"].as_str() {
            Some(OUTPUT) => {
                let data = base64::engine::general_purpose::STANDARD
                    .decode(params["data"].as_str().unwrap())
                    .unwrap();
                self.events.push(Event::Output(id, data));
            }
            Some(EXIT) => self.events.push(Event::Exit(id, params["code"].clone())),
            other => panic!("unexpected frame {other:?}: {frame}"),
        }
    }

    fn output(&self, id: &str) -> Vec<u8> {
        let mut all = Vec::new();
        for event in &self.events {
            if let Event::Output(of, data) = event
                && of == id
            {
                all.extend_from_slice(data);
            }
        }
        all
    }

    fn text(&self, id: &str) -> String {
        String::from_utf8_lossy(&self.output(id)).into_owned()
    }

    fn exit_code(&self, id: &str) -> Option<Value> {
        self.events.iter().find_map(|e| match e {
            Event::Exit(of, code) if of == id => Some(code.clone()),
            _ => None,
        })
    }

    /// The OSC 133 marks ("A", "B", "C", "D;0") and OSC 7 ("7;file://…") in the order they came.
    fn marks(&self, id: &str) -> Vec<String> {
        osc_marks(&self.output(id))
    }

    fn prompt_marks(&self, id: &str) -> Vec<String> {
        self.marks(id)
            .into_iter()
            .filter_map(|m| m.strip_prefix("133;").map(str::to_string))
            .collect()
    }

    fn count(&self, id: &str, mark: &str) -> usize {
        self.prompt_marks(id).iter().filter(|m| *m == mark).count()
    }
}

fn osc_marks(bytes: &[u8]) -> Vec<String> {
    let mut marks = Vec::new();
    let mut rest = bytes;
    while let Some(start) = rest.windows(2).position(|w| w == b"\x1b]") {
        rest = &rest[start + 2..];
        let Some(end) = rest.iter().position(|&b| b == 0x07) else {
            break;
        };
        let body = String::from_utf8_lossy(&rest[..end]);
        if body.starts_with("133;") || body.starts_with("7;") {
            marks.push(body.into_owned());
        }
        rest = &rest[end + 1..];
    }
    marks
}

/// The path as the integration encodes it: unreserved ASCII and '/' kept, every other byte %XX.
fn percent_encoded(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str()
        .as_bytes()
        .iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Runs the same dialogue in any shell: the marks in order, a prompt rebuilt by the user's hook
/// still ending in B, no D for an empty line, and OSC 7 for a folder with a space and a non-ASCII name.
async fn marks_dialogue(h: &mut Harness, shell: &str, exit_3: &str, prompt: &str) {
    let answer = h.open(json!({})).await.unwrap();
    assert_eq!(answer["shell"], shell);
    assert_eq!(answer["integration"], true);
    assert_eq!(answer["cwd"], h.root.to_str().unwrap());
    let id = answer["terminalId"].as_str().unwrap().to_string();
    std::fs::create_dir_all(h.root.join("a b/é")).unwrap();

    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "true\r").await;
    h.until("the prompt after true", &id, |h| h.count(&id, "B") >= 2)
        .await;
    h.send(&id, "\r").await;
    h.until("the prompt after an empty line", &id, |h| h.count(&id, "B") >= 3)
        .await;
    h.send(&id, "false\r").await;
    h.until("the prompt after false", &id, |h| h.count(&id, "B") >= 4)
        .await;
    h.send(&id, &format!("{exit_3}\r")).await;
    h.until("the prompt after exit 3", &id, |h| h.count(&id, "B") >= 5)
        .await;
    let expected = [
        "A", "B", "C", "D;0", "A", "B", "A", "B", "C", "D;1", "A", "B", "C", "D;3", "A", "B",
    ];
    assert_eq!(h.prompt_marks(&id), expected, "{shell}");

    // The user's hook rebuilt the prompt every time; B still follows it.
    let text = h.text(&id);
    assert!(
        text.contains(&format!("\x1b]133;A\x07{prompt}\x1b]133;B\x07")),
        "{shell}: {text:?}"
    );

    let host = hostname::get().unwrap().into_string().unwrap();
    let start = format!("7;file://{host}{}", percent_encoded(&h.root));
    assert!(h.marks(&id).contains(&start), "{shell}: {:?}", h.marks(&id));
    h.send(&id, "cd \"a b\"/*\r").await;
    let inside = format!("{start}/a%20b/%C3%A9");
    h.until("OSC 7 for a b/é", &id, |h| h.marks(&id).contains(&inside))
        .await;
}
