//! `@path` mentions in what the person typed (docs/protocol.md, session/prompt): read as the TUI's picker
//! writes them — a space or a `#` in a name escaped with a backslash (`@my\ notes.md`,
//! `@a\#b.md`), an unescaped `#` with digits a line range (`@c.md#10-20`), `@dir/` a listing — and
//! attached only when the path, symlinks followed, is inside the session's project and the roots and
//! is not protected. A file is read through the tools' gate ([`ReadGate`]), checked again on what was
//! opened. Any other `@word` stays plain text and nothing is read for it.
//!
//! Only ever applied to the person's own text blocks: never to a command's or skill's body.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::decisions::Decisions;
use crate::policy::protected::Protected;
use crate::policy::tools::{Place, place_of};
use crate::tools::read_gate::{self, ReadGate, Refusal};
use crate::tools::{relative_text, walker};

/// One `@` mention as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The names to try, unescaped, in order: the whole word, then without punctuation that
    /// ended the sentence (`see @notes.md.`).
    pub candidates: Vec<String>,
    /// First and last line, 1-based, inclusive.
    pub range: Option<(usize, usize)>,
}

/// Characters that end a sentence rather than a name, when not escaped.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '"', '\''];

/// The mentions in `text`: an `@` at the start or after white space, up to the next unescaped
/// white space.
pub fn mentions(text: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut previous: Option<char> = None;
    while let Some((_, c)) = chars.next() {
        let starts = c == '@' && previous.is_none_or(char::is_whitespace);
        previous = Some(c);
        if !starts {
            continue;
        }
        // (character, escaped)
        let mut word: Vec<(char, bool)> = Vec::new();
        while let Some(&(_, c)) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            chars.next();
            previous = Some(c);
            if c == '\\' {
                match chars.peek() {
                    Some(&(_, next)) => {
                        chars.next();
                        previous = Some(next);
                        word.push((next, true));
                    }
                    None => word.push((c, false)),
                }
            } else {
                word.push((c, false));
            }
        }
        if let Some(mention) = read_word(&word) {
            out.push(mention);
        }
    }
    out
}

fn read_word(word: &[(char, bool)]) -> Option<Mention> {
    let text = |chars: &[(char, bool)]| chars.iter().map(|(c, _)| *c).collect::<String>();
    let mut end = word.len();
    while end > 0 && !word[end - 1].1 && TRAILING.contains(&word[end - 1].0) {
        end -= 1;
    }
    let body = &word[..end];
    // An unescaped `#` followed only by a range: the path is what comes before it.
    if let Some(hash) = body.iter().rposition(|&(c, escaped)| c == '#' && !escaped)
        && let Some(range) = line_range(&text(&body[hash + 1..]))
    {
        let path = text(&body[..hash]);
        return (!path.is_empty()).then(|| Mention {
            candidates: vec![path],
            range: Some(range),
        });
    }
    let whole = text(word);
    let trimmed = text(body);
    if whole.is_empty() {
        return None;
    }
    let mut candidates = vec![whole.clone()];
    if trimmed != whole && !trimmed.is_empty() {
        candidates.push(trimmed);
    }
    Some(Mention {
        candidates,
        range: None,
    })
}

/// `10-20` or `10` (that one line); the bounds in either order.
fn line_range(text: &str) -> Option<(usize, usize)> {
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<usize>().ok())
            .flatten()
            .filter(|n| *n > 0)
    };
    let (a, b) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => (number(text)?, number(text)?),
    };
    Some((a.min(b), a.max(b)))
}

/// Where mentions may be read from: the session's folder (what they are relative to), the roots,
/// the home folder; all resolved.
pub struct Scope<'a> {
    pub root: &'a Path,
    pub roots: &'a [PathBuf],
    pub protected: &'a Protected,
    /// How much is attached: the mentions', the prompt's and the read tool's numbers.
    pub decisions: &'a Decisions,
}

/// One mention attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// Symlinks followed.
    pub resolved: PathBuf,
    /// What the model is given.
    pub text: String,
    /// An image mentioned: its type and bytes, which go with the prompt as an attachment does
    /// (an image to a model that takes images, a line saying it is there to any other).
    pub image: Option<(&'static str, Vec<u8>)>,
}

