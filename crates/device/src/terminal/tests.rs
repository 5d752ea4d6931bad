//! Real shells in real PTYs, each in a temporary HOME with its own start files, read back through
//! the link's outbound queue as the client would see them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use super::shell::Environment;
use super::*;
use crate::link::outbound::{OutboundQueue, channel};
use crate::settings::Remote;

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
        let terminals = Terminals::with_environment(out, environment);
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
        self.terminals.open(params, &self.settings()).await
    }

    async fn open_id(&self) -> String {
        let answer = self.open(json!({})).await.unwrap();
        answer["terminalId"].as_str().unwrap().to_string()
    }

    async fn send(&self, id: &str, text: &str) {
        let data = base64::engine::general_purpose::STANDARD.encode(text);
        self.terminals
            .input(json!({ "terminalId": id, "data": data }))
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

#[tokio::test]
async fn bash_marks_every_prompt() {
    let files = [
        (".bash_profile", "PROMPT_COMMAND='PS1=\"rebuilt\\$ \"'\n"),
        (".profile", "echo profile-must-not-be-read\n"),
    ];
    let mut h = Harness::new("/bin/bash", &files);
    marks_dialogue(&mut h, "bash", "(exit 3)", "rebuilt$ ").await;
    assert!(!h.text("t1").contains("profile-must-not-be-read"));
}

#[tokio::test]
async fn zsh_marks_every_prompt() {
    let rc = "autoload -Uz add-zsh-hook\n__rebuild() { PS1='rebuilt%# ' }\nadd-zsh-hook precmd __rebuild\n";
    let mut h = Harness::new("/usr/bin/zsh", &[(".zshrc", rc)]);
    marks_dialogue(&mut h, "zsh", "(exit 3)", "rebuilt# ").await;
}

#[tokio::test]
async fn fish_marks_every_prompt() {
    let config = "function fish_prompt\n    echo -n 'rebuilt> '\nend\n";
    let mut h = Harness::new("/usr/bin/fish", &[(".config/fish/config.fish", config)]);
    marks_dialogue(&mut h, "fish", "sh -c 'exit 3'", "rebuilt> ").await;
    // A prompt defined afresh at run time (as a theme does) is wrapped again.
    h.send("t1", "function fish_prompt; echo -n 'again> '; end\r")
        .await;
    h.until("the redefined prompt with B", "t1", |h| {
        h.text("t1").contains("again> \x1b]133;B\x07")
    })
    .await;
}

#[tokio::test]
async fn bash_reads_logout_files_and_exit_comes_last() {
    let files = [
        (".bash_logout", "echo logged-out > \"$HOME/logout-ran\"\n"),
        (".bashrc", "echo bashrc-read\n"),
    ];
    let mut h = Harness::new("/bin/bash", &files);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "echo some-output; exit 3\r").await;
    h.until("the exit", &id, |h| h.exit_code(&id).is_some()).await;
    assert_eq!(h.exit_code(&id), Some(json!(3)));
    assert!(h.home.join("logout-ran").exists(), "~/.bash_logout did not run");
    // A login shell does not read ~/.bashrc by itself (only when ~/.profile sources it).
    assert!(!h.text(&id).contains("bashrc-read"));
    let exit_at = h
        .events
        .iter()
        .position(|e| matches!(e, Event::Exit(..)))
        .unwrap();
    assert!(
        h.events[..exit_at]
            .iter()
            .any(|e| matches!(e, Event::Output(_, d) if d.windows(11).any(|w| w == b"some-output")))
    );
    // Nothing of this terminal after its exit.
    let next = tokio::time::timeout(Duration::from_millis(300), h.queue.next()).await;
    assert!(next.is_err(), "a frame after the exit: {next:?}");
    assert_eq!(h.terminals.open_count(), 0);

    // `logout` works as in a login shell, and reads the logout files too.
    std::fs::remove_file(h.home.join("logout-ran")).unwrap();
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "logout\r").await;
    h.until("the exit", &id, |h| h.exit_code(&id).is_some()).await;
    assert_eq!(h.exit_code(&id), Some(json!(0)), "{}", h.text(&id));
    assert!(
        h.home.join("logout-ran").exists(),
        "~/.bash_logout did not run on logout"
    );
}

#[tokio::test]
async fn a_shell_that_ignores_the_hangup_is_killed() {
    let mut h = Harness::new("/bin/bash", &[(".bash_profile", "trap '' HUP\n")]);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    let pid = h.terminals.session(&id).unwrap().pid();
    h.terminals.close(json!({ "terminalId": id })).await.unwrap();
    h.until("the exit", &id, |h| h.exit_code(&id).is_some()).await;
    assert_eq!(h.exit_code(&id), Some(json!(128 + libc::SIGKILL)));
    assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "the shell {pid} is still there");
}

