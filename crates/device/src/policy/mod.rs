//! Pure policy: modes, roots and trust, protected paths, the bash permission judge and the file
//! tools' permissions. Plain functions over data, called by every handler that needs them and
//! never re-implemented.

pub mod bash_judge;
pub mod protected;
pub mod risks;
pub mod roots;
pub mod tools;
pub use lembas_protocol::Mode;
