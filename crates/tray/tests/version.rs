//! `lembas-desktop --version` answers without a display.

#[test]
fn version_needs_no_display() {
    assert_eq!(
        lembas_testkit::version_of(env!("CARGO_BIN_EXE_lembas-desktop")),
        format!("lembas-desktop {}", env!("CARGO_PKG_VERSION"))
    );
}