/// Reads what the mentions in `typed` (the person's text blocks) name, within `scope`; each file
/// once, at most `files.mention_max_files`, and no more text in all than a prompt may hold.
/// Blocking I/O.
pub fn attach(typed: &[&str], scope: &Scope) -> Vec<Attached> {
    let numbers = &scope.decisions.files;
    let budget = scope.decisions.prompt.max_prompt_bytes;
    let mut out: Vec<Attached> = Vec::new();
    let mut seen: Vec<(PathBuf, Option<(usize, usize)>)> = Vec::new();
    let mut total = 0;
    let within = [scope.root.to_path_buf()];
    let gate = ReadGate::new(&within, scope.protected);
    for mention in typed.iter().flat_map(|t| mentions(t)) {
        if out.len() >= numbers.mention_max_files {
            break;
        }
        let Some((path, resolved)) = locate(&mention, scope) else {
            continue;
        };
        let key = (resolved.clone(), mention.range);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let shown = relative_text(&resolved, scope.root);
        if let Some(image) = image(
            &gate,
            &path,
            &resolved,
            &shown,
            budget.saturating_sub(total),
            scope.decisions,
        ) {
            total += image.image.as_ref().map_or(0, |(_, bytes)| bytes.len());
            out.push(image);
            continue;
        }
        let mut text = render(&gate, &resolved, &shown, mention.range, scope);
        if total + text.len() > budget {
            text = format!(
                "<file path=\"{shown}\">(not attached: the prompt's attachments would pass {budget} bytes; read it with the read tool)</file>"
            );
        }
        total += text.len();
        out.push(Attached {
            resolved,
            text,
            image: None,
        });
    }
    out
}

/// The first candidate that exists, as written (joined to the folder) and resolved; `None` when
/// none does, or when the one that does is not inside the project and the roots, or is protected
/// by its name or by where it leads.
fn locate(mention: &Mention, scope: &Scope) -> Option<(PathBuf, PathBuf)> {
    for candidate in &mention.candidates {
        let written = match candidate.strip_prefix("~/") {
            Some(rest) => scope.protected.home().join(rest),
            None => scope.root.join(candidate),
        };
        let Ok(resolved) = crate::canonical::canonicalize(&written) else {
            continue;
        };
        let inside = matches!(
            place_of(&resolved, scope.root, scope.roots, scope.protected),
            Place::Project | Place::AgentFolder
        );
        let protected =
            scope.protected.protects(&written) || read_gate::check_path(&resolved, scope.protected).is_err();
        return (inside && !protected).then_some((written, resolved));
    }
    None
}

fn render(
    gate: &ReadGate,
    resolved: &Path,
    shown: &str,
    range: Option<(usize, usize)>,
    scope: &Scope,
) -> String {
    let metadata = match std::fs::metadata(resolved) {
        Ok(m) => m,
        Err(e) => return format!("<file path=\"{shown}\">(cannot be read: {e})</file>"),
    };
    if metadata.is_dir() {
        return listing(resolved, shown, scope);
    }
    let lines = range
        .map(|(a, b)| format!(" lines=\"{a}-{b}\""))
        .unwrap_or_default();
    let body = match numbered(gate, resolved, range, scope.decisions) {
        Ok(text) => text,
        Err(e) => format!("(cannot be read: {e})"),
    };
    format!("<file path=\"{shown}\"{lines}>\n{body}\n</file>")
}

/// An image by its name: its type.
fn image_type(path: &Path) -> Option<&'static str> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// A mentioned image, read whole when it fits a prompt's block and what is left of the prompt;
/// `None` when the file is not an image (or is a folder).
fn image(
    gate: &ReadGate,
    written: &Path,
    resolved: &Path,
    shown: &str,
    left: usize,
    decisions: &Decisions,
) -> Option<Attached> {
    let mime = image_type(written)?;
    let metadata = std::fs::metadata(resolved).ok().filter(|m| m.is_file())?;
    let most = decisions.prompt.max_block_bytes.min(left) as u64;
    let size = metadata.len();
    let (text, image) = if size > most {
        let why = format!("(an image of {size} bytes: more than this prompt can take, {most}; not attached)");
        (format!("<file path=\"{shown}\">{why}</file>"), None)
    } else {
        match gate.read(resolved, most) {
            Ok(bytes) => (
                format!("<file path=\"{shown}\">(an image, {size} bytes: attached to this prompt)</file>"),
                Some((mime, bytes)),
            ),
            Err(e) => (
                format!("<file path=\"{shown}\">(cannot be read: {e})</file>"),
                None,
            ),
        }
    };
    Some(Attached {
        resolved: resolved.to_path_buf(),
        text,
        image,
    })
}

