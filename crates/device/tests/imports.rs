//! Every crate of the workspace imports one way: read from its own source, the graph of which file
//! uses which (`use crate::…`, `use super::…`, a child module's path, and the same paths written
//! inline) has no circle, in any build target of any crate (the libraries, the programs), so every
//! file can be put above the ones it uses and no import runs back up. Where a crate has layers
//! (folders of modules), the graph between its top modules has no circle either.
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
    /// `mod.rs`, the target's root (`lib.rs`, `main.rs`) or a file with modules in a folder of its
    /// name: the root of a folder's module.
    is_root: bool,
    text: String,
}

/// The files of one build target: its root (`src/lib.rs`, `src/main.rs`, `src/bin/x.rs`) and every
/// file its `mod` declarations reach, named relative to `src`. A module only tests build
/// (`#[cfg(test)] mod tests;`) is left out: a test may use anything.
fn target(src: &Path, root: &Path) -> BTreeMap<PathBuf, File> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), Vec::<String>::new(), true)];
    // Each file with whether its children are beside it (a target's root, a `mod.rs`) or in the
    // folder of its name.
    while let Some((path, module, children_beside)) = stack.pop() {
        let text = std::fs::read_to_string(&path).unwrap();
        let dir = if children_beside {
            path.parent().unwrap().to_path_buf()
        } else {
            path.with_extension("")
        };
        let children = declared_modules(&code(&text));
        // `model.rs` with `model/stream.rs` under it is its folder's root, as a `mod.rs` is.
        let is_root = children_beside || !children.is_empty();
        for name in children {
            let (flat, folder) = (dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs"));
            let (child, child_beside) = if flat.is_file() {
                (flat, false)
            } else if folder.is_file() {
                (folder, true)
            } else {
                panic!(
                    "{}: `mod {name};` has neither {} nor {}",
                    path.display(),
                    flat.display(),
                    folder.display()
                );
            };
            let mut child_module = module.clone();
            child_module.push(name);
            stack.push((child, child_module, child_beside));
        }
        let relative = path.strip_prefix(src).unwrap().to_path_buf();
        out.insert(
            relative,
            File {
                module,
                is_root,
                text,
            },
        );
    }
    out
}

/// The names of the modules a file declares in files of their own (`mod name;`, `pub mod name;`…).
fn declared_modules(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| {
            let line = line.trim();
            let unqualified = match line.strip_prefix("pub") {
                Some(rest) if rest.starts_with('(') => rest.split_once(')')?.1,
                Some(rest) => rest,
                None => line,
            };
            let name = unqualified.trim_start().strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
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

/// What the import graph of one build target says.
struct Graph {
    files: usize,
    arrows: usize,
    /// Files that import each other in a loop.
    circles: Vec<Vec<PathBuf>>,
    top_modules: usize,
    /// Top modules (`engine`, `link`, `policy`…) that import each other in a loop.
    module_circles: Vec<Vec<PathBuf>>,
}

fn graph(files: &BTreeMap<PathBuf, File>) -> Graph {
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|(path, f)| (f.module.clone(), path.clone()))
        .collect();
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (path, file) in files {
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
    // The same graph between the target's top modules.
    let top = |path: &PathBuf| PathBuf::from(files[path].module.first().map_or("(root)", String::as_str));
    let mut between: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (from, targets) in &edges {
        let entry = between.entry(top(from)).or_default();
        entry.extend(targets.iter().map(top).filter(|t| *t != top(from)));
    }
    Graph {
        files: files.len(),
        arrows: edges.values().map(BTreeSet::len).sum(),
        circles: circles(&edges),
        top_modules: between.len(),
        module_circles: circles(&between),
    }
}

/// The workspace's crates, as its `Cargo.toml` lists them (`members = [...]`).
fn members(workspace: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).unwrap();
    let list = manifest
        .lines()
        .find_map(|line| line.trim().strip_prefix("members = ["))
        .expect("the workspace lists its members on one line");
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(|member| workspace.join(member))
        .collect()
}

/// A crate's build targets, by their root files: its library, its program, its other programs.
fn roots(src: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src.join(name))
        .filter(|path| path.is_file())
        .collect();
    if let Ok(programs) = std::fs::read_dir(src.join("bin")) {
        let mut programs: Vec<PathBuf> = programs
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "rs"))
            .collect();
        programs.sort();
        roots.extend(programs);
    }
    roots
}

fn said(circle: &[PathBuf]) -> String {
    circle
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" → ")
}

