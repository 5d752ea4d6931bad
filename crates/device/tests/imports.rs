//! The core's files import one way: read from its own source, the graph of which file uses which
//! (`use crate::…`, `use super::…`, a child module's path, and the same paths written inline) has
//! no circle, so every file can be put above the ones it uses and no import runs back up.
//!
//! A folder's root file (`mod.rs`, `lib.rs`) and the files under it are one module: the root holds
//! what its parts share and routes to them, so the arrows between them are not counted.
//!
//! `cargo test -p lembas-device --test imports -- --nocapture` prints the figures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file and the module path it is (`engine/show/kind.rs` is `engine::show::kind`).
struct File {
    module: Vec<String>,
    /// `mod.rs` or `lib.rs`: the root of a folder's module.
    is_root: bool,
    text: String,
}

fn files(src: &Path) -> BTreeMap<PathBuf, File> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().to_path_buf();
            let mut module: Vec<String> = relative
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let is_root = matches!(module.last().map(String::as_str), Some("mod" | "lib"));
            if is_root {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            out.insert(
                relative,
                File {
                    module,
                    is_root,
                    text,
                },
            );
        }
    }
    out
}

/// The file a module path names: the longest prefix that is a file (what follows is an item).
fn file_of(modules: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]).cloned())
}

/// The code without comments and without what a tests-only `#[cfg(…)]` guards (a test may use anything):
/// the item after it, one line (`mod tests;`, a `use`) or a block to its closing brace.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if tests_only(line) {
            let mut depth = 0i64;
            for item in lines.by_ref() {
                depth += item.matches('{').count() as i64 - item.matches('}').count() as i64;
                let end = item.trim_end();
                if depth <= 0 && (end.ends_with(';') || end.ends_with('}')) {
                    break;
                }
            }
            continue;
        }
        out.push_str(line.split("//").next().unwrap_or_default());
        out.push('\n');
    }
    out
}

/// `#[cfg(test)]`, `#[cfg(all(test, …))]`: what follows is built for tests only.
fn tests_only(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("#[cfg(") && line.contains("test") && !line.contains("not(test)")
}

/// The modules only tests build: those a `#[cfg(test)] mod name;` declares, with their files.
fn test_only(files: &BTreeMap<PathBuf, File>) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for file in files.values() {
        let lines: Vec<&str> = file.text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            let declared = pair[1].strip_prefix("pub ").unwrap_or(pair[1]);
            if tests_only(pair[0])
                && let Some(name) = declared.strip_prefix("mod ").and_then(|d| d.strip_suffix(';'))
            {
                let mut module = file.module.clone();
                module.push(name.to_string());
                found.push(module);
            }
        }
    }
    found
}

