//! What a shown file is, from its name alone (docs/protocol.md `_lembas/show`): `.md` markdown, `.html` and
//! `.htm` html, a known source extension code with its language, anything else text. Language
//! names are the common ones (highlight.js names or aliases), so a viewer can highlight by them.

use std::path::Path;

pub use lembas_protocol::ShownKind;

/// Extension (lowercase) → language. Files known by their whole name come first.
const BY_NAME: [(&str, &str); 4] = [
    ("Dockerfile", "dockerfile"),
    ("Makefile", "makefile"),
    ("CMakeLists.txt", "cmake"),
    ("Cargo.lock", "toml"),
];

const BY_EXTENSION: [(&str, &str); 48] = [
    ("rs", "rust"),
    ("py", "python"),
    ("pyi", "python"),
    ("js", "javascript"),
    ("mjs", "javascript"),
    ("cjs", "javascript"),
    ("jsx", "javascript"),
    ("ts", "typescript"),
    ("mts", "typescript"),
    ("tsx", "typescript"),
    ("go", "go"),
    ("c", "c"),
    ("h", "c"),
    ("cc", "cpp"),
    ("cpp", "cpp"),
    ("cxx", "cpp"),
    ("hpp", "cpp"),
    ("java", "java"),
    ("kt", "kotlin"),
    ("kts", "kotlin"),
    ("swift", "swift"),
    ("rb", "ruby"),
    ("php", "php"),
    ("cs", "csharp"),
    ("scala", "scala"),
    ("sh", "bash"),
    ("bash", "bash"),
    ("zsh", "bash"),
    ("ps1", "powershell"),
    ("lua", "lua"),
    ("pl", "perl"),
    ("r", "r"),
    ("sql", "sql"),
    ("css", "css"),
    ("scss", "scss"),
    ("less", "less"),
    ("json", "json"),
    ("yaml", "yaml"),
    ("yml", "yaml"),
    ("toml", "toml"),
    ("ini", "ini"),
    ("xml", "xml"),
    ("svg", "xml"),
    ("vue", "xml"),
    ("dart", "dart"),
    ("ex", "elixir"),
    ("hs", "haskell"),
    ("diff", "diff"),
];

/// The kind of the file named `path`, and for code its language.
pub fn of(path: &Path) -> (ShownKind, Option<&'static str>) {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if let Some((_, language)) = BY_NAME.iter().find(|(known, _)| *known == name) {
        return (ShownKind::Code, Some(language));
    }
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => (ShownKind::Markdown, None),
        "html" | "htm" => (ShownKind::Html, None),
        other => match BY_EXTENSION.iter().find(|(known, _)| *known == other) {
            Some((_, language)) => (ShownKind::Code, Some(language)),
            None => (ShownKind::Text, None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        let table = [
            ("README.md", ShownKind::Markdown, None),
            ("docs/Guide.MD", ShownKind::Markdown, None),
            ("page.html", ShownKind::Html, None),
            ("old.HTM", ShownKind::Html, None),
            ("src/main.rs", ShownKind::Code, Some("rust")),
            ("app.tsx", ShownKind::Code, Some("typescript")),
            ("build/Dockerfile", ShownKind::Code, Some("dockerfile")),
            ("notes.txt", ShownKind::Text, None),
            ("LICENSE", ShownKind::Text, None),
            ("archive.tar.gz", ShownKind::Text, None),
        ];
        for (path, kind, language) in table {
            assert_eq!(of(Path::new(path)), (kind, language), "{path}");
        }
    }
}
