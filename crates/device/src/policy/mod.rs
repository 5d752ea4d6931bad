//! Pure policy: modes, roots and trust, the bash permission judge. Plain functions over data,
//! called by every handler that needs them and never re-implemented.

pub mod bash_judge;
pub mod mode;
pub mod roots;
pub use mode::Mode;