#[tokio::test]
async fn zsh_follows_a_zdotdir_set_in_the_users_zshenv() {
    let files = [
        (
            ".zshenv",
            "echo \"zshenv sees ZDOTDIR=${ZDOTDIR-unset}\"\nZDOTDIR=$HOME/zdot\n",
        ),
        (".zshrc", "echo home-zshrc-must-not-be-read\n"),
        ("zdot/.zprofile", "echo zdot-zprofile-read\n"),
        (
            "zdot/.zshrc",
            "echo \"zdot-zshrc-read lembas=${(k)parameters[(I)__lembas*]}.${(k)functions[(I)__lembas*]}.\"\n",
        ),
        ("zdot/.zlogin", "echo zdot-zlogin-read\n"),
    ];
    let mut h = Harness::new("/usr/bin/zsh", &files);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "print -r -- \"now ZDOTDIR=$ZDOTDIR ${(t)ZDOTDIR} env=$(env | grep -c -e __lembas -e lembas-terminal)\"\r").await;
    h.until("the answer", &id, |h| h.text(&id).contains("now ZDOTDIR=/"))
        .await;
    let text = h.text(&id);
    assert!(text.contains("zshenv sees ZDOTDIR=unset"), "{text}");
    for read in [
        "zdot-zprofile-read",
        "zdot-zshrc-read lembas=..",
        "zdot-zlogin-read",
    ] {
        assert!(text.contains(read), "{read}: {text}");
    }
    assert!(!text.contains("home-zshrc-must-not-be-read"), "{text}");
    let zdot = h.home.join("zdot");
    assert!(
        text.contains(&format!("now ZDOTDIR={} scalar env=0", zdot.display())),
        "{text}"
    );
}

#[tokio::test]
async fn zsh_keeps_the_zdotdir_of_the_environment() {
    let files = [
        ("zconf/.zshrc", "echo zconf-zshrc-read\n"),
        (".zshrc", "echo home-zshrc-must-not-be-read\n"),
    ];
    let tmp_home = |h: &Harness| h.home.join("zconf");
    let mut h = Harness::new("/usr/bin/zsh", &files);
    let zconf = tmp_home(&h);
    h.terminals.environment = h.terminals.environment.clone().set("ZDOTDIR", &zconf);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "print -r -- \"now ZDOTDIR=$ZDOTDIR ${(t)ZDOTDIR}\"\r")
        .await;
    h.until("the answer", &id, |h| h.text(&id).contains("now ZDOTDIR=/"))
        .await;
    let text = h.text(&id);
    assert!(
        text.contains("zconf-zshrc-read") && !text.contains("home-zshrc-must-not-be-read"),
        "{text}"
    );
    assert!(
        text.contains(&format!("now ZDOTDIR={} scalar-export", zconf.display())),
        "{text}"
    );
}

#[tokio::test]
async fn sizes_are_clamped_and_resize_reaches_the_shell() {
    let mut h = Harness::new("/bin/bash", &[]);
    let answer = h.open(json!({ "cols": 5, "rows": 1000 })).await.unwrap();
    let [cols, rows] = [decisions().terminal.cols[0], decisions().terminal.rows[1]];
    assert_eq!(
        (answer["cols"].as_u64(), answer["rows"].as_u64()),
        (Some(cols.into()), Some(rows.into()))
    );
    let id = answer["terminalId"].as_str().unwrap().to_string();
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "stty size\r").await;
    h.until("the first size", &id, |h| {
        h.text(&id).contains(&format!("{rows} {cols}"))
    })
    .await;
    h.terminals
        .resize(json!({ "terminalId": id, "cols": 100, "rows": 30 }))
        .await
        .unwrap();
    h.send(&id, "stty size\r").await;
    h.until("the new size", &id, |h| h.text(&id).contains("30 100"))
        .await;
    let unknown = h
        .terminals
        .resize(json!({ "terminalId": "t99", "cols": 100, "rows": 30 }))
        .await;
    assert_eq!(unknown.unwrap_err().code, rpc::INVALID_PARAMS);
}