/// The file's lines numbered as the read tool numbers them (`cat -n`), within the range, at most
/// `tools.read_default_lines` of them and `files.mention_max_bytes` of text. Reading stops at the
/// limit, so a huge file costs only what is attached.
fn numbered(
    gate: &ReadGate,
    path: &Path,
    range: Option<(usize, usize)>,
    decisions: &Decisions,
) -> std::io::Result<String> {
    let max_lines = decisions.tools.read_default_lines;
    let max_bytes = decisions.files.mention_max_bytes;
    let mut file = match gate.open(path) {
        Ok(opened) => opened.file,
        Err(Refusal::Unreadable { error, .. }) => return Err(error),
        Err(refusal) => return Err(std::io::Error::other(refusal)),
    };
    let mut head = Vec::new();
    (&mut file)
        .take(decisions.tools.binary_check_bytes as u64)
        .read_to_end(&mut head)?;
    if head.contains(&0) {
        let size = file.metadata().map(|m| m.len()).unwrap_or_default();
        return Ok(format!("(binary file, {size} bytes)"));
    }
    let mut reader = BufReader::new(std::io::Cursor::new(head).chain(file));
    let (first, last) = range.unwrap_or((1, usize::MAX));
    let mut out = String::new();
    let mut line = Vec::new();
    let (mut number, mut attached) = (0usize, 0usize);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        number += 1;
        if number < first {
            continue;
        }
        if number > last {
            break;
        }
        if attached >= max_lines || out.len() >= max_bytes {
            let _ = write!(
                out,
                "\n(Lines {first}–{} attached; the file goes on: read it from line {number}.)",
                number - 1
            );
            return Ok(out);
        }
        let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if attached > 0 {
            out.push('\n');
        }
        let text = String::from_utf8_lossy(bytes);
        let room = max_bytes.saturating_sub(out.len());
        if text.len() > room {
            // One line longer than what is left (minified code): its start, and where to read on.
            let mut cut = room;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let _ = write!(
                out,
                "{number:>6}\t{}\n(Line {number} cut after {cut} bytes; the file goes on: read it from line {number}.)",
                &text[..cut]
            );
            return Ok(out);
        }
        let _ = write!(out, "{number:>6}\t{text}");
        attached += 1;
    }
    if number == 0 {
        return Ok("(empty file)".into());
    }
    if attached == 0 {
        return Ok(format!(
            "(The file has {number} lines: line {first} is past its end.)"
        ));
    }
    Ok(out)
}

/// One folder's entries, as `ls` lists them: sorted, folders with a trailing `/`, what
/// `.gitignore` hides and protected entries left out.
fn listing(folder: &Path, shown: &str, scope: &Scope) -> String {
    let max = scope.decisions.tools.list_max_entries;
    let pinned = match crate::tools::opened::Pinned::open(folder) {
        Ok(pinned) => pinned,
        Err(e) => return format!("<folder path=\"{shown}\">(cannot be read: {e})</folder>"),
    };
    let mut entries: Vec<String> = walker(folder, scope.protected)
        .max_depth(Some(1))
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.depth() == 1 && pinned.holds(Path::new(e.file_name())))
        .map(|e| {
            let mut name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_dir() {
                name.push('/');
            }
            name
        })
        .collect();
    entries.sort();
    let total = entries.len();
    entries.truncate(max);
    let mut body = if entries.is_empty() {
        "(empty folder)".to_string()
    } else {
        entries.join("\n")
    };
    if total > max {
        let _ = write!(body, "\n({max} of {total} entries shown.)");
    }
    let shown = if shown.is_empty() { "." } else { shown };
    format!(
        "<folder path=\"{}/\">\n{body}\n</folder>",
        shown.trim_end_matches('/')
    )
}

/// The attachments as one text, each after a blank line: the prompt's second part for the model.
pub fn attachments_text(attached: &[Attached]) -> String {
    attached
        .iter()
        .map(|a| a.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests;
