//! What the desktop's integration tests share, from the test kit, and their token.

#![allow(dead_code)]

use std::time::Duration;

pub use lembas_testkit::notifications::*;
pub use lembas_testkit::{Home, linked, store_token};

pub const WAIT: Duration = Duration::from_secs(20);
pub const TOKEN: &str = "desktop-notices-token-7a2c";
