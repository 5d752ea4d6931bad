//! The values a line gives its own variables. `f=~/.ssh/id_rsa; cat $f` and `a=.e; cat ${a}nv` read
//! a protected file through a variable: the judge puts a value the line assigns back where the
//! variable is used. A variable the line sets to something only known when it runs, or to
//! different values, is "set by the line": a path built from it is not placed, and a reading
//! command asks. A `for` variable stands for each word of its list (judged as reads where the
//! loop is): used whole (`cat "$f"`) it is one of them; built into a longer word it is set by the
//! line. Variables the line does not set (the environment's, `$1`, `read`'s) stay as they were:
//! only known when the line runs.

use std::collections::HashMap;

/// Stands in for text only known when the line runs: it matches no command name or path.
pub const UNKNOWN: char = '\u{FFFD}';

/// In a word's text: part of the word comes from a variable the line set (`places` asks).
pub const SET_BY_LINE: char = '\u{FFFC}';
/// In a word's text while it is read: a `for` variable, which is one whole word of its list.
pub const ONE_OF_LIST: char = '\u{FFF9}';

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// One value, known from the line.
    Known(String),
    /// A `for` variable: one of its list's words.
    OneOfList,
    /// Set by the line to what is only known when it runs, or to different values.
    SetByLine,
}

#[derive(Debug, Clone, Default)]
pub struct Vars(HashMap<String, Value>);

impl Vars {
    /// `name=value`; `None`: a value only known when it runs.
    pub fn assign(&mut self, name: &str, value: Option<&str>) {
        let value = match value {
            Some(v) if !v.contains([SET_BY_LINE, ONE_OF_LIST]) => Value::Known(v.to_string()),
            _ => Value::SetByLine,
        };
        let merged = match self.0.get(name) {
            Some(old) if *old != value => Value::SetByLine,
            _ => value,
        };
        self.0.insert(name.to_string(), merged);
    }

    /// `for name in …`: one word, known, is that word; otherwise one of the list.
    pub fn loop_over(&mut self, name: &str, only: Option<&str>) {
        match only {
            Some(word) => self.assign(name, Some(word)),
            None => {
                let merged = match self.0.get(name) {
                    Some(Value::OneOfList) | None => Value::OneOfList,
                    Some(_) => Value::SetByLine,
                };
                self.0.insert(name.to_string(), merged);
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// Whether `text` (an expansion's source) names a variable the line set.
    pub fn mentioned_in(&self, text: &str) -> bool {
        self.0.keys().any(|name| {
            text.match_indices(name.as_str()).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + name.len()..].chars().next();
                let edge = |c: Option<char>| !c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                edge(before) && edge(after)
            })
        })
    }
}

/// A word's text once read: a `for` variable used whole is one of its list (only known when it
/// runs, as before); built into a longer word it is set by the line.
pub fn settle(text: &mut String) {
    if text.contains(ONE_OF_LIST) {
        let whole = text.chars().all(|c| c == ONE_OF_LIST);
        *text = if whole {
            UNKNOWN.to_string()
        } else {
            text.replace(ONE_OF_LIST, &SET_BY_LINE.to_string())
        };
    }
}
