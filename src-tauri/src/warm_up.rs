//! `lembas-window --warm-up`: reads the window's files once, so they are in the page cache (its
//! own binary, every library the loader mapped for it, WebKit's helper processes beside its
//! library), then exits, before GTK or WebKit start. The tray runs it once after it starts: the
//! first open after a boot then finds WebKit in memory instead of on the disk (measured in the
//! note). The page cache is the system's to reclaim: no process of the app holds it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub const FLAG: &str = "--warm-up";
/// How deep WebKit's helper folder is walked (its injected bundle is one folder down).
const HELPER_DEPTH: usize = 2;

pub fn run() -> i32 {
    for path in files() {
        read_through(&path);
    }
    0
}

/// Every file mapped in this process, and what is in WebKit's helper folder.
fn files() -> BTreeSet<PathBuf> {
    files_in(&std::fs::read_to_string("/proc/self/maps").unwrap_or_default())
}

/// The files of a `/proc/<pid>/maps`, and WebKit's helpers beside its library.
fn files_in(maps: &str) -> BTreeSet<PathBuf> {
    // A line is `address perms offset dev inode path`; only the path has a `/`.
    let mut files: BTreeSet<PathBuf> = maps
        .lines()
        .filter_map(|line| line.find('/').map(|at| PathBuf::from(&line[at..])))
        .filter(|path| path.is_file())
        .collect();
    let helpers: Vec<PathBuf> = files
        .iter()
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("libwebkit2gtk-"))
        })
        .filter_map(|library| library.parent().map(|folder| folder.join("webkit2gtk-4.1")))
        .collect();
    for folder in helpers {
        add_files(&folder, HELPER_DEPTH, &mut files);
    }
    files
}

fn add_files(folder: &Path, depth: usize, files: &mut BTreeSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_file() => {
                files.insert(path);
            }
            Ok(kind) if kind.is_dir() && depth > 0 => add_files(&path, depth - 1, files),
            _ => {}
        }
    }
}

/// Reads the whole file and drops what it read: the pages stay cached. (`posix_fadvise`'s
/// WILLNEED left half of WebKit's library unread here.)
fn read_through(path: &Path) {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return;
    };
    let mut chunk = vec![0u8; 1 << 20];
    while matches!(file.read(&mut chunk), Ok(n) if n > 0) {}
}

#[cfg(test)]
mod tests {
    /// This machine's WebKit library, as the loader would map it into the window.
    fn webkit() -> Option<std::path::PathBuf> {
        [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/lib/aarch64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
        ]
        .iter()
        .filter_map(|folder| std::fs::read_dir(folder).ok())
        .flat_map(|entries| entries.flatten())
        .map(|entry| entry.path())
        .find(|path| path.to_string_lossy().contains("libwebkit2gtk-4.1.so"))
    }

    #[test]
    fn mapped_files_and_webkits_helpers_are_read_ahead() {
        let Some(webkit) = webkit() else {
            panic!("no libwebkit2gtk-4.1 on this machine: the window cannot build without it");
        };
        let maps = format!(
            "7f00-7f10 r-xp 00000000 08:01 42     {}\n7f10-7f20 rw-p 00000000 00:00 0 \n7f20-7f30 r--p 00000000 00:00 0      [vdso]\n",
            webkit.display()
        );
        let files = super::files_in(&maps);
        let named = |part: &str| files.iter().any(|path| path.to_string_lossy().contains(part));
        assert!(files.contains(&webkit), "{files:?}");
        assert!(
            named("WebKitWebProcess") && named("WebKitNetworkProcess"),
            "{files:?}"
        );
        assert!(!named("vdso"), "{files:?}");
    }
}
