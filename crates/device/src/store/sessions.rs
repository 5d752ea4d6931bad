//! Session files: `sessions/<id>.jsonl`, one JSON object per line, the first
//! `{"type":"session", …header}`. Appended to at every step's end and flushed to disk then, so a
//! crash loses at most the step in flight; reading back repairs a last line a crash cut short.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{SessionFile, SessionHeader, Store, check_id, files, ids};

pub(super) const EXTENSION: &str = ".jsonl";

/// A session file open for appending.
#[derive(Debug)]
pub struct SessionLog {
    file: File,
    path: PathBuf,
    /// Set when a failed append may have left part of a line and cutting it off failed too: the
    /// next append cuts back to here first, so no record is ever glued onto a partial one.
    cut_back_to: Option<u64>,
}

/// A session read back from the store.
#[derive(Debug)]
pub struct Opened {
    /// The file, ready for the session's next records.
    pub log: SessionLog,
    /// Every line in order; the first is the header (`"type":"session"`). [`Opened::file`] reads
    /// them.
    pub records: Vec<Value>,
    /// A sentence for the person when the file had to be repaired (a last line cut short).
    pub notice: Option<String>,
}

impl Opened {
    /// What the lines say: the header and the records.
    pub fn file(self) -> (SessionFile, SessionLog) {
        (SessionFile::read(self.records), self.log)
    }
}

/// One line of `lembas sessions list`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    pub cwd: String,
    pub created_ms: u64,
    pub updated_ms: u64,
    pub messages: usize,
    /// Made for (or opened by) the link's client: it may delete the session wherever its folder is.
    pub given: bool,
}

impl SessionLog {
    /// Appends records as lines and makes them durable: all lines in one write, then `sync_data`.
    /// Each record must be a JSON object. When the write fails, whatever part of it reached the
    /// file is cut off again, so the file still ends on a whole line.
    pub fn append<R: Serialize>(&mut self, records: &[R]) -> io::Result<()> {
        self.write_lines(records, true)
    }

    /// As [`SessionLog::append`], but left to the system to write out: it survives the process
    /// being killed, not the machine losing power until the next `append`. For records whose loss
    /// would only lose the step in flight (the person's message at a turn's start).
    pub fn append_unsynced<R: Serialize>(&mut self, records: &[R]) -> io::Result<()> {
        self.write_lines(records, false)
    }

