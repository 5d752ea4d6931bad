//! A session's mode, narrowest to widest: plan < manual < edit < auto (the ACP modes the device
//! offers, `max_mode` in the limits, a scheduled run's mode).

use serde::{Deserialize, Deserializer, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Plan,
    Manual,
    #[default]
    Edit,
    Auto,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Plan, Mode::Manual, Mode::Edit, Mode::Auto];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Manual => "manual",
            Mode::Edit => "edit",
            Mode::Auto => "auto",
        }
    }

    /// "Lowered to remote.max_mode": the narrower of the two.
    pub fn lowered_to(self, max: Mode) -> Mode {
        self.min(max)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a mode: use plan, manual, edit or auto."))
    }
}

/// Read by name, a name that is not a mode said as [`FromStr`](std::str::FromStr) says it. A
/// visitor, not a string read and then parsed, so a YAML file's error names the value's own line.
impl<'de> Deserialize<'de> for Mode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Mode;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mode: plan, manual, edit or auto")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Mode, E> {
                name.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::Mode::*;

    #[test]
    fn lowering_takes_the_narrower() {
        for (asked, max, got) in [
            (Auto, Edit, Edit),
            (Plan, Auto, Plan),
            (Manual, Manual, Manual),
            (Edit, Plan, Plan),
        ] {
            assert_eq!(asked.lowered_to(max), got);
        }
    }

    #[test]
    fn a_mode_reads_by_name_and_says_what_is_not_one() {
        let read: super::Mode = serde_json::from_str(r#""auto""#).unwrap();
        assert_eq!(read, Auto);
        let wrong = serde_json::from_str::<super::Mode>(r#""yolo""#).unwrap_err();
        assert!(
            wrong
                .to_string()
                .contains("\"yolo\" is not a mode: use plan, manual, edit or auto"),
            "{wrong}"
        );
    }
}
