//! What a shown file is (docs/protocol.md `_lembas/show`, the window's viewer): the `kind` the device gives
//! each file from its name, which says how a client draws it (HTML only in a sandboxed frame).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShownKind {
    Markdown,
    Code,
    Text,
    Html,
}
