//! Where the token could show: its spellings (as is, base64 at every alignment, hex), and a
//! sampler that reads the argv and environment of every process the device started while they
//! run.

use base64::Engine;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The byte strings that would give the token away.
pub fn spellings(token: &str) -> Vec<Vec<u8>> {
    let bytes = token.as_bytes();
    let mut out = vec![bytes.to_vec()];
    // base64 of the token after 0, 1 or 2 other bytes: the part that does not depend on them.
    for engine in [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::URL_SAFE,
    ] {
        for shift in 0..3 {
            let mut shifted = vec![b'x'; shift];
            shifted.extend_from_slice(bytes);
            let encoded = engine.encode(&shifted);
            // Drop the characters that carry the leading bytes and the last, partial group.
            let start = (shift * 4).div_ceil(3);
            let end = encoded.trim_end_matches('=').len().saturating_sub(3);
            out.push(encoded.as_bytes()[start..end].to_vec());
        }
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    out.push(hex.clone().into_bytes());
    out.push(hex.to_uppercase().into_bytes());
    out
}

/// Which spelling of the token `hay` holds, if any.
pub fn leak(hay: &[u8], spellings: &[Vec<u8>]) -> Option<String> {
    spellings
        .iter()
        .find(|s| hay.windows(s.len()).any(|w| w == s.as_slice()))
        .map(|s| String::from_utf8_lossy(s).into_owned())
}

/// Reads `/proc/<pid>/cmdline` and `environ` of the service and its descendants every few
/// milliseconds until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    found: Arc<Mutex<Sampled>>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default, Debug, Clone)]
pub struct Sampled {
    /// Every (pid, program name) seen.
    pub processes: BTreeSet<(i32, String)>,
    /// What leaked where.
    pub leaks: BTreeSet<String>,
    pub rounds: usize,
}

impl Sampler {
    pub fn start(root: i32, spellings: Vec<Vec<u8>>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let found = Arc::new(Mutex::new(Sampled::default()));
        let thread = {
            let (stop, found) = (stop.clone(), found.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let round = sample(root, &spellings);
                    let mut found = found.lock().unwrap();
                    found.processes.extend(round.processes);
                    found.leaks.extend(round.leaks);
                    found.rounds += 1;
                    drop(found);
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        Sampler {
            stop,
            found,
            thread: Some(thread),
        }
    }

    pub fn finish(mut self) -> Sampled {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        self.found.lock().unwrap().clone()
    }
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(1)?.parse().ok()
}

fn sample(root: i32, spellings: &[Vec<u8>]) -> Sampled {
    let pids: Vec<i32> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let parents: Vec<(i32, i32)> = pids
        .iter()
        .filter_map(|pid| Some((*pid, parent_of(*pid)?)))
        .collect();
    let mut family = BTreeSet::from([root]);
    // Grow the family until no process joins: children of members are members.
    loop {
        let before = family.len();
        for (pid, parent) in &parents {
            if family.contains(parent) {
                family.insert(*pid);
            }
        }
        if family.len() == before {
            break;
        }
    }
    let mut round = Sampled::default();
    for pid in family {
        let read = |name: &str| std::fs::read(format!("/proc/{pid}/{name}")).unwrap_or_default();
        let (cmdline, environ) = (read("cmdline"), read("environ"));
        let program = cmdline
            .split(|b| *b == 0)
            .next()
            .map(|p| {
                String::from_utf8_lossy(p)
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        for (what, bytes) in [("argv", &cmdline), ("environment", &environ)] {
            if let Some(spelling) = leak(bytes, spellings) {
                round
                    .leaks
                    .insert(format!("{spelling:?} in the {what} of {pid} ({program})"));
            }
        }
        if !program.is_empty() {
            round.processes.insert((pid, program));
        }
    }
    round
}

#[test]
fn spellings_find_the_token_however_it_is_written() {
    let token = "a-distinctive-token-123";
    let all = spellings(token);
    let b64 = base64::engine::general_purpose::STANDARD;
    for hay in [
        format!("x{token}y"),
        b64.encode(format!("Bearer {token}")),
        b64.encode(format!("B{token}")),
        b64.encode(format!("Be{token}")),
        format!("{:x?}", token.as_bytes())
            .replace(['[', ']', ',', ' '], "")
            .replace("0x", ""),
        token.bytes().map(|b| format!("{b:02X}")).collect(),
    ] {
        assert!(leak(hay.as_bytes(), &all).is_some(), "{hay}");
    }
    assert!(leak(b"nothing to see", &all).is_none());
}
