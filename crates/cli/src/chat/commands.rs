//! The front end's own `/` commands: what `lembas chat` does itself rather than send to the engine
//! (the engine's commands go as a prompt, as on the link).

use lembas_protocol::{Effort, Mode};

/// Each own command's name and what it does, for `/help` and the completion.
pub const OWN: &[(&str, &str)] = &[
    (
        "quit",
        "Leave the chat (it stays kept; lembas chat -c continues it)",
    ),
    ("share", "Share this chat with your LLeMbas"),
    ("unshare", "Stop sharing this chat"),
    ("sessions", "Pick a kept chat to continue"),
    ("model", "Pick the model: /model <id>, or the list"),
    ("mode", "Set the mode: /mode plan|manual|edit|auto"),
    ("effort", "Set the effort: /effort off|default|low|medium|high"),
    ("help", "The keys and commands"),
];

/// One of the front end's own commands, as typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Own {
    Quit,
    Share,
    Unshare,
    Sessions,
    /// `None`: list the models to pick from.
    Model(Option<String>),
    Mode(Result<Mode, String>),
    Effort(Result<Effort, String>),
    Help,
}

impl Own {
    /// The command `text` is, when it is one of the front end's own; anything else (the
    /// engine's commands, words) goes to the engine.
    pub fn parse(text: &str) -> Option<Own> {
        let rest = text.trim().strip_prefix('/')?;
        let (name, argument) = match rest.split_once(char::is_whitespace) {
            Some((name, argument)) => (name, argument.trim()),
            None => (rest, ""),
        };
        Some(match name {
            "quit" | "exit" => Own::Quit,
            "share" => Own::Share,
            "unshare" => Own::Unshare,
            "sessions" => Own::Sessions,
            "help" => Own::Help,
            "model" => Own::Model((!argument.is_empty()).then(|| argument.to_string())),
            "mode" => Own::Mode(argument.parse()),
            "effort" => Own::Effort(
                Effort::ALL
                    .into_iter()
                    .find(|e| e.as_str() == argument)
                    .ok_or_else(|| {
                        format!("{argument:?} is not an effort: use off, default, low, medium or high.")
                    }),
            ),
            _ => return None,
        })
    }
}

/// `/help`'s text.
pub fn help() -> String {
    let mut text = String::from(
        "Enter sends (while a turn runs: steers it) · Alt-Enter a new line · Esc stops the turn · \
         Ctrl-C twice leaves · PgUp/PgDn scroll · Tab completes / and @ · on a card: its keys, Tab back to typing\n",
    );
    for (name, what) in OWN {
        text.push_str(&format!("/{name}: {what}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_commands_are_read_and_the_rest_go_to_the_engine() {
        assert_eq!(Own::parse("/quit"), Some(Own::Quit));
        assert_eq!(Own::parse("  /share "), Some(Own::Share));
        assert_eq!(Own::parse("/model"), Some(Own::Model(None)));
        assert_eq!(Own::parse("/model gpt-x"), Some(Own::Model(Some("gpt-x".into()))));
        assert_eq!(Own::parse("/mode auto"), Some(Own::Mode(Ok(Mode::Auto))));
        assert!(matches!(Own::parse("/mode yolo"), Some(Own::Mode(Err(_)))));
        assert_eq!(Own::parse("/effort high"), Some(Own::Effort(Ok(Effort::High))));
        assert_eq!(Own::parse("/compact"), None);
        assert_eq!(Own::parse("hello /quit"), None);
    }
}
