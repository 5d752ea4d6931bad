//! Reading a tool's arguments as the model wrote them, with errors the model can act on. Models
//! sometimes quote numbers and booleans (`"offset": "10"`), so those are accepted too; `null` is
//! read as "not given".

use serde_json::{Map, Value};

use super::ToolError;

/// The arguments text as a JSON object. An empty text is no arguments at all (some models send
/// `""` for a call without any).
pub fn parse_json(tool: &str, text: &str) -> Result<Value, ToolError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text)
        .map_err(|e| ToolError::BadArguments(format!("The arguments of {tool} are not valid JSON: {e}.")))
}

/// Linux's `PATH_MAX`: no longer path names a file.
const MAX_PATH_BYTES: usize = 4096;

pub struct Arguments<'a> {
    tool: &'static str,
    object: &'a Map<String, Value>,
}

impl<'a> Arguments<'a> {
    pub fn of(tool: &'static str, value: &'a Value) -> Result<Self, ToolError> {
        match value {
            Value::Object(object) => Ok(Self { tool, object }),
            other => Err(ToolError::BadArguments(format!(
                "The arguments of {tool} must be a JSON object, not {}.",
                json_kind(other)
            ))),
        }
    }

    pub fn tool(&self) -> &'static str {
        self.tool
    }

    fn given(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|v| !v.is_null())
    }

    pub fn string(&self, key: &str) -> Result<&'a str, ToolError> {
        self.optional_string(key)?
            .ok_or_else(|| self.bad(format!("{} needs `{key}` (a string).", self.tool)))
    }

    pub fn optional_string(&self, key: &str) -> Result<Option<&'a str>, ToolError> {
        match self.given(key) {
            None => Ok(None),
            // No file has a NUL in its name; a path longer than any file system takes names none.
            Some(Value::String(s)) if key == "path" && s.contains('\0') => Err(self.bad(format!(
                "{}'s `path` has a NUL byte, which no file name has.",
                self.tool
            ))),
            Some(Value::String(s)) if key == "path" && s.len() > MAX_PATH_BYTES => Err(self.bad(format!(
                "{}'s `path` is {} bytes long; a path has at most {MAX_PATH_BYTES}.",
                self.tool,
                s.len()
            ))),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.bad(format!(
                "{}'s `{key}` must be a string, not {}.",
                self.tool,
                json_kind(other)
            ))),
        }
    }

    /// A whole number of zero or more.
    pub fn optional_count(&self, key: &str) -> Result<Option<usize>, ToolError> {
        let number = match self.given(key) {
            None => return Ok(None),
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
            Some(_) => None,
        };
        number
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                self.bad(format!(
                    "{}'s `{key}` must be a whole number of 0 or more.",
                    self.tool
                ))
            })
    }

    pub fn optional_flag(&self, key: &str) -> Result<Option<bool>, ToolError> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(_) => Err(self.bad(format!("{}'s `{key}` must be true or false.", self.tool))),
        }
    }

    pub fn bad(&self, sentence: String) -> ToolError {
        ToolError::BadArguments(sentence)
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
