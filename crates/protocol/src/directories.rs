//! Folders a session could use (capability `directories`): `_lembas/directories`.

use serde::{Deserialize, Serialize};

/// `_lembas/directories`'s params: a folder to list, or none for the places to start from. Other
/// fields (`_meta`, a newer instance's) are passed over, as every method does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirectoriesParams {
    #[serde(default)]
    pub path: Option<String>,
}

/// A folder, and whether a session may start there (`reason` says why not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Directory {
    pub path: String,
    pub name: String,
    pub accepted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `_lembas/directories`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Directories {
    /// No path asked: the roots, and the trusted projects inside them (`path` is "").
    Places { path: String, places: Vec<Directory> },
    /// A folder's own verdict, its parent while inside a root, and its folders (hidden ones left
    /// out); `error` when it could not be read.
    Listing {
        #[serde(flatten)]
        folder: Directory,
        parent: Option<String>,
        entries: Vec<Directory>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}
