//! The loop that joins the terminal, the state and the runtime: it finds the running runtime (or
//! hosts one in this process), opens the chat before the screen is taken (a refusal is a plain
//! line on the terminal), then reads keys, pastes and resizes on a thread of their own, hears the
//! runtime, and draws once for everything that arrived together, so a resize storm or a fast
//! stream costs one frame.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste, Event, KeyEventKind};
use lembas_device::control::calls::call;
use lembas_device::control::chat::params::{
    ChatAnswerParams, ChatOpened, ConfigureParams, OpenParams, PromptParams, ShareParams, SteerParams,
};
use lembas_device::control::{Client, ConnectError, Subscription};
use lembas_device::link::AtFinal;
use lembas_device::paths::home_shortened;
use lembas_device::runtime::Runtime;
use lembas_device::setup::Setup;
use lembas_protocol::composer::FilesSearchParams;
use tokio::sync::mpsc;

use super::app::{Action, App, Facts, PickFor, Picker, SharingView};
use super::connection::{self, Heard, Request};
use super::draw;
use super::screen::entries_of;

/// How the chat is started (`lembas chat`'s arguments).
pub struct Options {
    pub cwd: Option<PathBuf>,
    pub model: Option<String>,
    pub latest: bool,
    /// Shared from the start or not; `None`: as `chat.share` says.
    pub share: Option<bool>,
}

/// How long leaving waits for the runtime to let the chat go.
const CLOSE_WITHIN: Duration = Duration::from_secs(3);
/// How often the clock's part of the screen (the Ctrl-C hint's end) is looked at.
const TICK: Duration = Duration::from_millis(250);

