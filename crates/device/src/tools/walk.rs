//! How `ls`, `glob` and `grep` walk a folder: like ripgrep (the `ignore` crate), `.gitignore`
//! respected, hidden files included, symlinks not followed, and protected paths (`.git` first of
//! all) neither listed nor entered.

use std::path::Path;

use ignore::WalkBuilder;

use crate::policy::protected::Protected;

pub fn walker(root: &Path, protected: &Protected) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        // A project that is not (yet) a git repository still means its .gitignore.
        .require_git(false)
        // A link could lead out of the roots, where the permission given does not reach.
        .follow_links(false);
    let protected = protected.clone();
    builder.filter_entry(move |entry| !protected.protects(entry.path()));
    builder
}

/// `path` relative to `base` as text with `/` between names, for output and glob matching.
pub fn relative_text(path: &Path, base: &Path) -> String {
    let relative = path.strip_prefix(base).unwrap_or(path);
    let text = relative.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}
