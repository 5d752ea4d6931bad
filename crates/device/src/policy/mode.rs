//! Modes, narrowest to widest: plan < manual < edit < auto.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[cfg_attr(test, derive(ts_rs::TS))]
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
}
