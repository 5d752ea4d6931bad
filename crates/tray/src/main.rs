fn main() {
    // First: nothing of the person's reads this process's memory or environment from here on.
    lembas_device::sandbox::harden_this_process();
    // Before any thread starts.
    lembas_device::heap::one_arena();
    // Before any display is opened: `--version` needs none.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == "--version" || a == "-V")
    {
        println!("lembas-desktop {}", env!("CARGO_PKG_VERSION"));
        return;
    }
    // GDK loads OpenGL (Mesa, and with it LLVM: about 50 MB) when it opens the display; the tray
    // draws nothing with it. So GDK's is off unless the person set GDK_GL themselves.
    #[cfg(target_os = "linux")]
    if std::env::var_os("GDK_GL").is_none() {
        // SAFETY: the first thing in main, before any thread exists to read the environment.
        unsafe { std::env::set_var("GDK_GL", "disable") };
    }
    std::process::exit(lembas_desktop::run(lembas_desktop::Given::from_env()));
}