pub fn run(setup: &Setup, options: Options) -> ExitCode {
    let cwd = match folder(options.cwd.as_deref()) {
        Ok(cwd) => cwd,
        Err(why) => {
            eprintln!("lembas: {why}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("lembas: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(chat(setup, cwd, options));
    // The terminal's reading thread is blocked in a read: it must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}

/// The chat's folder, absolute and resolved: `-C`'s, else this one.
fn folder(asked: Option<&Path>) -> Result<PathBuf, String> {
    let asked = match asked {
        Some(path) => path.to_path_buf(),
        None => std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?,
    };
    let resolved = lembas_device::canonical::canonicalize(&asked)
        .map_err(|e| format!("cannot open {}: {e}", asked.display()))?;
    if !resolved.is_dir() {
        return Err(format!("{} is not a folder", asked.display()));
    }
    Ok(resolved)
}

async fn chat(setup: &Setup, cwd: PathBuf, options: Options) -> ExitCode {
    let (client, hosted) = match connect_or_host(setup).await {
        Ok(found) => found,
        Err(why) => {
            eprintln!("lembas: {why}");
            return ExitCode::FAILURE;
        }
    };
    let mut link = match connection::subscribed(client).await {
        Ok(link) => link,
        Err(e) => {
            eprintln!("lembas: {e}");
            return ExitCode::FAILURE;
        }
    };
    let open = OpenParams {
        cwd: Some(cwd.to_string_lossy().into_owned()),
        session_id: None,
        latest: options.latest,
        model: options.model,
        share: options.share,
    };
    // --share or --no-share answered the folder's question for this chat.
    let asked = options.share.is_some();
    let opened = match link.ask(call::ChatOpen, open).await {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("lembas: cannot open the chat: {e}");
            return stop_hosted(hosted, ExitCode::FAILURE).await;
        }
    };
    let facts = Facts {
        hosted: hosted.is_some(),
        ..Facts::default()
    };
    let mut screen = Screen::new(App::new(facts), cwd, setup.dirs.home.clone());
    screen.opened(opened);
    if asked {
        screen.app.asking_share = false;
    }
    let code = screen.run(link).await;
    stop_hosted(hosted, code).await
}

/// The running runtime's connection; with none running, one started in this process (its log to
/// the file only: the terminal is the screen's).
async fn connect_or_host(setup: &Setup) -> Result<(Client, Option<Runtime>), String> {
    match Client::connect(&setup.dirs).await {
        Ok(client) => return Ok((client, None)),
        Err(ConnectError::NotRunning) => {}
        Err(e) => return Err(e.to_string()),
    }
    lembas_device::log_file::init_file_only(&setup.dirs, "chat");
    // Waiting in a final state (not logged in, token refused) rather than ending: the chat says
    // why it cannot start and the person reads it.
    let hosted =
        Runtime::start_with(setup.clone(), "lembas chat", AtFinal::Wait).map_err(|e| e.to_string())?;
    let started = Instant::now();
    loop {
        match Client::connect(&setup.dirs).await {
            Ok(client) => return Ok((client, Some(hosted))),
            Err(ConnectError::NotRunning) if started.elapsed() < Duration::from_secs(5) => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

async fn stop_hosted(hosted: Option<Runtime>, code: ExitCode) -> ExitCode {
    if let Some(runtime) = hosted {
        let _ = runtime.shutdown_handle().send(true);
        let _ = tokio::time::timeout(Duration::from_secs(3), runtime.wait()).await;
    }
    code
}

/// The chat on the screen: the state, the chat it holds, and the runtime's requests channel.
struct Screen {
    app: App,
    session_id: String,
    cwd: PathBuf,
    home: PathBuf,
}

impl Screen {
    fn new(app: App, cwd: PathBuf, home: PathBuf) -> Screen {
        Screen {
            app,
            session_id: String::new(),
            cwd,
            home,
        }
    }

    /// A chat opened: the screen starts over with it.
    fn opened(&mut self, opened: ChatOpened) {
        let app = &mut self.app;
        self.session_id = opened.session_id;
        self.cwd = PathBuf::from(&opened.cwd);
        app.facts.folder = home_shortened(Path::new(&opened.cwd), &self.home);
        app.facts.model = opened.model;
        app.facts.effort = opened.effort.as_str().to_string();
        app.facts.sharing = sharing_view(&opened.sharing);
        app.asking_share = opened.sharing.ask && opened.sharing.refused.is_none();
        app.commands = opened.commands;
        app.cards.clear();
        app.conversation = Default::default();
        app.conversation.mode = opened.mode.as_str().to_string();
        app.conversation.title = opened.title;
        app.conversation.busy = opened.timeline.running;
        app.conversation
            .load(entries_of(&opened.timeline), opened.timeline.earlier_turns);
        app.scroll = 0;
    }

    async fn run(&mut self, link: Subscription) -> ExitCode {
        let (requests, asked) = mpsc::channel(64);
        let (heard_tx, mut heard) = mpsc::channel(1024);
        let connection = tokio::spawn(connection::serve(link, asked, heard_tx));
        let mut terminal = ratatui::init();
        let _ = crossterm::execute!(std::io::stdout(), EnableBracketedPaste);
        let mut keys = terminal_events();
        let mut tick = tokio::time::interval(TICK);
        let mut leaving: Option<Instant> = None;
        // Drawn when something changed (each branch below says); a tick changes only the Ctrl-C hint.
        let mut dirty = true;
        let mut hinted = false;
        loop {
            let now = Instant::now();
            if dirty {
                if terminal.draw(|frame| draw::draw(frame, &self.app, now)).is_err() {
                    break;
                }
                hinted = self.app.ctrl_c_pending(now);
            }
            tokio::select! {
                event = keys.recv() => {
                    let Some(event) = event else { break };
                    self.terminal_event(event, &requests).await;
                    dirty = true;
                }
                said = heard.recv() => {
                    let Some(said) = said else { break };
                    if matches!(said, Heard::Closed) {
                        break;
                    }
                    self.heard(said);
                    dirty = true;
                }
                _ = tick.tick() => {
                    dirty = self.app.ctrl_c_pending(Instant::now()) != hinted;
                }
            }
            // Everything else that came together, before one draw.
            let mut closed = false;
            for _ in 0..4096 {
                if let Ok(event) = keys.try_recv() {
                    self.terminal_event(event, &requests).await;
                } else if let Ok(said) = heard.try_recv() {
                    if matches!(said, Heard::Closed) {
                        closed = true;
                        break;
                    }
                    self.heard(said);
                } else {
                    break;
                }
                dirty = true;
            }
            if closed {
                break;
            }
            if self.app.quitting && leaving.is_none() {
                leaving = Some(Instant::now());
                if self.app.facts.disconnected
                    || requests
                        .send(Request::Close(self.session_id.clone()))
                        .await
                        .is_err()
                {
                    break;
                }
            }
            if leaving.is_some_and(|at| at.elapsed() >= CLOSE_WITHIN) {
                break;
            }
        }
        let _ = crossterm::execute!(std::io::stdout(), DisableBracketedPaste);
        ratatui::restore();
        drop(requests);
        connection.abort();
        let _ = std::io::stdout().flush();
        ExitCode::SUCCESS
    }

    async fn terminal_event(&mut self, event: Event, requests: &mpsc::Sender<Request>) {
        let actions = match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.app.key(key, Instant::now()),
            Event::Paste(text) => {
                self.app.paste(&text);
                Vec::new()
            }
            // A resize is drawn by the next frame; nothing else to do.
            _ => Vec::new(),
        };
        for action in actions {
            if let Some(request) = self.request(action)
                && requests.send(request).await.is_err()
            {
                self.app.facts.disconnected = true;
            }
        }
    }

    /// What the runtime is asked for an action of the front end's.
    fn request(&mut self, action: Action) -> Option<Request> {
        let session_id = self.session_id.clone();
        Some(match action {
            Action::Prompt(text) => Request::Prompt(PromptParams {
                session_id,
                text,
                turn_id: None,
            }),
            Action::Steer(text) => Request::Steer(SteerParams { session_id, text }),
            Action::Stop => Request::Stop(session_id),
            Action::Answer { tool_call_id, answer } => Request::Answer(ChatAnswerParams {
                session_id,
                tool_call_id,
                answer,
            }),
            Action::Share { share, remember } => Request::Share(ShareParams {
                session_id,
                share,
                remember,
            }),
            Action::Configure { model, mode, effort } => Request::Configure(ConfigureParams {
                session_id,
                model,
                mode,
                effort,
            }),
            Action::ListModels => Request::Models,
            Action::ListSessions => Request::Sessions,
            Action::Open(id) => Request::Open(OpenParams {
                session_id: Some(id),
                ..OpenParams::default()
            }),
            Action::SearchFiles(query) => Request::Files(FilesSearchParams {
                session_id: Some(session_id.as_str().into()),
                cwd: None,
                query,
                limit: Some(8),
            }),
            // Leaving is the loop's: it lets the chat go first.
            Action::Quit => return None,
        })
    }

    fn heard(&mut self, said: Heard) {
        let app = &mut self.app;
        match said {
            Heard::Opened(opened) => {
                self.opened(*opened);
                let title = self.app.conversation.title.clone();
                self.app.conversation.note(format!("Continuing {title}"));
            }
            Heard::Update { session_id, update } if session_id == self.session_id => {
                app.conversation.apply_pushed(&update);
            }
            Heard::Card(shown) if shown.session_id == self.session_id => {
                app.card_opened(&shown.card, Instant::now());
            }
            Heard::Settled(down) if down.session_id == self.session_id => {
                let said = match down.by.as_str() {
                    "client" => "A card was answered in LLeMbas.",
                    "desktop" => "A card was answered in the window on this computer.",
                    "timeout" => "A card waited too long and was taken down.",
                    "withdrawn" => "A card was taken down: its turn ended.",
                    _ => "A card was answered elsewhere.",
                };
                app.card_settled(&down.tool_call_id, said);
            }
            Heard::Job(changed) if changed.session_id == self.session_id => {
                app.conversation.job_changed(changed.state, changed.job);
            }
            Heard::Sharing(changed) if changed.session_id == self.session_id => {
                let before = app.facts.sharing.shared;
                app.facts.sharing = sharing_view(&changed.sharing);
                if before && !changed.sharing.shared {
                    let why = changed
                        .sharing
                        .refused
                        .as_deref()
                        .unwrap_or("the runtime stopped it");
                    app.conversation.note(format!("No longer shared: {why}."));
                }
            }
            Heard::Shared(sharing) => {
                app.facts.sharing = sharing_view(&sharing);
                app.conversation.note(if sharing.shared {
                    "Shared: your LLeMbas sees this chat and can answer its cards."
                } else {
                    "Not shared: this chat stays on this computer."
                });
            }
            Heard::Configured(now) => {
                app.facts.model = now.model;
                app.facts.effort = now.effort.as_str().to_string();
                app.conversation.mode = now.mode.as_str().to_string();
                app.conversation.note(format!(
                    "Now {} · {} · effort {}",
                    app.facts.model, app.conversation.mode, app.facts.effort
                ));
            }
            Heard::Models(models) => {
                app.picker = Some(Picker {
                    title: "Models".to_string(),
                    choose: PickFor::Model,
                    items: models
                        .into_iter()
                        .map(|m| (m.id.clone(), format!("{} ({})", m.name, m.id)))
                        .collect(),
                    selected: 0,
                });
            }
            Heard::Sessions(sessions) => {
                let home = self.home.clone();
                app.picker = Some(Picker {
                    title: "Chats kept here".to_string(),
                    choose: PickFor::Session,
                    items: sessions
                        .into_iter()
                        .filter(|s| s.summary.id != self.session_id)
                        .map(|s| {
                            let folder = home_shortened(Path::new(&s.summary.cwd), &home);
                            let title = if s.summary.title.is_empty() {
                                "(untitled)"
                            } else {
                                s.summary.title.as_str()
                            };
                            let label = format!("{title} · {folder} · {} messages", s.summary.messages);
                            (s.summary.id, label)
                        })
                        .collect(),
                    selected: 0,
                });
            }
            Heard::Files { query, found } => app.files_found(&query, &found),
            Heard::Linked(up) => app.facts.sharing.linked = up,
            Heard::Failed { what, why, reason } => match reason.as_deref() {
                Some("not_open") => app
                    .conversation
                    .note("That card had already been answered elsewhere."),
                Some("not_running") => app.conversation.note("Nothing is running now."),
                _ => app.conversation.note(format!("Could not {what}: {why}")),
            },
            Heard::Gone => {
                app.facts.disconnected = true;
                app.cards.clear();
                app.conversation.busy = false;
                app.conversation.note(
                    "The LLeMbas runtime stopped. The chat is kept: /quit, then lembas chat -c continues it.",
                );
            }
            Heard::Done
            | Heard::Closed
            | Heard::Update { .. }
            | Heard::Card(_)
            | Heard::Settled(_)
            | Heard::Sharing(_)
            | Heard::Job(_) => {}
        }
    }
}

fn sharing_view(sharing: &lembas_device::control::chat::params::Sharing) -> SharingView {
    SharingView {
        shared: sharing.shared,
        refused: sharing.refused.clone(),
        linked: sharing.linked,
    }
}

/// The terminal's keys, pastes and resizes, read on a thread of their own (a blocking read).
fn terminal_events() -> mpsc::Receiver<Event> {
    let (events, received) = mpsc::channel(4096);
    std::thread::spawn(move || {
        while let Ok(event) = crossterm::event::read() {
            if events.blocking_send(event).is_err() {
                return;
            }
        }
    });
    received
}
