//! The one write path for `config.yaml`: the CLI, the tray and the window all change settings here.
//!
//! Edits are lossless: the text is edited in place with `yaml-edit`, so comments, blank lines, key
//! order, unknown keys and formatting stay as they were outside the edited values. Every change is
//! first planned on the parsed YAML value, which decides what changes and refuses what cannot be
//! done; the text edit then carries out that plan, and its result must parse to exactly the planned
//! value (nothing else moved) before it is written.

use std::path::{Path, PathBuf};

use serde_norway::{Mapping as ValueMap, Value};
use yaml_edit::{Document, Mapping, Sequence};

use super::{KeepAwakeSetting, Settings, SettingsError, atomic_write, parse};
use crate::paths::{Dirs, expand_tilde};
use crate::policy::Mode;

/// One change to the global config. A list of them is applied together: all or none.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    RemoteEnabled(bool),
    /// A folder remote work may use; `~` is expanded and the folder must exist. Stored absolute.
    AddRoot(PathBuf),
    RemoveRoot(PathBuf),
    MaxMode(Mode),
    RequireTrust(bool),
    Terminal(bool),
    TerminalIntegration(bool),
    Scheduled(bool),
    KeepAwake(KeepAwakeSetting),
    /// Trust a project folder; `~` is expanded and the folder must exist. Stored absolute.
    Trust(PathBuf),
    Untrust(PathBuf),
    /// `server: { url, connection }`; a `None` connection removes the key.
    SetServer {
        url: String,
        connection: Option<String>,
    },
    ClearServer,
    /// Sets the top-level `embedding:` unless one is already set (missing, null or empty is unset).
    SetEmbeddingIfUnset(String),
}

/// Applies `changes` to the global config of the device in `dirs` and returns what it now holds.
pub fn apply(dirs: &Dirs, changes: &[Change]) -> Result<Settings, SettingsError> {
    apply_to(&dirs.config_file(), &dirs.home, changes)
}

/// Applies `changes` to the config file at `path` (created, with its folder, when missing) of the
/// person whose home is `home` (what `~` means), and returns what it now holds. Nothing is written
/// when an existing file is invalid, when a change is refused, or when the changes leave the
/// settings as they were.
pub fn apply_to(path: &Path, home: &Path, changes: &[Change]) -> Result<Settings, SettingsError> {
    apply_with_hook(path, home, changes, &mut || {})
}

fn apply_with_hook(
    path: &Path,
    home: &Path,
    changes: &[Change],
    before_commit: &mut dyn FnMut(),
) -> Result<Settings, SettingsError> {
    let ops = changes
        .iter()
        .map(|c| Op::resolve(c, home))
        .collect::<Result<Vec<_>, _>>()?;
    let text = atomic_write::update(path, &mut |old| edit_text(path, home, old, &ops), before_commit)?;
    let mut settings = parse(path, &text)?;
    settings.home = home.to_path_buf();
    Ok(settings)
}

/// What [`apply_to`] would write, computed in memory from `old` (the `settings` fuzz target: no file,
/// no fsync). The same validation, plan, edit and check as a real write.
#[cfg(feature = "fuzzing")]
pub fn edit_in_memory(
    path: &Path,
    home: &Path,
    old: &str,
    changes: &[Change],
) -> Result<String, SettingsError> {
    let ops = changes
        .iter()
        .map(|c| Op::resolve(c, home))
        .collect::<Result<Vec<_>, _>>()?;
    edit_text(path, home, old, &ops)
}