#[tokio::test]
async fn refusals_and_the_limit_per_link() {
    let mut h = Harness::new("/bin/sh", &[]);
    let outside = tempfile::tempdir().unwrap();
    let refused = h.open(json!({ "cwd": outside.path() })).await.unwrap_err();
    assert_eq!(refused.code, rpc::INVALID_PARAMS);
    assert!(
        refused.message.contains("outside the folders"),
        "{}",
        refused.message
    );

    let mut off = h.settings();
    off.remote.terminal = false;
    let refused = h.terminals.open(json!({}), &off).await.unwrap_err();
    assert!(
        refused.code == rpc::INVALID_PARAMS && refused.message.contains("remote.terminal: true"),
        "{refused}"
    );
    let mut remote_off = h.settings();
    remote_off.remote.enabled = false;
    let refused = h.terminals.open(json!({}), &remote_off).await.unwrap_err();
    assert!(refused.message.contains("Remote work is off"), "{refused}");
    let mut no_roots = h.settings();
    no_roots.remote.roots.clear();
    let refused = h.terminals.open(json!({}), &no_roots).await.unwrap_err();
    assert!(refused.message.contains("allows no folders"), "{refused}");
    let bad = h.open(json!({ "cwd": "relative/dir" })).await.unwrap_err();
    assert!(bad.message.contains("not an absolute path"), "{bad}");

    let max = decisions().terminal.max_per_link;
    let mut ids = Vec::new();
    for _ in 0..max {
        ids.push(h.open_id().await);
    }
    assert_eq!(ids, (1..=max).map(|n| format!("t{n}")).collect::<Vec<_>>());
    assert_eq!(h.terminals.open_count(), max);
    let fifth = h.open(json!({})).await.unwrap_err();
    assert_eq!(fifth.code, rpc::INVALID_PARAMS);
    assert!(fifth.message.contains(&max.to_string()), "{fifth}");

    h.terminals.close(json!({ "terminalId": ids[0] })).await.unwrap();
    assert_eq!(h.terminals.open_count(), max - 1);
    let again = h.open_id().await;
    assert_eq!(again, format!("t{}", max + 1), "ids are never reused");
    h.until("the closed one's exit", &ids[0], |h| {
        h.exit_code(&ids[0]).is_some()
    })
    .await;
    let closed = h
        .terminals
        .input(json!({ "terminalId": ids[0], "data": "" }))
        .await
        .unwrap_err();
    assert!(closed.message.contains("no terminal t1"), "{closed}");
}

/// The processes (not zombies) whose session is `sid`, from /proc.
fn session_members(sid: libc::pid_t) -> Vec<libc::pid_t> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<libc::pid_t>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name's closing parenthesis: state, ppid, pgrp, session.
        let Some(after) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() > 3 && fields[0] != "Z" && fields[3] == sid.to_string() {
            members.push(pid);
        }
    }
    members
}

