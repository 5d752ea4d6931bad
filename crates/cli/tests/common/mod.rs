//! What the end-to-end tests share: a temporary home, the real `lembas` binary, a token put in the
//! real keychain through the same core function login uses, and a freezable loopback proxy.
//! Run them inside `scripts/with-keyring` (the README's test command does).

#![allow(dead_code, unused_imports)]

pub mod acp_sdk;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub const TOKEN: &str = "e2e-device-token-7f3a9c";

/// Puts the test token in the OS keychain (the same entry and function login uses). Every test
/// uses the same token, so tests running at once agree on it.
pub fn store_token() {
    lembas_testkit::store_token(TOKEN);
}

pub use lembas_testkit::{Home, eventually};

/// The text the model read back for tool call `call_id` (the last time it did).
pub fn read_by_model(model: &lembas_peer::ScriptedModel, call_id: &str) -> String {
    model
        .requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .rfind(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("the model never read a result for {call_id}"))
}

/// The system text of the model's last request.
pub fn last_system_text(model: &lembas_peer::ScriptedModel) -> String {
    let requests = model.requests();
    let last = requests.last().expect("a request");
    assert_eq!(last["messages"][0]["role"], "system");
    last["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The real `lembas` binary, run in a test's home.
pub trait Lembas {
    fn command(&self, args: &[&str]) -> Command;
    /// Runs `lembas service run` in the background, its stderr to a file.
    fn service(&self) -> Service;
    fn service_with_env(&self, env: &[(&str, &str)]) -> Service;
    fn run(&self, args: &[&str]) -> std::process::Output;
}

impl Lembas for Home {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lembas"));
        c.args(args)
            .envs(self.env())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null());
        c
    }
    fn service(&self) -> Service {
        self.service_with_env(&[])
    }
    fn service_with_env(&self, env: &[(&str, &str)]) -> Service {
        let log = self.path().join(format!("service-{}.log", fastrand()));
        let child = self
            .command(&["service", "run"])
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Service { child, log }
    }
    fn run(&self, args: &[&str]) -> std::process::Output {
        self.command(args).output().unwrap()
    }
}

fn fastrand() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

pub struct Service {
    pub child: Child,
    pub log: PathBuf,
}

impl Service {
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    pub fn signal(&self, sig: i32) {
        unsafe { libc::kill(self.pid(), sig) };
    }
    /// Waits for the process to end; its exit status.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback TCP proxy that can freeze the connections it carries: bytes stop flowing both ways
/// while the sockets stay open, as on a network that went away without a word. Connections made
/// after the freeze flow normally.
pub struct Proxy {
    pub addr: std::net::SocketAddr,
    carried: Arc<std::sync::Mutex<Vec<Arc<AtomicBool>>>>,
}

impl Proxy {
    pub async fn start(target: std::net::SocketAddr) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let carried: Arc<std::sync::Mutex<Vec<Arc<AtomicBool>>>> = Arc::default();
        let list = carried.clone();
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = tokio::net::TcpStream::connect(target).await else {
                    continue;
                };
                let frozen = Arc::new(AtomicBool::new(false));
                list.lock().unwrap().push(frozen.clone());
                let (ri, wi) = inbound.into_split();
                let (ro, wo) = outbound.into_split();
                tokio::spawn(pump(ri, wo, frozen.clone()));
                tokio::spawn(pump(ro, wi, frozen));
            }
        });
        Proxy { addr, carried }
    }
    /// Freezes every connection carried so far.
    pub fn freeze(&self) {
        for f in self.carried.lock().unwrap().iter() {
            f.store(true, Ordering::SeqCst);
        }
    }
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if frozen.load(Ordering::SeqCst) {
            // Swallow everything from now on, keeping both sockets open.
            let _keep = to;
            while !matches!(from.read(&mut buf).await, Ok(0) | Err(_)) {}
            return;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

/// Reads a file of a process in /proc (cmdline, environ) as bytes.
pub fn proc_file(pid: i32, name: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    std::fs::File::open(format!("/proc/{pid}/{name}"))
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .unwrap();
    bytes
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() { stack.push(p) } else { out.push(p) }
        }
    }
    out
}

/// Validates `value` against a definition of the official ACP schema.
pub fn validate_acp(definition: &str, value: &serde_json::Value) -> Result<(), String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/spec/acp-schema-v1/schema.json"
    );
    let mut schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let obj = schema.as_object_mut().unwrap();
    obj.remove("anyOf");
    obj.insert("$ref".into(), serde_json::json!(format!("#/$defs/{definition}")));
    let validator = jsonschema::validator_for(&schema).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}
