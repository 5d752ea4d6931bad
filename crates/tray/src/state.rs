//! What the tray and the window show: built in lembas-device (`face`), so the runtime serves the
//! window's snapshot over the control endpoint and the tray draws from the same code.

pub use lembas_device::face::*;
