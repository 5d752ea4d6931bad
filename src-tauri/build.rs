//! The app's config is `tauri.conf.json` at the repository root (ARCHITECTURE.md). tauri-build 2.6
//! reads the config from the working folder only, so the build runs from the root, with the
//! capabilities pointed back into `src-tauri/`.

use std::path::Path;

/// The window's own commands; everything else it asks the device runtime through `control_call`.
const COMMANDS: &[&str] = &["pick_root", "take_view", "drawn", "control_call"];

fn main() {
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&crate_dir).join("..");
    if !root.join("ui/dist/index.html").exists() {
        println!(
            "cargo:warning=ui/dist is missing: build the UI first (npm --prefix ui ci && npm --prefix ui run build; scripts/run and scripts/test do)"
        );
        std::process::exit(1);
    }
    println!("cargo:rerun-if-changed=capabilities");
    println!("cargo:rerun-if-changed=../ui/dist");
    if let Err(e) = std::env::set_current_dir(&root) {
        println!("cargo:warning=cannot enter the repository root: {e}");
        std::process::exit(1);
    }
    // Each command gets an allow-<command> permission, so only the capabilities that list a
    // command can call it (a window without one cannot).
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(e) = tauri_build::try_build(attributes) {
        println!("cargo:warning=tauri build: {e:#}");
        std::process::exit(1);
    }
}
