//! The activity folded from the device's events (lembas-device's `desktop_view::activity`).

pub use lembas_device::desktop_view::activity::*;
