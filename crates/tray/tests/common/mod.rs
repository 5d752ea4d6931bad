//! What the desktop's integration tests share, from the test kit, and their token.

// Each test binary uses part of it.
#![allow(dead_code, unused_imports)]

use std::time::Duration;

pub use lembas_testkit::notifications::*;
pub use lembas_testkit::{Config, Home, linked, store_token};

pub const WAIT: Duration = Duration::from_secs(20);
pub const TOKEN: &str = "desktop-notices-token-7a2c";
