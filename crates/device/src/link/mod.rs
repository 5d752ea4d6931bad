//! The link to the instance: one WebSocket carrying JSON-RPC 2.0, dialled and kept up by the
//! supervisor.

pub mod outbound;
pub use outbound::Outbound;