/// The paths of a `use` tree: `a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree
        .find('{')
        .filter(|open| tree.rfind('}').is_some_and(|close| close > *open))
    else {
        return vec![tree.split(" as ").next().unwrap_or_default().trim().to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// What follows `use` on a line that starts a use statement (`pub`, `pub(crate)` and the like
/// allowed before it).
fn use_tree(line: &str) -> Option<&str> {
    let line = line.trim();
    let unqualified = match line.strip_prefix("pub") {
        Some(rest) if rest.starts_with('(') => rest.split_once(')')?.1,
        Some(rest) => rest,
        None => line,
    };
    unqualified.trim_start().strip_prefix("use ")
}

/// Every module path the file uses, made absolute.
fn used(file: &File, modules: &BTreeMap<Vec<String>, PathBuf>) -> Vec<Vec<String>> {
    let code = code(&file.text);
    // `super` is the parent of the file's own module; a bare name, a child of it.
    let here = &file.module;
    let mut paths = Vec::new();
    // `use` statements, whole (with their groups).
    for statement in code.split(';') {
        // From the line that starts it (what came before ended with `}` or is an attribute).
        let lines: Vec<&str> = statement.lines().collect();
        let Some(start) = lines.iter().position(|line| use_tree(line).is_some()) else {
            continue;
        };
        let rest = lines[start + 1..].join(" ");
        if let Some(tree) = use_tree(lines[start]) {
            paths.extend(expand(&format!("{tree} {rest}")));
        }
    }
    // Paths written inline.
    for word in code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
        if word.starts_with("crate::") || word.starts_with("super::") {
            paths.push(word.trim_end_matches(':').to_string());
        }
    }
    let mut absolute = Vec::new();
    for path in paths {
        let segments: Vec<String> = path.split("::").map(str::to_string).collect();
        let Some(first) = segments.first() else { continue };
        let resolved = match first.as_str() {
            "crate" => segments[1..].to_vec(),
            "super" => {
                let mut base = here.clone();
                let mut rest = &segments[..];
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                base
            }
            "self" => here
                .iter()
                .cloned()
                .chain(segments[1..].iter().cloned())
                .collect(),
            // A child module of this one, named bare.
            child => {
                let mut candidate = here.clone();
                candidate.push(child.to_string());
                if !modules.contains_key(&candidate) {
                    continue;
                }
                here.iter().cloned().chain(segments.iter().cloned()).collect()
            }
        };
        absolute.push(resolved);
    }
    absolute
}

/// Files that import each other in a loop (Tarjan's strongly connected components of size > 1).
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        next: usize,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

#[test]
fn no_file_of_the_core_imports_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = files(&src);
    let tests = test_only(&files);
    files.retain(|_, f| !tests.iter().any(|t| f.module.starts_with(t)));
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|(path, f)| (f.module.clone(), path.clone()))
        .collect();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (path, file) in &files {
        let targets = edges.entry(path.clone()).or_default();
        for used in used(file, &modules) {
            let Some(target) = file_of(&modules, &used) else {
                continue;
            };
            let other = &files[&target];
            // A root file and the files of its own module are one module.
            let inside = |root: &File, part: &File| root.is_root && part.module.starts_with(&root.module);
            if target == *path || inside(file, other) || inside(other, file) {
                continue;
            }
            targets.insert(target);
        }
    }
    let arrows: usize = edges.values().map(BTreeSet::len).sum();
    let found = circles(&edges);
    // The same graph between the crate's top modules (`engine`, `link`, `policy`…).
    let top = |path: &PathBuf| PathBuf::from(files[path].module.first().map_or("lib", String::as_str));
    let mut between: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (from, targets) in &edges {
        let entry = between.entry(top(from)).or_default();
        entry.extend(targets.iter().map(top).filter(|t| *t != top(from)));
    }
    let module_circles = circles(&between);
    println!(
        "{} files, {arrows} imports between them, {} circles of files; {} top modules, {} circles of modules",
        files.len(),
        found.len(),
        between.len(),
        module_circles.len()
    );
    for circle in &module_circles {
        println!("modules in a circle: {circle:?}");
    }
    let said: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" → ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that import each other:\n{}",
        said.join("\n")
    );
    assert!(
        module_circles.is_empty(),
        "top modules that import each other: {module_circles:?}"
    );
    // The graph is read at all: a reader that found nothing would pass for nothing.
    assert!(arrows > 100, "only {arrows} imports read");
}

#[test]
fn the_reader_finds_a_circle_where_there_is_one() {
    let two = |module: &str, text: &str| File {
        module: module.split("::").map(str::to_string).collect(),
        is_root: false,
        text: text.to_string(),
    };
    let a = two("a", "use crate::b::Thing;\nfn f() {}");
    let b = two("b", "fn g() { crate::a::f() }\npub struct Thing;");
    let modules: BTreeMap<Vec<String>, PathBuf> = [
        (vec!["a".to_string()], PathBuf::from("a.rs")),
        (vec!["b".to_string()], PathBuf::from("b.rs")),
    ]
    .into();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (path, file) in [("a.rs", &a), ("b.rs", &b)] {
        for used in used(file, &modules) {
            if let Some(target) = file_of(&modules, &used).filter(|t| t != Path::new(path)) {
                edges.entry(PathBuf::from(path)).or_default().insert(target);
            }
        }
    }
    assert_eq!(
        circles(&edges),
        vec![vec![PathBuf::from("a.rs"), PathBuf::from("b.rs")]]
    );
    assert_eq!(expand("x::{y, z::{p, q as r}}"), ["x::y", "x::z::p", "x::z::q"]);
}
