//! A session's effort: how hard its model thinks. The levels are ENGINE.md's: `off`, `default`,
//! `low`, `medium`, `high`.

use serde::{Deserialize, Deserializer, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    /// Thinking switched off (`reasoning_effort: "none"`).
    Off,
    /// The model's own: nothing is sent.
    #[default]
    Default,
    Low,
    Medium,
    High,
}

impl Effort {
    pub const ALL: [Effort; 5] = [
        Effort::Off,
        Effort::Default,
        Effort::Low,
        Effort::Medium,
        Effort::High,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Off => "off",
            Effort::Default => "default",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }

    /// A level as a client or a file asks for it (session/new, `_lembas/configure`, a command's
    /// file, a session file): one of the five, anything else the default, as docs/protocol.md
    /// reads it.
    pub fn asked(level: &str) -> Effort {
        level.parse().unwrap_or_default()
    }

    /// [`Effort::asked`] for an optional field: absent or null is `None`; a level it does not
    /// know is the default, not an error. A value that is no string is still an error.
    pub fn read_asked<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Effort>, D::Error> {
        Ok(Option::<String>::deserialize(d)?.map(|level| Effort::asked(&level)))
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Effort {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Effort::ALL.into_iter().find(|e| e.as_str() == s).ok_or_else(|| {
            let levels: Vec<&str> = Effort::ALL.into_iter().map(Effort::as_str).collect();
            format!("{s:?} is not an effort: one of {}.", levels.join(", "))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Effort;
    use serde::Deserialize;
    use serde_json::json;

    #[test]
    fn a_level_is_its_name_on_the_wire() {
        for effort in Effort::ALL {
            assert_eq!(serde_json::to_value(effort).unwrap(), effort.as_str());
            assert_eq!(effort.as_str().parse(), Ok(effort));
        }
        assert_eq!(
            "turbo".parse::<Effort>(),
            Err("\"turbo\" is not an effort: one of off, default, low, medium, high.".to_string())
        );
    }

    #[test]
    fn an_asked_level_it_does_not_know_is_the_default() {
        #[derive(Deserialize)]
        struct Asked {
            #[serde(default, deserialize_with = "Effort::read_asked")]
            effort: Option<Effort>,
        }
        let read = |v| serde_json::from_value::<Asked>(v).map(|a| a.effort).ok();
        assert_eq!(read(json!({ "effort": "high" })), Some(Some(Effort::High)));
        assert_eq!(read(json!({ "effort": "turbo" })), Some(Some(Effort::Default)));
        assert_eq!(read(json!({ "effort": null })), Some(None));
        assert_eq!(read(json!({})), Some(None));
        assert_eq!(read(json!({ "effort": 3 })), None);
    }
}
