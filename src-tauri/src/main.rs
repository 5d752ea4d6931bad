// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // Before GTK or WebKit start: `--version` needs no display.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == "--version" || a == "-V")
    {
        println!("lembas-window {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    // Before GTK or WebKit start: the warm-up only reads files ahead and exits.
    #[cfg(target_os = "linux")]
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == lembas_window::warm_up::FLAG)
    {
        std::process::exit(lembas_window::warm_up::run());
    }
    // GDK's OpenGL (Mesa, and with it LLVM: about 50 MB) is not needed: WebKit draws the window
    // with its own GL. So it is off unless the person set GDK_GL themselves (the tray sets it too).
    #[cfg(target_os = "linux")]
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: the first thing in main, before any thread exists to read the environment.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
    lembas_window::run(lembas_device::paths::Dirs::from_env());
}
