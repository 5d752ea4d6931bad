//! The approval cards as the window and the notifications show them (lembas-device's
//! `face::cards`).

pub use lembas_device::face::cards::*;
