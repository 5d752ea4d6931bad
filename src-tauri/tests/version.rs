//! `lembas-window --version` answers without a display.

#[test]
fn version_needs_no_display() {
    assert_eq!(
        lembas_testkit::version_of(env!("CARGO_BIN_EXE_lembas-window")),
        format!("lembas-window {}", env!("CARGO_PKG_VERSION"))
    );
}
