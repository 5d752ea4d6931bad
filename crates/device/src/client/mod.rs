//! The client at the other end of one connection (the instance on the link, or an editor on
//! `lembas serve --stdio`), as the device's handlers see it: the queue that writes to it
//! ([`Outbound`]) and the requests of ours that wait for its answers ([`ClientLink`]). It sits
//! below the dispatcher, the engine and the terminals, which write to a client, and below the link
//! and the editor, which carry one.

pub mod outbound;
pub mod requests;

pub use outbound::{Closed, Outbound};
pub use requests::{ClientLink, PendingRequests};