#[tokio::test]
async fn close_all_leaves_no_shell_behind() {
    let mut h = Harness::new("/bin/bash", &[(".zshrc", "")]);
    let bash = h.open_id().await;
    h.terminals.environment = h.terminals.environment.clone().set("SHELL", "/usr/bin/zsh");
    let zsh = h.open_id().await;
    for id in [&bash, &zsh] {
        h.until("a prompt", id, |h| h.count(id, "B") >= 1).await;
        // A job in the foreground, and one in the background.
        h.send(id, "sleep 1000 & sleep 1001\r").await;
    }
    let pids: Vec<_> = [&bash, &zsh]
        .iter()
        .map(|id| h.terminals.session(id).unwrap().pid())
        .collect();
    let deadline = tokio::time::Instant::now() + WAIT;
    while pids.iter().any(|&pid| session_members(pid).len() < 3) {
        assert!(tokio::time::Instant::now() < deadline, "the sleeps did not start");
        h.until("more output", &bash, |_| true).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    h.terminals.close_all();
    assert_eq!(h.terminals.open_count(), 0);
    for id in [&bash, &zsh] {
        h.until("the exit", id, |h| h.exit_code(id).is_some()).await;
    }
    for pid in pids {
        let gone = unsafe { libc::kill(pid, 0) } != 0;
        assert!(gone, "the shell {pid} is still there");
        let deadline = tokio::time::Instant::now() + WAIT;
        while !session_members(pid).is_empty() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "left behind: {:?}",
                session_members(pid)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn a_flood_is_read_only_as_fast_as_the_link_sends() {
    let mut h = Harness::new("/bin/bash", &[]);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    let session = h.terminals.session(&id).unwrap();
    h.send(&id, "yes\r").await;
    // Nobody drains the queue: reading stops once the bounded lanes are full.
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut last = session.bytes_read();
    let mut steady = 0;
    while steady < 5 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the reader never stopped: {last} bytes"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = session.bytes_read();
        steady = if now == last { steady + 1 } else { 0 };
        last = now;
    }
    // The bulk lane, the frame in hand and one carried over, the read queue, the chunk in hand.
    let bound = (4 + 2) * session::FRAME_MAX + (session::READ_QUEUE + 1) * session::READ_CHUNK;
    assert!(
        last > 0 && last as usize <= bound,
        "{last} bytes read while nobody sent (bound {bound})"
    );

    h.send(&id, "\x03").await;
    let ds = h.count(&id, "D;130");
    h.until("a prompt after Ctrl-C", &id, |h| {
        let marks = h.prompt_marks(&id);
        h.count(&id, "D;130") > ds && marks.last().map(String::as_str) == Some("B")
    })
    .await;
}

#[tokio::test]
async fn plain_login_shells_without_integration() {
    let files = [
        (".profile", "echo profile-read\n"),
        (".bash_profile", "echo bash-profile-read\n"),
    ];
    let mut h = Harness::new("/bin/bash", &files);
    h.integration = false;
    let answer = h.open(json!({})).await.unwrap();
    assert_eq!(
        (answer["shell"].as_str(), answer["integration"].as_bool()),
        (Some("bash"), Some(false))
    );
    let id = answer["terminalId"].as_str().unwrap().to_string();
    h.send(&id, "echo \"zero=$0\"; true\r").await;
    h.until("the answer", &id, |h| h.text(&id).contains("zero=-bash"))
        .await;
    assert!(h.text(&id).contains("bash-profile-read"));
    assert!(h.prompt_marks(&id).is_empty(), "{:?}", h.marks(&id));

    h.integration = true;
    h.terminals.environment = h.terminals.environment.clone().set("SHELL", "/bin/sh");
    let answer = h.open(json!({})).await.unwrap();
    assert_eq!(
        (answer["shell"].as_str(), answer["integration"].as_bool()),
        (Some("other"), Some(false))
    );
    let id = answer["terminalId"].as_str().unwrap().to_string();
    h.send(&id, "echo \"zero=$0\"\r").await;
    h.until("the answer", &id, |h| h.text(&id).contains("zero=-sh"))
        .await;
    assert!(h.text(&id).contains("profile-read"));
}

#[test]
fn sizes_clamp_to_the_decided_ranges() {
    let range = decisions().terminal.cols;
    let cases = [
        (80.0, 80),
        (5.0, range[0]),
        (1e9, range[1]),
        (-3.0, range[0]),
        (f64::NAN, range[0]),
        (99.6, 100),
    ];
    for (value, want) in cases {
        assert_eq!(clamp(value, range), want, "{value}");
    }
}

#[tokio::test]
async fn bad_params_are_refused_with_a_reason() {
    let h = Harness::new("/bin/sh", &[]);
    let not_base64 = h
        .terminals
        .input(json!({ "terminalId": "t1", "data": "%%%" }))
        .await
        .unwrap_err();
    assert!(not_base64.message.contains("base64"), "{not_base64}");
    let missing = h.terminals.close(json!({})).await.unwrap_err();
    assert_eq!(missing.code, rpc::INVALID_PARAMS);
    let unknown = h
        .terminals
        .close(json!({ "terminalId": "t7" }))
        .await
        .unwrap_err();
    assert!(unknown.message.contains("t7"), "{unknown}");
}

/// The environment a command sees, as `sum=<md5>` of `env | sort`, for the newest terminal.
async fn env_digest(h: &mut Harness) -> String {
    let id = h.open_id().await;
    h.send(&id, "env | sort | md5sum | sed 's/^/sum=/'\r").await;
    let digest = |h: &Harness| {
        let text = h.text(&id);
        text.match_indices("sum=").find_map(|(at, _)| {
            let hex = text.get(at + 4..at + 36)?;
            hex.chars()
                .all(|c| c.is_ascii_hexdigit())
                .then(|| hex.to_string())
        })
    };
    h.until("the digest", &id, |h| digest(h).is_some()).await;
    digest(h).unwrap()
}

#[tokio::test]
async fn integration_leaves_the_environment_as_a_login_shell_has_it() {
    let files = [
        (".bash_profile", "export FROM_PROFILE=1\n"),
        (".zshenv", "export FROM_ZSHENV=1\n"),
        (".config/fish/config.fish", "set -gx FROM_FISH 1\n"),
    ];
    for shell in ["/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"] {
        let mut h = Harness::new(shell, &files);
        h.integration = false;
        let plain = env_digest(&mut h).await;
        h.integration = true;
        let integrated = env_digest(&mut h).await;
        assert_eq!(plain, integrated, "{shell}: {}", h.text("t2"));
    }
}

#[test]
fn the_handlers_can_run_as_tasks() {
    fn send_sync<T: Send + Sync>(_: &T) {}
    fn send<T: Send>(_: &T) {}
    let (out, _queue) = channel();
    let terminals = Terminals::new(out);
    send_sync(&terminals);
    let settings = Settings::default();
    send(&terminals.open(json!({}), &settings));
    send(&terminals.input(json!({})));
    send(&terminals.resize(json!({})));
    send(&terminals.close(json!({})));
}
