//! A tool's arguments: one struct per tool, read from what the model wrote with serde, and told to
//! the model as the JSON Schema derived from that same struct, so what the model is told and what
//! the device reads cannot drift apart. Models sometimes quote numbers and booleans
//! (`"offset": "10"`), so the fields that take them read both (the [`lenient`] readers); `null` is
//! read as "not given". Every error is a sentence the model can act on.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ToolError;

/// The arguments text as a JSON object, and read into `A`. An empty text is no arguments at all
/// (some models send `""` for a call without any).
pub fn read<A: DeserializeOwned + JsonSchema>(tool: &str, text: &str) -> Result<(A, Value), ToolError> {
    let value = json_object(tool, text)?;
    let arguments = of(tool, &value)?;
    Ok((arguments, value))
}

/// The arguments text as JSON (an empty text as `{}`), not yet read into a tool's struct.
pub fn json_object(tool: &str, text: &str) -> Result<Value, ToolError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text)
        .map_err(|e| ToolError::BadArguments(format!("The arguments of {tool} are not valid JSON: {e}.")))
}

/// Arguments already parsed as JSON, read into `A`.
pub fn of<A: DeserializeOwned + JsonSchema>(tool: &str, value: &Value) -> Result<A, ToolError> {
    if !value.is_object() {
        return Err(ToolError::BadArguments(format!(
            "The arguments of {tool} must be a JSON object, not {}.",
            json_kind(value)
        )));
    }
    serde_path_to_error::deserialize(value).map_err(|error| {
        let field = error.path().to_string();
        let said = error.inner().to_string();
        ToolError::BadArguments(match said.strip_prefix("missing field `") {
            Some(rest) => {
                let missing = rest.trim_end_matches('`');
                match kind_in_schema::<A>(missing) {
                    Some(kind) => format!("{tool} needs `{missing}` ({kind})."),
                    None => format!("{tool} needs `{missing}`."),
                }
            }
            None if field == "." => format!("The arguments of {tool} are not right: {said}."),
            None => format!("{tool}'s `{field}` {said}."),
        })
    })
}

/// The JSON Schema of `A` as a tool's `parameters`: every subschema inline, no meta-schema or
/// title, and no property the struct does not name. An optional field is written
/// `#[serde(default)] #[schemars(with = "T")]`: "not given" is an absent field, and the model is
/// not invited to write `null`.
pub fn schema_of<A: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    tidy(&mut schema);
    if let Value::Object(object) = &mut schema {
        object.remove("title");
        object.remove("description");
        object.insert("additionalProperties".into(), Value::Bool(false));
        object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        object
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    schema
}

/// What the derive writes that a model has no use for: `"default": null` for a field that is
/// simply absent when not given, and the integer formats (`uint64`) that the bounds already say.
fn tidy(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if object.get("default") == Some(&Value::Null) {
                object.remove("default");
            }
            if object.get("type").and_then(Value::as_str) == Some("integer") {
                object.remove("format");
            }
            object.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// "a string", "a whole number", … for a property of `A`'s schema.
fn kind_in_schema<A: JsonSchema>(property: &str) -> Option<&'static str> {
    let schema = schema_of::<A>();
    match schema["properties"][property]["type"].as_str()? {
        "string" => Some("a string"),
        "integer" => Some("a whole number"),
        "boolean" => Some("true or false"),
        "array" => Some("a list"),
        "object" => Some("an object"),
        _ => None,
    }
}

/// Linux's `PATH_MAX`: no longer path names a file.
const MAX_PATH_BYTES: usize = 4096;

/// Readers for `#[serde(deserialize_with)]` that take what models write: numbers and booleans
/// quoted or not, `null` for "not given"; their errors finish the sentence "`field` …".
pub mod lenient {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde_json::Value;

    use super::{MAX_PATH_BYTES, json_kind};

    /// A string that must be there.
    pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        optional_text(d)?.ok_or_else(|| D::Error::custom("must be a string, not null"))
    }

    pub fn optional_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(D::Error::custom(format!(
                "must be a string, not {}",
                json_kind(&other)
            ))),
        }
    }

    /// A path that must be there: no file has a NUL in its name, and a path longer than any file
    /// system takes names none.
    pub fn path<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        optional_path(d)?.ok_or_else(|| D::Error::custom("must be a string, not null"))
    }

    pub fn optional_path<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        let Some(path) = optional_text(d)? else {
            return Ok(None);
        };
        if path.contains('\0') {
            return Err(D::Error::custom("has a NUL byte, which no file name has"));
        }
        if path.len() > MAX_PATH_BYTES {
            return Err(D::Error::custom(format!(
                "is {} bytes long; a path has at most {MAX_PATH_BYTES}",
                path.len()
            )));
        }
        Ok(Some(path))
    }

    /// A whole number of zero or more.
    pub fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        let number = match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
            Some(_) => None,
        };
        number
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| D::Error::custom("must be a whole number of 0 or more"))
    }

    pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        match Option::<Value>::deserialize(d)? {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(_) => Err(D::Error::custom("must be true or false")),
        }
    }
}

pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// A tool's arguments of every kind the readers take.
    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Probe {
        /// The file.
        #[serde(deserialize_with = "lenient::path")]
        path: String,
        /// How many.
        #[serde(default, deserialize_with = "lenient::count")]
        #[schemars(with = "u64", range(min = 1))]
        limit: Option<usize>,
        #[serde(default, deserialize_with = "lenient::flag")]
        #[schemars(with = "bool")]
        all: Option<bool>,
    }

    fn err(value: Value) -> String {
        match of::<Probe>("probe", &value) {
            Err(ToolError::BadArguments(said)) => said,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn quoted_numbers_and_flags_and_null_are_read() {
        let read: Probe = of("probe", &json!({ "path": "a", "limit": "10", "all": "true" })).expect("read");
        assert_eq!((read.limit, read.all), (Some(10), Some(true)));
        let read: Probe = of("probe", &json!({ "path": "a", "limit": null })).expect("read");
        assert_eq!((read.limit, read.all), (None, None));
    }

    #[test]
    fn each_mistake_is_a_sentence_naming_its_field() {
        assert_eq!(err(json!({})), "probe needs `path` (a string).");
        assert_eq!(
            err(json!({ "path": 5 })),
            "probe's `path` must be a string, not a number."
        );
        assert_eq!(
            err(json!({ "path": "a\u{0}b" })),
            "probe's `path` has a NUL byte, which no file name has."
        );
        assert_eq!(
            err(json!({ "path": "a", "limit": -1 })),
            "probe's `limit` must be a whole number of 0 or more."
        );
        assert_eq!(
            err(json!({ "path": "a", "all": 1 })),
            "probe's `all` must be true or false."
        );
        assert_eq!(
            err(json!([1])),
            "The arguments of probe must be a JSON object, not an array."
        );
        assert!(
            matches!(read::<Probe>("probe", "{"), Err(ToolError::BadArguments(s)) if s.contains("not valid JSON"))
        );
    }

    #[test]
    fn the_schema_is_the_struct() {
        assert_eq!(
            schema_of::<Probe>(),
            json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "The file." },
                    "limit": { "type": "integer", "minimum": 1, "description": "How many." },
                    "all": { "type": "boolean" },
                },
                "required": ["path"],
                "additionalProperties": false,
            })
        );
    }
}
