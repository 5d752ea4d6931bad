//! The process's heap: every thread allocates from one malloc arena.
//!
//! glibc gives each thread that allocates while another holds the lock an arena of its own (up
//! to eight per core), and each keeps its freed pages. The device's threads are few and mostly
//! idle (the tokio workers, the blocking pool, the keychain's D-Bus thread, the file watcher), so
//! the extra arenas bought no speed: with one, a linked, idle `lembas service run` holds about
//! 0.3 MB less anonymous memory (2.0 MB instead of 2.3, read from its smaps_rollup).

/// Call first in `main`, before any thread starts: later threads take the arena limit as it is.
pub fn one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of glibc's allocator; called before other threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
