//! The file tools the model calls (ENGINE.md "Tools"): `read`, `ls`, `glob`, `grep`, `write` and
//! `edit`. `bash` is the engine's own; only its definition is here, beside the others.

mod cut;
mod definitions;

pub use cut::cut_result;
pub use definitions::{definitions, tool_names};
