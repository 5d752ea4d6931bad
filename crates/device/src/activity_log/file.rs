//! The log's files: appending one line, and rotating the current file away before it grows past
//! the decided size.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::Rotation;

/// `activity.jsonl` and its old files beside it, `activity.jsonl.1` the newest of them.
#[derive(Debug, Clone)]
pub struct LogFile {
    path: PathBuf,
    limits: Rotation,
}

impl LogFile {
    pub fn new(path: PathBuf, limits: Rotation) -> LogFile {
        LogFile { path, limits }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn limits(&self) -> Rotation {
        self.limits
    }

    /// Appends `line` and its newline. The file is opened for each line, so one removed, rotated
    /// or made unwritable from outside is simply found (or made) again at the next line; the
    /// device writes a few lines a minute, so the open costs nothing that matters.
    pub fn append(&self, line: &str) -> io::Result<()> {
        let mut record = String::with_capacity(line.len() + 1);
        record.push_str(line);
        record.push('\n');
        let mut file = self.open()?;
        let size = file.metadata()?.len();
        // A line that would take the file past the limit starts the next file instead; a line
        // longer than the limit by itself still gets a file of its own.
        if size > 0 && size + record.len() as u64 > self.limits.max_bytes {
            drop(file);
            self.rotate()?;
            file = self.open()?;
        }
        // One write of the whole line: with O_APPEND a reader never sees two lines interleaved.
        file.write_all(record.as_bytes())
    }

    fn open(&self) -> io::Result<fs::File> {
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        // Commands and folders are nobody else's business.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&self.path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // The state folder itself was removed: make it again.
                if let Some(dir) = self.path.parent() {
                    fs::create_dir_all(dir)?;
                }
                options.open(&self.path)
            }
            other => other,
        }
    }

    /// `activity.jsonl` becomes `.1`, `.1` becomes `.2`, …; the oldest beyond `kept_files` goes.
    fn rotate(&self) -> io::Result<()> {
        let kept = self.limits.kept_files;
        if kept == 0 {
            return remove_if_there(&self.path);
        }
        remove_if_there(&old_file(&self.path, kept))?;
        for n in (1..kept).rev() {
            rename_if_there(&old_file(&self.path, n), &old_file(&self.path, n + 1))?;
        }
        rename_if_there(&self.path, &old_file(&self.path, 1))
    }
}

/// The `n`th old file beside `path` (`activity.jsonl.n`), 1 the newest.
pub fn old_file(path: &Path, n: u32) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{n}"));
    path.with_file_name(name)
}

fn remove_if_there(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn rename_if_there(from: &Path, to: &Path) -> io::Result<()> {
    match fs::rename(from, to) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}