#[test]
fn no_file_of_any_crate_imports_in_a_circle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut refused = Vec::new();
    let (mut targets, mut files, mut arrows, mut core_arrows) = (0, 0, 0, 0);
    for krate in members(&workspace) {
        let src = krate.join("src");
        let crate_name = krate.file_name().unwrap().to_string_lossy().into_owned();
        let roots = roots(&src);
        assert!(!roots.is_empty(), "{crate_name} has no lib.rs, main.rs or bin/");
        for root in roots {
            let name = format!("{crate_name}/{}", root.strip_prefix(&src).unwrap().display());
            let graph = graph(&target(&src, &root));
            println!(
                "{name}: {} files, {} imports between them, {} circles of files; {} top modules, {} circles of modules",
                graph.files,
                graph.arrows,
                graph.circles.len(),
                graph.top_modules,
                graph.module_circles.len()
            );
            refused.extend(
                graph
                    .circles
                    .iter()
                    .map(|c| format!("{name}: files in a circle: {}", said(c))),
            );
            refused.extend(
                graph
                    .module_circles
                    .iter()
                    .map(|c| format!("{name}: top modules in a circle: {}", said(c))),
            );
            if name == "device/lib.rs" {
                core_arrows = graph.arrows;
            }
            targets += 1;
            files += graph.files;
            arrows += graph.arrows;
        }
    }
    println!("in all: {targets} build targets, {files} files, {arrows} imports between them");
    assert!(
        refused.is_empty(),
        "imports that run in a circle:\n{}",
        refused.join("\n")
    );
    // The graph is read at all: a reader that found nothing would pass for nothing.
    assert!(core_arrows > 100, "only {core_arrows} imports read in the core");
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
    let declared = "mod a;\npub(crate) mod b;\n#[cfg(test)]\nmod tests;\nmod inline {}\n";
    assert_eq!(declared_modules(&code(declared)), ["a", "b"]);
}

/// Where the decided numbers may be read (`Decisions::built_in()`): start-up only. Everything below
/// is handed them, or the part it needs, so its dependencies are in its signature and a test can
/// give it other numbers. Tests (what a `#[cfg(test)]` guards, `tests/`) may read them anywhere.
const READ_AT_START_UP: [&str; 3] = [
    // Where they are parsed.
    "device/decisions.rs",
    // `Setup::from_env`: the programs' start-up (`lembas`, the tray), handed down from there.
    "device/setup.rs",
    // `Home::setup`: the start-up of the runtimes tests host.
    "testkit/home.rs",
];

/// The bench: each measurement starts the parts it measures, with the built-in numbers.
const STARTS_ITS_OWN_PARTS: [&str; 1] = ["bench"];

#[test]
fn the_decisions_are_read_only_at_start_up() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut reached = BTreeSet::new();
    let mut readers = BTreeSet::new();
    for krate in members(&workspace) {
        let src = krate.join("src");
        let crate_name = krate.file_name().unwrap().to_string_lossy().into_owned();
        for root in roots(&src) {
            for (relative, file) in target(&src, &root) {
                if !code(&file.text).contains("Decisions::built_in(") {
                    continue;
                }
                let name = format!("{crate_name}/{}", relative.display());
                if READ_AT_START_UP.contains(&name.as_str())
                    || STARTS_ITS_OWN_PARTS.contains(&crate_name.as_str())
                {
                    readers.insert(name);
                } else {
                    reached.insert(name);
                }
            }
        }
    }
    println!("the decisions are read at start-up in: {readers:?}");
    assert!(
        reached.is_empty(),
        "read the decisions outside start-up (hand them down instead): {reached:?}"
    );
    assert!(
        readers.contains("device/setup.rs"),
        "the scan finds the programs' start-up"
    );
}

/// Paths are resolved through `lembas_device::canonical` alone (tests may do as they like): on
/// Windows std's `canonicalize` puts `\\?\` before every path, which people then see and which
/// compares unequal to the same path resolved without it.
#[test]
fn paths_are_resolved_in_one_place() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut elsewhere = BTreeSet::new();
    for krate in ["device", "cli", "tray"] {
        let src = workspace.join("crates").join(krate).join("src");
        for root in roots(&src) {
            for (relative, file) in target(&src, &root) {
                let code = code(&file.text);
                let name = format!("{krate}/{}", relative.display());
                if (code.contains("fs::canonicalize") || code.contains(".canonicalize()"))
                    && name != "device/canonical.rs"
                {
                    elsewhere.insert(name);
                }
            }
        }
    }
    assert!(
        elsewhere.is_empty(),
        "resolve paths with lembas_device::canonical::canonicalize: {elsewhere:?}"
    );
}
