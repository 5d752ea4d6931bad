//! Where the desktop's window opens: what the tray tells the window process (its `--view`
//! argument and its `{"show": …}` lines), what a second launch asks the tray for (`window/open`),
//! and what the window's page goes to.

use serde::{Deserialize, Serialize};

use crate::SessionId;

/// Where the window opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "view", rename_all = "snake_case")]
pub enum View {
    Activity,
    Card {
        tool_call_id: String,
    },
    /// One chat's timeline in the Sessions view.
    Session {
        session_id: SessionId,
    },
    /// Home, with a notice above it (the desktop shows no tray icons).
    Home {
        notice: Option<String>,
    },
}

/// One line the tray writes to the window process's standard input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowLine {
    /// Come forward, and go to the view when there is one.
    Show(Option<View>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_what_the_window_reads() {
        let line = |l: WindowLine| serde_json::to_string(&l).unwrap();
        assert_eq!(line(WindowLine::Show(None)), r#"{"show":null}"#);
        let card = View::Card {
            tool_call_id: "t1".into(),
        };
        assert_eq!(
            line(WindowLine::Show(Some(card.clone()))),
            r#"{"show":{"view":"card","tool_call_id":"t1"}}"#
        );
        assert_eq!(
            serde_json::to_string(&View::Activity).unwrap(),
            r#"{"view":"activity"}"#
        );
        let read: WindowLine =
            serde_json::from_str(r#"{"show":{"view":"card","tool_call_id":"t1"}}"#).unwrap();
        assert_eq!(read, WindowLine::Show(Some(card)));
    }
}
