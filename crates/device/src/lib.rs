//! lembas-device: the device side of the LLeMbas link, with no Tauri in it. The `lembas` command
//! and the desktop app are thin layers over this crate.

pub mod activity_log;
pub mod canonical;
pub mod client;
pub mod commands_shell;
pub mod control;
pub mod decisions;
#[cfg(target_os = "linux")]
pub mod desktop_bus;
pub mod desktop_view;
pub mod directories;
pub mod discovery;
pub mod dispatcher;
pub mod editor;
pub mod editor_login;
pub mod engine;
pub mod events;
pub mod files;
pub mod heap;
pub mod instance_answers;
pub mod keep_awake;
pub mod keychain;
pub mod lenient;
pub mod link;
pub mod lock;
pub mod log_file;
pub mod login;
pub mod mcp;
pub mod monitor;
pub mod paths;
pub mod poison;
pub mod policy;
pub mod process_tree;
pub mod proxy;
pub mod request_cancel;
pub mod runtime;
pub mod sandbox;
pub mod scheduled;
pub mod settings;
pub mod setup;
pub mod status;
pub mod store;
pub mod terminal;
pub mod tls;
pub mod tools;
pub mod utc;
pub mod whole_file;

/// The wire's JSON-RPC, from the protocol crate: the core's modules say `crate::rpc`.
pub use lembas_protocol::rpc;
