//! The activity folded from the device's events (lembas-device's `face::activity`).

pub use lembas_device::face::activity::*;
