//! What the tray and the window show: built in lembas-device (`desktop_view`), so the runtime serves the
//! window's snapshot over the control endpoint and the tray draws from the same code.

pub use lembas_device::desktop_view::*;
