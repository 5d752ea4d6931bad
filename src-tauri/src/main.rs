// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // GDK loads OpenGL (Mesa, and with it LLVM: about 50 MB) when it opens the display, for a window
    // that may never be shown; WebKit draws the window with its own GL, without GDK's. So GDK's is off
    // unless the person set GDK_GL themselves.
    #[cfg(target_os = "linux")]
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: the first thing in main, before any thread exists to read the environment.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
    lembas_desktop::run();
}
