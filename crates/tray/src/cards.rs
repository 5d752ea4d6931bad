//! The approval cards as the window and the notifications show them (lembas-device's
//! `desktop_view::cards`).

pub use lembas_device::desktop_view::cards::*;
