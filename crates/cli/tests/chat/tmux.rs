//! A real terminal for `lembas chat`: a tmux server of the test's own (its own socket), one window
//! running the real binary, keys sent with `send-keys`, the screen read with `capture-pane`, as a
//! person at a terminal would drive it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// `program` with `args` and `env` in a `width`×`height` terminal.
    pub fn start(
        dir: &Path,
        width: u16,
        height: u16,
        env: &[(&str, PathBuf)],
        program: &str,
        args: &[&str],
    ) -> Tmux {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let n = STARTED.fetch_add(1, Ordering::Relaxed);
        let socket = dir.join(format!("tmux-{n}.sock"));
        let tmux = Tmux { socket };
        let mut command = vec!["env".to_string()];
        command.extend(env.iter().map(|(k, v)| format!("{k}={}", v.display())));
        command.push(program.to_string());
        command.extend(args.iter().map(|a| a.to_string()));
        let (w, h) = (width.to_string(), height.to_string());
        let mut new = vec![
            "new-session",
            "-d",
            "-s",
            "chat",
            "-x",
            w.as_str(),
            "-y",
            h.as_str(),
        ];
        let line = command
            .iter()
            .map(|w| shell_quoted(w))
            .collect::<Vec<_>>()
            .join(" ");
        // The pane stays after the program ends, so its last screen can be read.
        let shown = format!("{line}; code=$?; echo; echo \"[exited $code]\"; sleep 600");
        new.push(&shown);
        let out = tmux.run(&new);
        assert!(
            out.status.success(),
            "tmux did not start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs (apt-get install tmux)")
    }

    /// The screen as text, one line a row.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "chat"]).stdout).into_owned()
    }

    /// Typed as it is (no key names).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "chat", "-l", text]);
    }

    /// Keys by name: `Enter`, `Escape`, `C-c`, `Tab`.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "chat"];
        args.extend(keys);
        self.run(&args);
    }

    /// `text` pasted as a terminal pastes it (bracketed, when the program asked for that).
    pub fn paste(&self, text: &str, dir: &Path) {
        let file = dir.join("paste.txt");
        std::fs::write(&file, text).unwrap();
        let file = file.to_string_lossy().into_owned();
        self.run(&["load-buffer", "-b", "pasted", &file]);
        self.run(&["paste-buffer", "-p", "-b", "pasted", "-t", "chat"]);
    }

    pub fn resize(&self, width: u16, height: u16) {
        let (w, h) = (width.to_string(), height.to_string());
        self.run(&["resize-window", "-t", "chat", "-x", &w, "-y", &h]);
    }

    /// Waits until the screen shows `text`; the screen.
    pub fn wait_for(&self, text: &str, within: Duration) -> String {
        self.wait_until(within, |screen| screen.contains(text))
            .unwrap_or_else(|screen| panic!("{text:?} never showed; the screen:\n{screen}"))
    }

    /// Waits until `shown` holds for the screen; the screen, or the last one seen.
    pub fn wait_until(&self, within: Duration, shown: impl Fn(&str) -> bool) -> Result<String, String> {
        let end = Instant::now() + within;
        loop {
            let screen = self.screen();
            if shown(&screen) {
                return Ok(screen);
            }
            if Instant::now() > end {
                return Err(screen);
            }
            std::thread::sleep(Duration::from_millis(40));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

fn shell_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}
