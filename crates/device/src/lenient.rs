//! Reading JSON another program wrote (the instance's answers, a file an older version wrote)
//! without failing on one field's shape: a field of the wrong type reads as absent, an item of a
//! list that does not read is passed over, and the reader decides what absent means.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// `Some` when the field reads as `T`; absent, null or of another shape is `None`.
pub fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(deserializer)?).ok())
}

/// The items of a list that read as `T`, the others passed over; a field that is no list is an
/// empty one.
pub fn readable<'de, D: Deserializer<'de>, T: DeserializeOwned>(deserializer: D) -> Result<Vec<T>, D::Error> {
    Ok(list(deserializer)?.unwrap_or_default())
}

/// A list whose items that do not read as `T` are passed over; `None` when the field is no list
/// (for a reader to whom a missing list means something else than an empty one).
pub fn list<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> Result<Option<Vec<T>>, D::Error> {
    let Value::Array(items) = Value::deserialize(deserializer)? else {
        return Ok(None);
    };
    Ok(Some(
        items
            .into_iter()
            .filter_map(|item| serde_json::from_value(item).ok())
            .collect(),
    ))
}

/// A text field: a string; null as empty, and anything else as its JSON.
pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => text,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Default, PartialEq, Deserialize)]
    struct Answer {
        #[serde(default, deserialize_with = "lenient")]
        name: Option<String>,
        #[serde(default, deserialize_with = "readable")]
        sizes: Vec<u64>,
        #[serde(default, deserialize_with = "text")]
        said: String,
    }

    #[test]
    fn a_field_of_another_shape_reads_as_absent_and_never_fails_the_whole() {
        let read = |v| serde_json::from_value::<Answer>(v).unwrap();
        assert_eq!(
            read(json!({ "name": "a", "sizes": [1, "x", 3], "said": "hi" })),
            Answer {
                name: Some("a".into()),
                sizes: vec![1, 3],
                said: "hi".into()
            }
        );
        assert_eq!(
            read(json!({ "name": 7, "sizes": "many", "said": null })),
            Answer::default()
        );
        assert_eq!(read(json!({ "said": [1] })).said, "[1]");
        assert_eq!(read(json!({})), Answer::default());
    }
}
