//! A tool as the model is told about it: an entry of the OpenAI `tools` array, a function with the
//! JSON Schema of its arguments, derived from the struct its arguments are read into.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::arguments::schema_of;
use super::name::ToolName;

/// A tool as the model API offers it: a function, its name, what it does, and the JSON Schema of
/// its arguments (the model's to read: the device writes it and never reads it back).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    #[serde(rename = "type")]
    kind: &'static str,
    pub function: FunctionDefinition,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl ToolDefinition {
    pub fn function(name: &str, description: &str, parameters: Value) -> ToolDefinition {
        ToolDefinition {
            kind: "function",
            function: FunctionDefinition {
                name: name.to_string(),
                description: description.to_string(),
                parameters,
            },
        }
    }

    /// One of the device's tools, its arguments read into `A`.
    pub fn of<A: JsonSchema>(name: ToolName, description: &str) -> ToolDefinition {
        ToolDefinition::function(name.as_str(), description, schema_of::<A>())
    }

    /// Sets a part of the schema a struct cannot say, a number of `decisions.json` in a bound or
    /// a description: `pointer` into the parameters (`/properties/limit/description`).
    pub fn with(mut self, pointer: &str, value: impl Into<Value>) -> ToolDefinition {
        if let Some(slot) = self.function.parameters.pointer_mut(pointer) {
            *slot = value.into();
        } else if let Some((parent, key)) = pointer.rsplit_once('/')
            && let Some(Value::Object(object)) = self.function.parameters.pointer_mut(parent)
        {
            object.insert(key.to_string(), value.into());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Probe {
        /// Seconds.
        timeout_s: Option<u64>,
    }

    #[test]
    fn a_bound_is_set_where_the_pointer_says() {
        let def = ToolDefinition::of::<Probe>(ToolName::Bash, "Run.")
            .with("/properties/timeout_s/maximum", 600)
            .with("/properties/timeout_s/description", "Seconds (at most 600).");
        let property = &def.function.parameters["properties"]["timeout_s"];
        assert_eq!(property["maximum"], 600);
        assert_eq!(property["description"], "Seconds (at most 600).");
        assert_eq!(json!(def)["type"], "function");
    }
}