    fn write_lines<R: Serialize>(&mut self, records: &[R], sync: bool) -> io::Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut lines = Vec::with_capacity(records.len() * 256);
        for record in records {
            let start = lines.len();
            // Compact JSON never contains a raw newline (strings escape it): one record, one line.
            serde_json::to_writer(&mut lines, record)?;
            if lines.get(start) != Some(&b'{') {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a session record must be a JSON object",
                ));
            }
            lines.push(b'\n');
        }
        if let Some(end) = self.cut_back_to {
            self.file.set_len(end)?;
            self.cut_back_to = None;
        }
        let end = self.file.metadata()?.len();
        let written = self
            .file
            .write_all(&lines)
            .and_then(|()| if sync { self.file.sync_data() } else { Ok(()) });
        if let Err(e) = written {
            if self.file.set_len(end).is_err() {
                self.cut_back_to = Some(end);
            }
            return Err(e);
        }
        Ok(())
    }

    /// The session file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Store {
    /// A new session file whose first line is `{"type":"session", …header}`. The header's `id`,
    /// when given, must be `id` (it is filled in when empty). Fails with AlreadyExists when the
    /// session exists.
    pub fn create(&self, id: &str, header: &SessionHeader) -> io::Result<SessionLog> {
        check_id(id)?;
        if !header.id.is_empty() && header.id != id {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the header's id {} is not the session's id {id}", header.id),
            ));
        }
        #[derive(Serialize)]
        struct Line<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(flatten)]
            header: &'a SessionHeader,
        }
        let header = SessionHeader {
            id: id.to_string(),
            ..header.clone()
        };
        let record = Line {
            kind: "session",
            header: &header,
        };

        let dir = self.sessions_dir();
        files::ensure_dir(&dir)?;
        let path = self.session_path(id);
        let mut options = files::private_new_file();
        options.read(true).append(true);
        let file = options.open(&path)?;
        let mut log = SessionLog {
            file,
            path,
            cut_back_to: None,
        };
        let started = log.append(&[record]).and_then(|()| files::sync_dir(&dir));
        if let Err(e) = started {
            // A session without its header is no session: leave nothing behind.
            let _ = std::fs::remove_file(&log.path);
            return Err(e);
        }
        Ok(log)
    }

    /// Reads a session back: every record in order, and the file open for appending.
    ///
    /// An unreadable last line (a write cut short by a crash) is dropped, the file is cut back to
    /// the end of the last good line so appends go on cleanly, and `notice` says so. An unreadable
    /// line before the last is an error naming the line, and the file is left as it is: a session
    /// is never dropped silently. NotFound for an unknown id.
    pub fn open(&self, id: &str) -> io::Result<Opened> {
        check_id(id)?;
        let path = self.session_path(id);
        let mut file = OpenOptions::new().read(true).append(true).open(&path)?;
        // One read of the whole file, then parsing line by line from memory: the fast way back.
        let mut bytes = Vec::with_capacity(file.metadata()?.len() as usize);
        file.read_to_end(&mut bytes)?;
        let parsed = parse_lines(&bytes).map_err(|bad| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "line {} of {} is not a JSON record ({}); the session was left as it is",
                    bad.line,
                    path.display(),
                    bad.why
                ),
            )
        })?;
        let is_header = |r: &Value| r.get("type").and_then(Value::as_str) == Some("session");
        if !parsed.records.first().is_some_and(is_header) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} does not start with a session header; the session was left as it is",
                    path.display()
                ),
            ));
        }

        let mut notice = None;
        if let Some(torn) = &parsed.torn {
            file.set_len(parsed.good_end as u64)?;
            file.sync_data()?;
            notice = Some(format!(
                "The last line of session {id} was cut short (a write interrupted, as by a crash) and was dropped: {} bytes at line {}. The {} records before it are intact.",
                bytes.len() - parsed.good_end,
                torn.line,
                parsed.records.len()
            ));
        } else if parsed.needs_newline {
            // A whole last record whose newline never made it: end the line so the next record
            // starts on its own.
            file.write_all(b"\n")?;
            file.sync_data()?;
        }
        Ok(Opened {
            log: SessionLog {
                file,
                path,
                cut_back_to: None,
            },
            records: parsed.records,
            notice,
        })
    }

    /// Whether the session is in the store (false for anything that is not a session id).
    pub fn exists(&self, id: &str) -> bool {
        check_id(id).is_ok() && self.session_path(id).is_file()
    }

    /// Every stored session, newest first (by last change, then by creation): title from its last
    /// `{"type":"title"}` record (else the header's `title`, else ""), the file's modification time
    /// as `updated_ms`, and how many `"type":"message"` records it holds. Lines that do not parse
    /// are passed over here; opening the session says what is wrong with them.
    pub fn list(&self) -> io::Result<Vec<SessionSummary>> {
        let dir = self.sessions_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut summaries = Vec::new();
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(EXTENSION))
                .filter(|id| ids::is_session_id(id))
            else {
                continue; // not a session file (a stray file, an editor's backup)
            };
            match self.summary(id) {
                Ok(summary) => summaries.push(summary),
                // Deleted since the folder was read: simply no longer listed.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => {
                    let path = entry.path();
                    return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display())));
                }
            }
        }
        summaries
            .sort_by(|a, b| (b.updated_ms, b.created_ms, &b.id).cmp(&(a.updated_ms, a.created_ms, &a.id)));
        Ok(summaries)
    }
}

impl Store {
    /// A session file as it is on disk now, read without opening it for writing (a runtime may
    /// hold it): lines that do not parse are passed over. NotFound for an unknown one.
    pub fn read(&self, id: &str) -> io::Result<SessionFile> {
        check_id(id)?;
        let bytes = std::fs::read(self.session_path(id))?;
        Ok(SessionFile::read(
            bytes
                .split(|b| *b == b'\n')
                .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
                .filter(Value::is_object)
                .collect(),
        ))
    }

