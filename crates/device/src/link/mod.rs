//! The link to the instance: one WebSocket carrying JSON-RPC 2.0, dialled and kept up by the
//! supervisor.

pub mod connection;
pub mod incoming;
pub mod supervisor;
pub mod wake;

pub use supervisor::{AtFinal, LinkOptions, Stop};
