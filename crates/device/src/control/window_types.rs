//! The window's types for `ui/` (`ui/src/wire.ts`), generated from the types this socket sends, so
//! the UI type-checks against what the device serializes instead of a copy written by hand. A test
//! keeps the file fresh: `LEMBAS_GENERATE=1 cargo test -p lembas-device window_types` writes it.

use std::path::Path;
use ts_rs::{Config, TS, TypeVisitor};

use crate::desktop_view::Snapshot;
use crate::engine::grants::Grant;

/// Every declaration the window's types need, each once, sorted by name.
fn declarations() -> String {
    // Milliseconds and sizes fit a JavaScript number; a bigint would not come out of JSON.parse.
    let mut all = Declarations {
        cfg: Config::default().with_large_int("number"),
        seen: Vec::new(),
        out: Vec::new(),
    };
    // Every control method's params and answer, and the window's own.
    crate::control::calls::call::visit_types(&mut all);
    all.visit::<Snapshot>();
    all.visit::<Grant>();
    // Where the window opens, as the tray and a clicked notification say it.
    all.visit::<lembas_protocol::view::View>();
    // By name: ts-rs visits a type's dependencies in an order that differs from build to build, and
    // TypeScript needs no declaration before its use.
    all.out.sort();
    all.out.push(crate::control::calls::call::typescript(&all.cfg));
    all.out.join("\n\n")
}

struct Declarations {
    cfg: Config,
    seen: Vec<String>,
    out: Vec<String>,
}

impl TypeVisitor for Declarations {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Only types with a declaration of their own (not strings, numbers, arrays, options), but
        // what an array or an option holds.
        if T::output_path().is_none() {
            // Marked too: JSON's own type holds itself.
            let name = T::name(&self.cfg);
            if !self.seen.contains(&name) {
                self.seen.push(name);
                T::visit_generics(self);
                T::visit_dependencies(self);
            }
            return;
        }
        let name = T::ident(&self.cfg);
        if self.seen.contains(&name) {
            return;
        }
        // Marked before its dependencies are visited: a type that refers to itself ends here.
        self.seen.push(name);
        T::visit_dependencies(self);
        self.out.push(format!("export {}", T::decl(&self.cfg)));
    }
}

#[test]
fn the_windows_types_are_generated_and_fresh() {
    let text = format!(
        "// Generated from the device's types (crates/device/src/control/window_types.rs); do not edit.\n\
         // A test checks it is fresh: `LEMBAS_GENERATE=1 cargo test -p lembas-device window_types`.\n\n{}\n",
        declarations()
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/wire.ts");
    if std::env::var_os("LEMBAS_GENERATE").is_some() {
        std::fs::write(&path, &text).expect("ui/src/wire.ts written");
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "ui/src/wire.ts is not what the device's types say: run LEMBAS_GENERATE=1 cargo test -p lembas-device window_types"
    );
}
