//! `_meta.lembas` of `session/new` and `session/prompt` (docs/protocol.md "Context"): what the
//! client knows that the device composes into its prompt, a scheduled run, and the turn's id.

use serde::{Deserialize, Deserializer, Serialize};

use crate::TurnId;

use crate::Mode;

/// `_meta.lembas` of `session/new` and `session/prompt`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LembasAsks {
    /// The client's id of the turn (`session/prompt`): a turn id the session knows is never run
    /// twice.
    #[serde(rename = "turnId", default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<TurnId>,
    /// The chat's effective authored prompt: absent, the session keeps what it had; null or
    /// empty, none.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub system_prompt: Option<Option<String>>,
    /// The account's personalization, used in place of the device's own: absent, the session
    /// keeps what it had; null, the device's own.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub personalization: Option<Option<Personalization>>,
    /// Set on a scheduled run's requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<ScheduledAsks>,
}

/// As `/v1/me/personalization` gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Personalization {
    /// A preset's name; `none`: no personality.
    #[serde(default)]
    pub personality: Option<String>,
    #[serde(default)]
    pub personality_custom: Option<String>,
    #[serde(default)]
    pub instructions: Option<String>,
}

/// `_meta.lembas.scheduled` of a scheduled run's `session/new` and `session/prompt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduledAsks {
    #[serde(default)]
    pub schedule_id: String,
    #[serde(default)]
    pub run_id: String,
    #[serde(default)]
    pub title: String,
    /// The schedule's mode; edit when absent.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// How long an approval waits, before the device clamps it.
    #[serde(default)]
    pub approval_wait_s: Option<u64>,
}

/// A field that is there, null included (`Some(None)`), apart from one left out (`None`, by
/// `default`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_left_out_is_apart_from_one_sent_as_null() {
        let read = |v| serde_json::from_value::<LembasAsks>(v).unwrap();
        let none = read(json!({}));
        assert_eq!((none.system_prompt, none.personalization), (None, None));
        let nulls = read(json!({ "system_prompt": null, "personalization": null }));
        assert_eq!(
            (nulls.system_prompt, nulls.personalization),
            (Some(None), Some(None))
        );
        let given = read(json!({ "turnId": "t1", "system_prompt": "Be terse.",
            "personalization": { "personality": "friendly", "extra": 1 },
            "scheduled": { "schedule_id": "s1", "run_id": "r1", "mode": "auto", "approval_wait_s": 90 } }));
        assert_eq!(given.turn_id.as_deref(), Some("t1"));
        assert_eq!(given.system_prompt, Some(Some("Be terse.".into())));
        assert_eq!(
            given
                .personalization
                .flatten()
                .and_then(|p| p.personality)
                .as_deref(),
            Some("friendly")
        );
        let run = given.scheduled.unwrap();
        assert_eq!(
            (run.mode, run.approval_wait_s, run.title.as_str()),
            (Some(Mode::Auto), Some(90), "")
        );
    }

    #[test]
    fn a_wrong_shape_is_an_error_that_names_the_field() {
        let error = |v| serde_json::from_value::<LembasAsks>(v).unwrap_err().to_string();
        assert!(error(json!({ "scheduled": "soon" })).contains("invalid type"));
        assert!(error(json!({ "scheduled": { "mode": "yolo" } })).contains("\"yolo\" is not a mode"));
        assert!(error(json!({ "system_prompt": 5 })).contains("invalid type"));
    }
}
