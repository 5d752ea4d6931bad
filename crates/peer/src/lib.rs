//! The reference peer.
