//! ACP's `elicitation/create` in form mode: how the device asks an editor that renders forms
//! (`clientCapabilities.elicitation.form`) its questions and its plans, and the answer it reads.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::SessionId;

/// `elicitation/create`'s params: a form tied to a session's tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationRequest {
    pub session_id: SessionId,
    pub tool_call_id: String,
    pub message: String,
    pub mode: FormMode,
    pub requested_schema: FormSchema,
}

/// The one mode the device asks in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FormMode {
    Form,
}

/// The form: flat fields, by name; a field's name orders it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormSchema {
    #[serde(rename = "type")]
    pub kind: ObjectType,
    pub properties: BTreeMap<String, FormField>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectType {
    Object,
}

/// A field: a text (one choice of `one_of` when it has any), or several choices.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum FormField {
    String {
        title: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(rename = "oneOf", skip_serializing_if = "Vec::is_empty")]
        one_of: Vec<Choice>,
    },
    Array {
        title: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        items: Choices,
    },
}

/// ACP's `EnumOption`: a choice's value and what it says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    #[serde(rename = "const")]
    pub value: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// ACP's titled multi-select items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choices {
    #[serde(rename = "anyOf")]
    pub any_of: Vec<Choice>,
}

/// `elicitation/create`'s answer. One of another shape reads as [`ElicitationAnswer::Cancel`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum ElicitationAnswer {
    Accept {
        #[serde(default)]
        content: Option<BTreeMap<String, FormValue>>,
    },
    Decline,
    Cancel,
}

/// A field's value as the client filled it in; numbers and booleans are none of the device's.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum FormValue {
    Text(String),
    Texts(Vec<String>),
    Other(IgnoredAny),
}
