//! The whole front end's state, and what each key does to it: the conversation, the input line and
//! its completion, the cards waiting, a picker (`/sessions`, `/model`), the status line's facts.
//! A key gives back [`Action`]s for the connection to carry out; nothing here waits or draws.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use lembas_protocol::card::{CardAnswer, CardRequest};
use lembas_protocol::composer::{AvailableCommand, FilesFound};
use lembas_protocol::{Effort, Mode};

use super::cards::{Card, Keyed};
use super::commands::{self, Own};
use super::complete::{self, Completion, Wanted};
use super::input::InputLine;
use super::screen::Conversation;

/// Ctrl-C a second time within this leaves.
const SECOND_CTRL_C: Duration = Duration::from_secs(2);

/// What the front end asks the runtime to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Prompt(String),
    Steer(String),
    /// Esc: the running turn cancelled.
    Stop,
    Answer {
        tool_call_id: String,
        answer: CardAnswer,
    },
    Share {
        share: bool,
        /// The answer to the once-per-folder question, kept for the folder.
        remember: bool,
    },
    Configure {
        model: Option<String>,
        mode: Option<Mode>,
        effort: Option<Effort>,
    },
    ListModels,
    ListSessions,
    /// A stored chat picked in `/sessions`.
    Open(String),
    SearchFiles(String),
    Quit,
}

/// Whether the chat is shared, and why it cannot be.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SharingView {
    pub shared: bool,
    /// Why it cannot be shared.
    pub refused: Option<String>,
    /// A link is up now.
    pub linked: bool,
}

/// The status line's facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The chat's folder as a person reads it (`~/…`).
    pub folder: String,
    pub model: String,
    pub effort: String,
    pub sharing: SharingView,
    /// This process hosts the runtime (none was running).
    pub hosted: bool,
    /// The runtime's connection is gone.
    pub disconnected: bool,
}

/// What a picker picks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PickFor {
    Session,
    Model,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Picker {
    pub title: String,
    pub choose: PickFor,
    /// Each choice's value and its line.
    pub items: Vec<(String, String)>,
    pub selected: usize,
}

/// Where the keys go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Focus {
    Input,
    Card,
}

pub struct App {
    pub conversation: Conversation,
    pub input: InputLine,
    pub completion: Completion,
    pub cards: VecDeque<Card>,
    pub focus: Focus,
    pub picker: Option<Picker>,
    /// The once-per-folder question of `chat.share: ask`, while it waits.
    pub asking_share: bool,
    pub facts: Facts,
    pub commands: Vec<AvailableCommand>,
    /// Lines scrolled up from the end of the conversation.
    pub scroll: usize,
    /// The last `@` query asked, so a keystroke that does not change it asks nothing.
    file_query: Option<String>,
    ctrl_c_at: Option<Instant>,
    pub quitting: bool,
}

impl App {
    pub fn new(facts: Facts) -> App {
        App {
            conversation: Conversation::default(),
            input: InputLine::default(),
            completion: Completion::default(),
            cards: VecDeque::new(),
            focus: Focus::Input,
            picker: None,
            asking_share: false,
            facts,
            commands: Vec::new(),
            scroll: 0,
            file_query: None,
            ctrl_c_at: None,
            quitting: false,
        }
    }

    /// A card opened in the chat: it takes the keys unless the person is typing (their text is
    /// kept; Tab goes to the card).
    pub fn card_opened(&mut self, request: &CardRequest, now: Instant) {
        if self
            .cards
            .iter()
            .any(|c| c.tool_call_id == request.tool_call_id())
        {
            return;
        }
        self.cards.push_back(Card::of(request, now));
        if self.input.is_empty() && self.cards.len() == 1 {
            self.focus = Focus::Card;
        }
    }

    /// A card answered elsewhere, timed out or withdrawn: taken down, and `said` why.
    pub fn card_settled(&mut self, tool_call_id: &str, said: &str) {
        let before = self.cards.len();
        self.cards.retain(|c| c.tool_call_id != tool_call_id);
        if self.cards.len() < before {
            self.conversation.note(said);
        }
        if self.cards.is_empty() {
            self.focus = Focus::Input;
        }
    }

    /// The files the device found for the `@` word, if it is still the word being typed.
    pub fn files_found(&mut self, query: &str, found: &FilesFound) {
        if self.file_query.as_deref() == Some(query) {
            self.completion.show(complete::files(found));
        }
    }

