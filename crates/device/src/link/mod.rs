//! The link to the instance: one WebSocket carrying JSON-RPC 2.0, dialled and kept up by the
//! supervisor.

pub mod client;
pub mod connection;
pub mod incoming;
pub mod outbound;
pub mod supervisor;
pub mod wake;

pub use outbound::Outbound;
pub use supervisor::{AtFinal, LinkOptions, Stop};
