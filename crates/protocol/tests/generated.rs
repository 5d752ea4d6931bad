//! The generated files are what this crate declares now, not an older copy.

use lembas_protocol::generated::{TABLES_END, TABLES_START, markdown_tables, typescript};
use std::path::{Path, PathBuf};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn writing() -> bool {
    std::env::var_os("LEMBAS_GENERATE").is_some()
}

const AGAIN: &str = "run `LEMBAS_GENERATE=1 cargo test -p lembas-protocol` and commit it";

#[test]
fn the_window_types_are_generated_fresh() {
    let file = repository().join("ui/src/protocol.ts");
    let fresh = typescript();
    if writing() {
        std::fs::write(&file, &fresh).unwrap();
    }
    let checked_in = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "{} is not what crates/protocol declares: {AGAIN}",
        file.display()
    );
}

#[test]
fn the_method_tables_of_the_protocol_doc_are_generated_fresh() {
    let file = repository().join("docs/protocol.md");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let (Some(start), Some(end)) = (text.find(TABLES_START), text.find(TABLES_END)) else {
        panic!(
            "{} has no generated tables ({TABLES_START} … {TABLES_END})",
            file.display()
        );
    };
    let inside = &text[start + TABLES_START.len()..end];
    let fresh = markdown_tables();
    if writing() && inside != fresh {
        let rewritten = format!("{}{TABLES_START}{fresh}{}", &text[..start], &text[end..]);
        std::fs::write(&file, rewritten).unwrap();
        return;
    }
    assert!(
        inside == fresh,
        "the tables of {} are not what crates/protocol declares: {AGAIN}",
        file.display()
    );
}
