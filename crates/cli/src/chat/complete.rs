//! The completion under the input line: `/` commands (the engine's and the front end's own) at the
//! start of the line, `@` files anywhere (the device's search answers, asked as the word changes).

use lembas_protocol::composer::{AvailableCommand, FilesFound};

use super::commands::OWN;
use super::input::InputLine;

/// What the word at the cursor asks to be completed.
#[derive(Debug, Clone, PartialEq)]
pub enum Wanted {
    /// A `/` command: what follows the `/` so far.
    Command(String),
    /// An `@` file: what follows the `@` so far.
    File(String),
    None,
}

/// Read from the word the cursor ends: a `/` word is a command only at the very start.
pub fn wanted(line: &InputLine) -> Wanted {
    let (start, word) = line.word_at_cursor();
    if let Some(prefix) = word.strip_prefix('/')
        && start == 0
    {
        return Wanted::Command(prefix.to_string());
    }
    match word.strip_prefix('@') {
        Some(query) => Wanted::File(query.to_string()),
        None => Wanted::None,
    }
}

/// One choice: what replaces the word, and a few words about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub replace_with: String,
    pub about: String,
    /// A command that is sent as soon as Enter takes it (one that wants words after it is not).
    pub sent_on_enter: bool,
}

/// The choices shown and the one picked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub choices: Vec<Choice>,
    pub selected: usize,
}

impl Completion {
    pub fn is_open(&self) -> bool {
        !self.choices.is_empty()
    }

    pub fn close(&mut self) {
        self.choices.clear();
        self.selected = 0;
    }

    /// New choices; the pick kept where it still points at one.
    pub fn show(&mut self, choices: Vec<Choice>) {
        self.selected = self.selected.min(choices.len().saturating_sub(1));
        self.choices = choices;
    }

    pub fn down(&mut self) {
        if self.is_open() {
            self.selected = (self.selected + 1) % self.choices.len();
        }
    }

    pub fn up(&mut self) {
        if self.is_open() {
            self.selected = (self.selected + self.choices.len() - 1) % self.choices.len();
        }
    }

    pub fn picked(&self) -> Option<&Choice> {
        self.choices.get(self.selected)
    }
}

/// How many choices are shown at most.
pub const SHOWN: usize = 8;

/// The front end's own commands that want words after them.
const TAKES_WORDS: [&str; 2] = ["mode", "effort"];

/// The commands whose name starts with `prefix` (the engine's first, then the front end's own),
/// then those that only contain it.
pub fn commands(prefix: &str, engine: &[AvailableCommand]) -> Vec<Choice> {
    let all = engine
        .iter()
        // The front end's own win: they never reach the engine.
        .filter(|c| !OWN.iter().any(|(own, _)| *own == c.name))
        .map(|c| (c.name.as_str(), c.description.as_str(), c.input.is_none()))
        .chain(
            OWN.iter()
                .map(|(name, about)| (*name, *about, !TAKES_WORDS.contains(name))),
        );
    let (mut starting, mut containing): (Vec<Choice>, Vec<Choice>) = (Vec::new(), Vec::new());
    for (name, about, sent_on_enter) in all {
        let choice = Choice {
            replace_with: format!("/{name} "),
            about: about.to_string(),
            sent_on_enter,
        };
        if name.starts_with(prefix) {
            starting.push(choice);
        } else if name.contains(prefix) {
            containing.push(choice);
        }
    }
    starting.dedup_by(|a, b| a.replace_with == b.replace_with);
    starting.append(&mut containing);
    starting.truncate(SHOWN);
    starting
}

/// The device's answer to a file search, as choices (a folder ends with `/`, so picking it goes on
/// into it).
pub fn files(found: &FilesFound) -> Vec<Choice> {
    found
        .files
        .iter()
        .take(SHOWN)
        .map(|file| {
            let dir = file.kind == "dir";
            Choice {
                replace_with: if dir {
                    format!("@{}/", file.path.trim_end_matches('/'))
                } else {
                    format!("@{} ", file.path)
                },
                about: if dir { "folder" } else { "file" }.to_string(),
                sent_on_enter: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::LembasMeta;
    use lembas_protocol::composer::{CommandKind, FoundFile};

    fn line(text: &str) -> InputLine {
        let mut line = InputLine::default();
        line.set(text);
        line
    }

    fn engine(name: &str) -> AvailableCommand {
        AvailableCommand {
            name: name.to_string(),
            description: format!("the engine's {name}"),
            input: None,
            meta: LembasMeta {
                lembas: CommandKind {
                    kind: "builtin".into(),
                },
            },
        }
    }

    #[test]
    fn a_slash_at_the_start_asks_for_a_command_and_an_at_for_a_file() {
        assert_eq!(wanted(&line("/sh")), Wanted::Command("sh".into()));
        assert_eq!(wanted(&line("see /sh")), Wanted::None);
        assert_eq!(wanted(&line("look at @src/m")), Wanted::File("src/m".into()));
        assert_eq!(wanted(&line("/review @")), Wanted::File(String::new()));
        assert_eq!(wanted(&line("/review ")), Wanted::None);
    }

    #[test]
    fn commands_starting_with_the_prefix_come_first_the_engines_and_the_own() {
        let list = [engine("compact"), engine("undo"), engine("shout")];
        let names: Vec<String> = commands("sh", &list)
            .into_iter()
            .map(|c| c.replace_with)
            .collect();
        assert_eq!(names, ["/shout ", "/share ", "/unshare "]);
        let all = commands("", &list);
        assert_eq!(all.len(), SHOWN);
        assert_eq!(all[0].about, "the engine's compact");
        let mode = commands("mod", &list);
        assert_eq!(
            mode.iter()
                .map(|c| (c.replace_with.as_str(), c.sent_on_enter))
                .collect::<Vec<_>>(),
            [("/model ", true), ("/mode ", false)]
        );
    }

    #[test]
    fn the_pick_moves_round_and_files_become_mentions() {
        let found = FilesFound {
            root: "/w".into(),
            files: vec![
                FoundFile {
                    path: "src".into(),
                    kind: "dir".into(),
                },
                FoundFile {
                    path: "src/main.rs".into(),
                    kind: "file".into(),
                },
            ],
        };
        let mut completion = Completion::default();
        completion.show(files(&found));
        assert_eq!(completion.picked().unwrap().replace_with, "@src/");
        completion.down();
        assert_eq!(completion.picked().unwrap().replace_with, "@src/main.rs ");
        completion.down();
        assert_eq!(completion.selected, 0);
        completion.up();
        assert_eq!(completion.selected, 1);
        completion.close();
        assert!(!completion.is_open() && completion.picked().is_none());
    }
}
