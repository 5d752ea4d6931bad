//! What the fuzz targets share: one real device (settings, engine, dispatcher) per process, in a
//! private HOME, reused by every input so a run spends its time in the code under test.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use lembas_device::dispatcher::{Announced, Dispatcher};
use lembas_device::client::Outbound;
use lembas_device::client::outbound::{self, OutboundQueue};
use lembas_device::settings::{Remote, Settings};
use tokio::sync::{broadcast, watch};

pub mod hardline;

/// How long one input may keep the device busy: far more than any refusal takes, so only a hang
/// (a handler waiting on something that never comes) trips it.
pub const HANDLING_LIMIT: Duration = Duration::from_secs(10);

pub struct Device {
    pub runtime: tokio::runtime::Runtime,
    pub dispatcher: Arc<Dispatcher>,
    pub out: Outbound,
    queue: Mutex<OutboundQueue>,
    _settings: watch::Sender<Arc<Settings>>,
}

impl Device {
    /// Everything the link has sent since the last call (answers and notifications).
    pub fn sent(&self) -> Vec<String> {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        std::iter::from_fn(|| queue.try_next()).collect()
    }
}

/// The device every input of a process goes to. Remote work is off, so nothing an input asks for
/// runs a command, opens a shell or reads a folder: every method still reads its params and
/// answers (mostly the refusal a device with remote work off gives). Terminals are on so that
/// their methods are routed and their params read too.
pub fn device() -> &'static Device {
    static DEVICE: OnceLock<Device> = OnceLock::new();
    DEVICE.get_or_init(|| {
        private_home();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime for the fuzz target");
        let settings = Settings {
            remote: Remote {
                terminal: true,
                ..Remote::default()
            },
            ..Settings::default()
        };
        let announced = Announced::of(&settings);
        let (settings_tx, settings_rx) = watch::channel(Arc::new(settings));
        let (events, _) = broadcast::channel(256);
        let (out, queue) = outbound::channel();
        let dispatcher = runtime.block_on(async {
            let setup = lembas_device::setup::Setup::from_env();
            let engine = lembas_device::engine::Engine::new(settings_rx.clone(), events.clone(), setup);
            Arc::new(Dispatcher::new(
                settings_rx,
                announced,
                None,
                out.clone(),
                events,
                engine,
                lembas_device::terminal::board::Board::default(),
            ))
        });
        Device {
            runtime,
            dispatcher,
            out,
            queue: Mutex::new(queue),
            _settings: settings_tx,
        }
    })
}

/// HOME and the XDG folders in a fresh folder of this process, set once before any thread starts:
/// the device must not read or write the person's own config, store or keychain files.
fn private_home() {
    let home = std::env::temp_dir().join(format!("lembas-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&home).expect("a private HOME for the fuzz target");
    // SAFETY: called once, from the fuzzer's only thread, before the runtime or any thread exists.
    unsafe {
        std::env::set_var("HOME", &home);
        for (var, sub) in [
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_STATE_HOME", ".local/state"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_RUNTIME_DIR", "run"),
        ] {
            std::env::set_var(var, home.join(sub));
        }
    }
}

/// Waits for every task an input started; a task's panic is the input's panic.
pub async fn join_all(tasks: &mut tokio::task::JoinSet<()>) {
    let joined = tokio::time::timeout(HANDLING_LIMIT, async {
        while let Some(done) = tasks.join_next().await {
            if let Err(e) = done
                && e.is_panic()
            {
                std::panic::resume_unwind(e.into_panic());
            }
        }
    })
    .await;
    assert!(
        joined.is_ok(),
        "handling one frame took more than {HANDLING_LIMIT:?}"
    );
}

/// A runtime alone, for targets that need no device (the model stream).
pub fn bare_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a tokio runtime for the fuzz target")
    })
}