    /// One session's summary, as `list` gives it; NotFound for an unknown session.
    pub fn summary(&self, id: &str) -> io::Result<SessionSummary> {
        check_id(id)?;
        let path = self.session_path(id);
        let bytes = std::fs::read(&path)?;
        let modified = std::fs::metadata(&path)?.modified()?;
        Ok(summarize(id, &bytes, millis_since_epoch(modified)))
    }
}

fn millis_since_epoch(at: std::time::SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The records of a session file, and where its good part ends.
struct Parsed {
    records: Vec<Value>,
    /// Byte offset just past the last good line (its newline included).
    good_end: usize,
    /// The last line, when it does not parse.
    torn: Option<BadLine>,
    /// The last line parsed but has no newline after it.
    needs_newline: bool,
}

struct BadLine {
    line: usize,
    why: String,
}

/// Splits the file into lines and parses each as one JSON object. Blank lines are passed over.
/// An unreadable line with nothing but blank lines after it is `torn`; one with records after it
/// is the error.
fn parse_lines(bytes: &[u8]) -> Result<Parsed, BadLine> {
    let mut parsed = Parsed {
        records: Vec::new(),
        good_end: 0,
        torn: None,
        needs_newline: false,
    };
    let mut start = 0;
    let mut line = 0;
    while start < bytes.len() {
        line += 1;
        let rest = &bytes[start..];
        let (text, next, has_newline) = match rest.iter().position(|b| *b == b'\n') {
            Some(i) => (&rest[..i], start + i + 1, true),
            None => (rest, bytes.len(), false),
        };
        if is_blank(text) {
            start = next;
            parsed.good_end = next;
            continue;
        }
        let why = match serde_json::from_slice::<Value>(text) {
            Ok(record) if record.is_object() => {
                parsed.records.push(record);
                parsed.good_end = next;
                parsed.needs_newline = !has_newline;
                start = next;
                continue;
            }
            Ok(_) => "a JSON value that is not an object".to_string(),
            Err(e) => e.to_string(),
        };
        let bad = BadLine { line, why };
        if is_blank(&bytes[next..]) {
            parsed.torn = Some(bad);
            return Ok(parsed);
        }
        return Err(bad);
    }
    Ok(parsed)
}

fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// The few fields of a record `list` looks at; the rest of the line is skipped unparsed into
/// values, which keeps listing many long sessions quick.
#[derive(Deserialize)]
struct Glance {
    #[serde(rename = "type")]
    kind: Option<String>,
    title: Option<Value>,
    cwd: Option<Value>,
    created_ms: Option<Value>,
    given: Option<Value>,
}

fn summarize(id: &str, bytes: &[u8], updated_ms: u64) -> SessionSummary {
    let mut summary = SessionSummary {
        id: id.to_string(),
        title: String::new(),
        cwd: String::new(),
        // The id carries its creation time: the fallback for a header without created_ms.
        created_ms: ids::created_ms(id).unwrap_or(0),
        updated_ms,
        messages: 0,
        given: false,
    };
    let mut seen_header = false;
    for text in bytes.split(|b| *b == b'\n') {
        if is_blank(text) {
            continue;
        }
        let Ok(glance) = serde_json::from_slice::<Glance>(text) else {
            continue;
        };
        let title = glance.title.as_ref().and_then(Value::as_str);
        match glance.kind.as_deref() {
            Some("message") => summary.messages += 1,
            Some("given") => summary.given = true,
            Some("title") => {
                if let Some(title) = title {
                    summary.title = title.to_string();
                }
            }
            Some("session") if !seen_header => {
                seen_header = true;
                if let Some(title) = title {
                    summary.title = title.to_string();
                }
                if let Some(cwd) = glance.cwd.as_ref().and_then(Value::as_str) {
                    summary.cwd = cwd.to_string();
                }
                if let Some(created) = glance.created_ms.as_ref().and_then(Value::as_u64) {
                    summary.created_ms = created;
                }
                summary.given |= glance.given.as_ref().and_then(Value::as_bool) == Some(true);
            }
            _ => {}
        }
    }
    summary
}

#[cfg(test)]
mod tests;