    pub fn paste(&mut self, text: &str) {
        if self.focus == Focus::Card
            && let Some(card) = self.cards.front_mut()
            && card.paste(text)
        {
            return;
        }
        self.input.paste(text);
        self.focus = Focus::Input;
    }

    pub fn key(&mut self, key: KeyEvent, now: Instant) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            return self.ctrl_c(now);
        }
        self.ctrl_c_at = None;
        match key.code {
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_add(10);
                return Vec::new();
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_sub(10);
                return Vec::new();
            }
            _ => {}
        }
        if self.asking_share {
            return self.share_answer(key);
        }
        if self.picker.is_some() {
            return self.pick(key);
        }
        if key.code == KeyCode::Esc {
            if self.completion.is_open() {
                self.completion.close();
                return Vec::new();
            }
            return if self.conversation.busy {
                vec![Action::Stop]
            } else {
                Vec::new()
            };
        }
        if key.code == KeyCode::Tab && !self.completion.is_open() && !self.cards.is_empty() {
            self.focus = match self.focus {
                Focus::Input => {
                    // Gone to on purpose: its keys count at once.
                    if let Some(card) = self.cards.front_mut() {
                        card.shown_at = now.checked_sub(super::cards::SETTLE).unwrap_or(card.shown_at);
                    }
                    Focus::Card
                }
                Focus::Card => Focus::Input,
            };
            return Vec::new();
        }
        if self.focus == Focus::Card
            && let Some(card) = self.cards.front_mut()
        {
            return match card.key(key, now) {
                Keyed::Answer(answer) => {
                    let tool_call_id = card.tool_call_id.clone();
                    self.cards.pop_front();
                    if self.cards.is_empty() {
                        self.focus = Focus::Input;
                    }
                    vec![Action::Answer { tool_call_id, answer }]
                }
                Keyed::Taken | Keyed::Ignored => Vec::new(),
            };
        }
        self.input_key(key, ctrl)
    }

    fn ctrl_c(&mut self, now: Instant) -> Vec<Action> {
        if self
            .ctrl_c_at
            .is_some_and(|at| now.duration_since(at) < SECOND_CTRL_C)
        {
            self.quitting = true;
            return vec![Action::Quit];
        }
        self.ctrl_c_at = Some(now);
        self.input.take();
        self.completion.close();
        self.picker = None;
        Vec::new()
    }

    /// Whether a first Ctrl-C waits for its second (the status line says so).
    pub fn ctrl_c_pending(&self, now: Instant) -> bool {
        self.ctrl_c_at
            .is_some_and(|at| now.duration_since(at) < SECOND_CTRL_C)
    }

    fn input_key(&mut self, key: KeyEvent, ctrl: bool) -> Vec<Action> {
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Enter if alt || key.modifiers.contains(KeyModifiers::SHIFT) => self.input.insert('\n'),
            KeyCode::Enter | KeyCode::Tab if self.completion.is_open() => {
                let mut send = false;
                if let Some(choice) = self.completion.picked() {
                    send = key.code == KeyCode::Enter && choice.sent_on_enter;
                    let with = choice.replace_with.clone();
                    self.input.replace_word(&with);
                }
                self.completion.close();
                self.file_query = None;
                if send {
                    return self.send();
                }
                return self.completed_again();
            }
            KeyCode::Enter => return self.send(),
            KeyCode::Up if self.completion.is_open() => self.completion.up(),
            KeyCode::Down if self.completion.is_open() => self.completion.down(),
            KeyCode::Char('j') if ctrl => self.input.insert('\n'),
            KeyCode::Char('w') if ctrl => self.input.delete_word(),
            KeyCode::Char('u') if ctrl => self.input.delete_to_start(),
            KeyCode::Char('a') if ctrl => self.input.home(),
            KeyCode::Char('e') if ctrl => self.input.end(),
            KeyCode::Char(c) if !ctrl => self.input.insert(c),
            KeyCode::Backspace => self.input.backspace(),
            KeyCode::Delete => self.input.delete(),
            KeyCode::Left => self.input.left(),
            KeyCode::Right => self.input.right(),
            KeyCode::Home => self.input.home(),
            KeyCode::End => self.input.end(),
            _ => return Vec::new(),
        }
        self.completed_again()
    }

    /// The completion after the line changed; an `@` word asks the device for files.
    fn completed_again(&mut self) -> Vec<Action> {
        match complete::wanted(&self.input) {
            Wanted::Command(prefix) => {
                self.file_query = None;
                self.completion.show(complete::commands(&prefix, &self.commands));
                Vec::new()
            }
            Wanted::File(query) => {
                if self.file_query.as_deref() == Some(query.as_str()) {
                    return Vec::new();
                }
                self.file_query = Some(query.clone());
                vec![Action::SearchFiles(query)]
            }
            Wanted::None => {
                self.file_query = None;
                self.completion.close();
                Vec::new()
            }
        }
    }

    /// Enter: the front end's own command, else a prompt, or a steer while a turn runs.
    fn send(&mut self) -> Vec<Action> {
        if self.input.text().trim().is_empty() {
            return Vec::new();
        }
        let text = self.input.take();
        self.completion.close();
        self.scroll = 0;
        let Some(own) = Own::parse(&text) else {
            return if self.conversation.busy {
                self.conversation.note(format!("Steering: {}", first_line(&text)));
                vec![Action::Steer(text)]
            } else {
                vec![Action::Prompt(text)]
            };
        };
        match own {
            Own::Quit => {
                self.quitting = true;
                vec![Action::Quit]
            }
            Own::Share => vec![Action::Share {
                share: true,
                remember: false,
            }],
            Own::Unshare => vec![Action::Share {
                share: false,
                remember: false,
            }],
            Own::Sessions => vec![Action::ListSessions],
            Own::Help => {
                self.conversation.note(commands::help());
                Vec::new()
            }
            Own::Model(None) => vec![Action::ListModels],
            Own::Model(Some(model)) => vec![Action::Configure {
                model: Some(model),
                mode: None,
                effort: None,
            }],
            Own::Mode(Ok(mode)) => vec![Action::Configure {
                model: None,
                mode: Some(mode),
                effort: None,
            }],
            Own::Effort(Ok(effort)) => vec![Action::Configure {
                model: None,
                mode: None,
                effort: Some(effort),
            }],
            Own::Mode(Err(why)) | Own::Effort(Err(why)) => {
                self.conversation.note(why);
                Vec::new()
            }
        }
    }

    fn pick(&mut self, key: KeyEvent) -> Vec<Action> {
        let Some(picker) = &mut self.picker else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up => picker.selected = picker.selected.saturating_sub(1),
            KeyCode::Down => {
                picker.selected = (picker.selected + 1).min(picker.items.len().saturating_sub(1))
            }
            KeyCode::Esc => self.picker = None,
            KeyCode::Enter => {
                let picked = picker.items.get(picker.selected).map(|(value, _)| value.clone());
                let choose = picker.choose;
                self.picker = None;
                return match (picked, choose) {
                    (Some(id), PickFor::Session) => vec![Action::Open(id)],
                    (Some(model), PickFor::Model) => vec![Action::Configure {
                        model: Some(model),
                        mode: None,
                        effort: None,
                    }],
                    (None, _) => Vec::new(),
                };
            }
            _ => {}
        }
        Vec::new()
    }

    fn share_answer(&mut self, key: KeyEvent) -> Vec<Action> {
        let share = match key.code {
            KeyCode::Char('y') => true,
            KeyCode::Char('n') | KeyCode::Esc => false,
            _ => return Vec::new(),
        };
        self.asking_share = false;
        vec![Action::Share {
            share,
            remember: true,
        }]
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn typed(app: &mut App, text: &str, now: Instant) -> Vec<Action> {
        text.chars()
            .flat_map(|c| app.key(key(KeyCode::Char(c)), now))
            .collect()
    }

    fn approval(id: &str) -> CardRequest {
        serde_json::from_value(json!({
            "sessionId": "ses_1",
            "toolCall": { "toolCallId": id, "title": "Run a command in ~/w", "kind": "execute",
                          "status": "pending", "rawInput": { "command": "ls" } },
            "options": [], "_meta": { "lembas": { "reason": "r", "always": "ls" } }
        }))
        .unwrap()
    }

    #[test]
    fn enter_prompts_when_idle_and_steers_while_a_turn_runs() {
        let now = Instant::now();
        let mut app = App::new(Facts::default());
        typed(&mut app, "hello", now);
        assert_eq!(
            app.key(key(KeyCode::Enter), now),
            [Action::Prompt("hello".into())]
        );
        app.conversation.busy = true;
        typed(&mut app, "also this", now);
        assert_eq!(
            app.key(key(KeyCode::Enter), now),
            [Action::Steer("also this".into())]
        );
        assert_eq!(app.key(key(KeyCode::Esc), now), [Action::Stop]);
        app.conversation.busy = false;
        assert!(app.key(key(KeyCode::Esc), now).is_empty());
    }

    #[test]
    fn own_commands_stay_here_and_the_engines_go_as_prompts() {
        let now = Instant::now();
        let mut app = App::new(Facts::default());
        typed(&mut app, "/unsh", now);
        // Enter takes the completion and sends it.
        assert_eq!(
            app.key(key(KeyCode::Enter), now),
            [Action::Share {
                share: false,
                remember: false
            }]
        );
        typed(&mut app, "/compact", now);
        app.completion.close();
        assert_eq!(
            app.key(key(KeyCode::Enter), now),
            [Action::Prompt("/compact".into())]
        );
    }

    #[test]
    fn tab_takes_a_completion_and_an_at_word_asks_for_files() {
        let now = Instant::now();
        let mut app = App::new(Facts::default());
        typed(&mut app, "/ses", now);
        assert_eq!(app.completion.picked().unwrap().replace_with, "/sessions ");
        app.key(key(KeyCode::Tab), now);
        assert_eq!(app.input.text(), "/sessions ");
        app.input.take();
        let asked = typed(&mut app, "see @sr", now);
        assert_eq!(asked.last(), Some(&Action::SearchFiles("sr".into())));
        assert!(app.key(key(KeyCode::Left), now).is_empty() || app.file_query.is_some());
    }

    #[test]
    fn a_card_arriving_while_typing_leaves_the_text_and_tab_goes_to_it() {
        let now = Instant::now();
        let later = now + super::super::cards::SETTLE;
        let mut app = App::new(Facts::default());
        typed(&mut app, "da", now);
        app.card_opened(&approval("c1"), now);
        assert_eq!(app.focus, Focus::Input);
        typed(&mut app, "a", later);
        assert_eq!(app.input.text(), "daa", "the a went to the text, not the card");
        // Tab goes to the card on purpose: its keys count at once.
        app.key(key(KeyCode::Tab), now);
        let answered = app.key(key(KeyCode::Char('a')), now);
        assert!(matches!(&answered[..], [Action::Answer { tool_call_id, .. }] if tool_call_id == "c1"));
        assert!(app.cards.is_empty());
        assert_eq!((app.focus, app.input.text()), (Focus::Input, "daa"));
    }

    #[test]
    fn a_card_answered_elsewhere_is_taken_down() {
        let now = Instant::now();
        let mut app = App::new(Facts::default());
        app.card_opened(&approval("c1"), now);
        app.card_opened(&approval("c1"), now);
        assert_eq!((app.cards.len(), app.focus), (1, Focus::Card));
        app.card_settled("c1", "Answered in LLeMbas.");
        assert!(app.cards.is_empty());
        assert_eq!(app.focus, Focus::Input);
    }

    #[test]
    fn ctrl_c_clears_then_leaves() {
        let now = Instant::now();
        let mut app = App::new(Facts::default());
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        typed(&mut app, "half", now);
        assert!(app.key(ctrl_c, now).is_empty());
        assert!(app.input.is_empty() && app.ctrl_c_pending(now));
        assert_eq!(app.key(ctrl_c, now + Duration::from_millis(500)), [Action::Quit]);
        let mut slow = App::new(Facts::default());
        slow.key(ctrl_c, now);
        assert!(slow.key(ctrl_c, now + Duration::from_secs(3)).is_empty());
    }

    #[test]
    fn the_share_question_takes_y_or_n() {
        let now = Instant::now();
        let mut app = App::new(Facts::default());
        app.asking_share = true;
        assert!(typed(&mut app, "x", now).is_empty());
        assert_eq!(
            typed(&mut app, "y", now),
            [Action::Share {
                share: true,
                remember: true
            }]
        );
        assert!(!app.asking_share);
    }
}