/// A [`Change`] with its paths resolved against the file system (once, before any reading).
#[derive(Debug)]
enum Op {
    SetRemote(&'static str, Scalar),
    Add(List, PathBuf),
    Remove {
        list: List,
        given: PathBuf,
        candidates: Vec<PathBuf>,
    },
    SetServer {
        url: String,
        connection: Option<String>,
    },
    ClearServer,
    EmbeddingIfUnset(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Bool(bool),
    Str(String),
}

impl Scalar {
    fn to_value(&self) -> Value {
        match self {
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Str(s) => Value::String(s.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum List {
    Roots,
    Trusted,
}

impl List {
    /// Where the list lives: (parent key, key).
    fn place(self) -> (Option<&'static str>, &'static str) {
        match self {
            List::Roots => (Some("remote"), "roots"),
            List::Trusted => (None, "trusted"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            List::Roots => "remote.roots",
            List::Trusted => "trusted",
        }
    }
}

impl Op {
    fn resolve(change: &Change, home: &Path) -> Result<Op, SettingsError> {
        let remote = |key, value| Ok(Op::SetRemote(key, value));
        match change {
            Change::RemoteEnabled(b) => remote("enabled", Scalar::Bool(*b)),
            Change::MaxMode(mode) => remote("max_mode", Scalar::Str(mode.as_str().to_owned())),
            Change::RequireTrust(b) => remote("require_trust", Scalar::Bool(*b)),
            Change::Terminal(b) => remote("terminal", Scalar::Bool(*b)),
            Change::TerminalIntegration(b) => remote("terminal_integration", Scalar::Bool(*b)),
            Change::Scheduled(b) => remote("scheduled", Scalar::Bool(*b)),
            Change::KeepAwake(k) => remote("keep_awake", Scalar::Str(k.as_str().to_owned())),
            Change::AddRoot(p) => Ok(Op::Add(List::Roots, existing_folder(p, home, "a remote root")?)),
            Change::Trust(p) => Ok(Op::Add(
                List::Trusted,
                existing_folder(p, home, "a trusted project")?,
            )),
            Change::RemoveRoot(p) => Ok(removal(List::Roots, p, home)),
            Change::Untrust(p) => Ok(removal(List::Trusted, p, home)),
            Change::SetServer { url, connection } => {
                if url.trim().is_empty() {
                    return Err(SettingsError::Refused(
                        "The server URL is empty; give the instance's URL.".into(),
                    ));
                }
                Ok(Op::SetServer {
                    url: url.clone(),
                    connection: connection.clone(),
                })
            }
            Change::ClearServer => Ok(Op::ClearServer),
            Change::SetEmbeddingIfUnset(model) => {
                if model.trim().is_empty() {
                    return Err(SettingsError::Refused(
                        "The embedding model is empty; give it as <connection>/<id>.".into(),
                    ));
                }
                Ok(Op::EmbeddingIfUnset(model.clone()))
            }
        }
    }
}

/// `~`-expands and resolves `given` (symlinks followed) to an existing folder, as a UTF-8 path.
fn existing_folder(given: &Path, home: &Path, what: &str) -> Result<PathBuf, SettingsError> {
    let expanded = expand_tilde(&given.to_string_lossy(), home);
    let resolved = crate::canonical::canonicalize(&expanded).map_err(|e| {
        SettingsError::Refused(if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "{} does not exist; give an existing folder to add as {what}.",
                given.display()
            )
        } else {
            format!(
                "Cannot resolve {} ({e}); give a folder you can open to add as {what}.",
                given.display()
            )
        })
    })?;
    if !resolved.is_dir() {
        return Err(SettingsError::Refused(format!(
            "{} is not a folder (it is {}); give a folder to add as {what}.",
            given.display(),
            resolved.display()
        )));
    }
    if resolved.to_str().is_none() {
        return Err(SettingsError::Refused(format!(
            "{} cannot be written to config.yaml because its name is not valid UTF-8; rename it or pick \
             another folder.",
            resolved.display()
        )));
    }
    Ok(resolved)
}

fn removal(list: List, given: &Path, home: &Path) -> Op {
    let expanded = expand_tilde(&given.to_string_lossy(), home);
    let mut candidates = vec![given.to_owned(), expanded.clone()];
    candidates.extend(crate::canonical::canonicalize(&expanded).ok());
    Op::Remove {
        list,
        given: given.to_owned(),
        candidates,
    }
}

/// Whether a listed entry names `folder` (an existing, canonical folder).
fn names_folder(entry: &str, folder: &Path, home: &Path) -> bool {
    let expanded = expand_tilde(entry, home);
    expanded == folder || crate::canonical::canonicalize(&expanded).is_ok_and(|c| c == folder)
}

/// Whether a listed entry is the one a removal asked for: as written, `~`-expanded or resolved.
fn names_any(entry: &str, candidates: &[PathBuf], home: &Path) -> bool {
    let expanded = expand_tilde(entry, home);
    let resolved = crate::canonical::canonicalize(&expanded).ok();
    candidates
        .iter()
        .any(|c| Path::new(entry) == c || expanded == *c || resolved.as_deref() == Some(c))
}

/// One step of the text edit, decided while planning on the parsed value.
#[derive(Debug)]
enum TextEdit {
    Set {
        parent: Option<&'static str>,
        key: &'static str,
        value: Scalar,
    },
    RemoveKey {
        parent: Option<&'static str>,
        key: &'static str,
    },
    Push {
        list: List,
        entry: String,
    },
    /// Indices into the list as it is at this step, in ascending order.
    RemoveAt {
        list: List,
        indices: Vec<usize>,
    },
}

/// The whole edit of one text: validate, plan, edit, verify. Returns `old` itself when nothing
/// changes.
fn edit_text(path: &Path, home: &Path, old: &str, ops: &[Op]) -> Result<String, SettingsError> {
    parse(path, old)?;
    let before = to_value(old).map_err(|e| invalid(path, &e))?;
    let mut planned = before.clone();
    let mut edits = Vec::new();
    for op in ops {
        plan(op, home, &mut planned, &mut edits)?;
    }
    if edits.is_empty() {
        return Ok(old.to_owned());
    }
    let failed = |message: String| SettingsError::EditFailed {
        path: path.to_owned(),
        message,
    };
    let new = edit_yaml(old, before.is_null(), &edits).map_err(failed)?;
    let after = to_value(&new).map_err(|e| failed(format!("the edited text does not parse: {e}")))?;
    if after != planned {
        return Err(failed("the edited text does not read back as intended".into()));
    }
    parse(path, &new).map_err(|e| failed(e.to_string()))?;
    Ok(new)
}

fn to_value(text: &str) -> Result<Value, serde_norway::Error> {
    if text.trim().is_empty() {
        Ok(Value::Null)
    } else {
        serde_norway::from_str(text)
    }
}

fn invalid(path: &Path, e: &serde_norway::Error) -> SettingsError {
    SettingsError::Invalid {
        path: path.to_owned(),
        line: e.location().map(|l| l.line()),
        message: e.to_string(),
    }
}

/// Applies `op` to the parsed value and records the matching text edits. Only real changes are
/// recorded, so untouched values keep their exact spelling.
fn plan(op: &Op, home: &Path, value: &mut Value, edits: &mut Vec<TextEdit>) -> Result<(), SettingsError> {
    let top = as_map(value);
    match op {
        Op::SetRemote(key, scalar) => set(top, Some("remote"), key, scalar, edits),
        Op::SetServer { url, connection } => {
            set(top, Some("server"), "url", &Scalar::Str(url.clone()), edits);
            match connection {
                Some(c) => set(top, Some("server"), "connection", &Scalar::Str(c.clone()), edits),
                None => {
                    let server = top.get_mut("server").map(as_map);
                    if server.and_then(|s| s.remove("connection")).is_some() {
                        edits.push(TextEdit::RemoveKey {
                            parent: Some("server"),
                            key: "connection",
                        });
                    }
                }
            }
        }
        Op::ClearServer => {
            if top.remove("server").is_some() {
                edits.push(TextEdit::RemoveKey {
                    parent: None,
                    key: "server",
                });
            }
        }
        Op::EmbeddingIfUnset(model) => {
            // Through tags, as the read side looks (`embedding: !tag` is no embedding there).
            let unset = match top.get_mut("embedding").map(|v| &*untagged(v)) {
                None | Some(Value::Null) => true,
                Some(Value::String(s)) => s.is_empty(),
                Some(_) => false,
            };
            if unset {
                set(top, None, "embedding", &Scalar::Str(model.clone()), edits);
            }
        }
        Op::Add(list, folder) => {
            let entries = list_mut(top, *list);
            let present = entries
                .iter()
                .any(|e| e.as_str().is_some_and(|e| names_folder(e, folder, home)));
            if !present {
                let entry = folder.to_string_lossy().into_owned();
                entries.push(Value::String(entry.clone()));
                edits.push(TextEdit::Push { list: *list, entry });
            }
        }
        Op::Remove {
            list,
            given,
            candidates,
        } => {
            let entries = list_mut(top, *list);
            let indices: Vec<usize> = (0..entries.len())
                .filter(|&i| {
                    entries[i]
                        .as_str()
                        .is_some_and(|e| names_any(e, candidates, home))
                })
                .collect();
            if indices.is_empty() {
                let listed: Vec<&str> = entries.iter().filter_map(Value::as_str).collect();
                return Err(SettingsError::Refused(if listed.is_empty() {
                    format!(
                        "{} is not listed in {}: the list is empty.",
                        given.display(),
                        list.name()
                    )
                } else {
                    format!(
                        "{} is not listed in {}; the list holds: {}.",
                        given.display(),
                        list.name(),
                        listed.join(", ")
                    )
                }));
            }
            for &i in indices.iter().rev() {
                entries.remove(i);
            }
            edits.push(TextEdit::RemoveAt { list: *list, indices });
        }
    }
    Ok(())
}

/// The value under its tags: the read side takes a tagged map or list (`! {…}`, `!!map`, a tagged
/// document) as the map or list itself, so it is edited as one (`is_mapping` looks through tags,
/// a `match` does not).
fn untagged(value: &mut Value) -> &mut Value {
    let mut value = value;
    while let Value::Tagged(tagged) = value {
        value = &mut tagged.value;
    }
    value
}

/// The map in `value`, making a null (absent block) an empty map. The read side has already
/// checked that the keys this module edits hold maps, lists or nothing.
fn as_map(value: &mut Value) -> &mut ValueMap {
    let value = untagged(value);
    if !value.is_mapping() {
        *value = Value::Mapping(ValueMap::new());
    }
    match value {
        Value::Mapping(map) => map,
        _ => unreachable!("just made a mapping"),
    }
}

fn child_map<'a>(top: &'a mut ValueMap, parent: Option<&'static str>) -> &'a mut ValueMap {
    match parent {
        None => top,
        Some(key) => as_map(top.entry(Value::from(key)).or_insert(Value::Null)),
    }
}

fn set(
    top: &mut ValueMap,
    parent: Option<&'static str>,
    key: &'static str,
    scalar: &Scalar,
    edits: &mut Vec<TextEdit>,
) {
    let map = child_map(top, parent);
    let new = scalar.to_value();
    if map.get(key) != Some(&new) {
        map.insert(Value::from(key), new);
        edits.push(TextEdit::Set {
            parent,
            key,
            value: scalar.clone(),
        });
    }
}

fn list_mut(top: &mut ValueMap, list: List) -> &mut Vec<Value> {
    let (parent, key) = list.place();
    let value = child_map(top, parent)
        .entry(Value::from(key))
        .or_insert(Value::Null);
    let value = untagged(value);
    if !value.is_sequence() {
        *value = Value::Sequence(Vec::new());
    }
    match value {
        Value::Sequence(entries) => entries,
        _ => unreachable!("just made a sequence"),
    }
}

/// Carries out the planned edits on the text. A file that holds no document yet (empty, only
/// comments) keeps its comments and gets the new keys after them.
fn edit_yaml(old: &str, empty_document: bool, edits: &[TextEdit]) -> Result<String, String> {
    let doc = if empty_document {
        Document::new_mapping()
    } else {
        old.parse::<Document>().map_err(|e| e.to_string())?
    };
    let top = doc.as_mapping().ok_or("the top level is not a map")?;
    for edit in edits {
        match edit {
            TextEdit::Set { parent, key, value } => {
                let map = yaml_child_map(&top, *parent)?;
                match value {
                    Scalar::Bool(b) => map.set(*key, *b),
                    Scalar::Str(s) => map.set(*key, s.as_str()),
                }
            }
            TextEdit::RemoveKey { parent, key } => {
                let map = yaml_child_map(&top, *parent)?;
                map.remove(*key).ok_or_else(|| format!("`{key}` was not found"))?;
            }
            TextEdit::Push { list, entry } => yaml_list(&top, *list)?.push(entry.as_str()),
            TextEdit::RemoveAt { list, indices } => {
                let seq = yaml_list(&top, *list)?;
                for &i in indices.iter().rev() {
                    seq.remove(i)
                        .ok_or_else(|| format!("{} has no item {i}", list.name()))?;
                }
            }
        }
    }
    if !empty_document {
        return Ok(doc.to_string());
    }
    // Keep the comments, blank lines and directives of a document-less file; drop a bare `~`/`null`.
    let mut text: String = old
        .lines()
        .filter(|line| {
            let t = line.trim();
            t.is_empty() || t.starts_with('#') || t.starts_with('%') || t == "---"
        })
        .map(|line| format!("{line}\n"))
        .collect();
    text.push_str(&doc.to_string());
    Ok(text)
}

/// The map under `parent` (or the top level), created as a block when it is missing or empty.
fn yaml_child_map(top: &Mapping, parent: Option<&'static str>) -> Result<Mapping, String> {
    let Some(key) = parent else { return Ok(top.clone()) };
    if let Some(map) = top.get_mapping(key) {
        return Ok(map);
    }
    top.set(key, Mapping::new());
    top.get_mapping(key)
        .ok_or_else(|| format!("could not add `{key}:`"))
}

fn yaml_list(top: &Mapping, list: List) -> Result<Sequence, String> {
    let (parent, key) = list.place();
    let map = yaml_child_map(top, parent)?;
    if let Some(seq) = map.get_sequence(key) {
        return Ok(seq);
    }
    map.set(key, Sequence::new());
    map.get_sequence(key)
        .ok_or_else(|| format!("could not add `{}:`", list.name()))
}

#[cfg(all(test, unix))]
#[path = "edit_tests/mod.rs"]
mod tests;
