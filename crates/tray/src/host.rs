//! Runs the device in this process, as `lembas service run` does, and keeps [`HostState`] and the
//! activity current for the tray and the window.
//!
//! Unlike the headless service the app's runtime outlives the link's final states: after "not
//! logged in", a refused token or a server that needs updating it keeps serving its control socket
//! (the window logs in through it) and dials again when the config changes or a login asks. When
//! the runtime cannot start at all, the app waits for the config to change and tries again. When
//! a headless service holds the device lock, it mirrors that service through its control socket
//! ([`beside`]): its status, activity and approval cards, answered from here; where the socket
//! cannot be reached it shows the service's status file and keeps trying.

mod beside;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lembas_device::control::ApprovalOption;
use lembas_device::engine::Card;
use lembas_device::events::DeviceEvent;
use lembas_device::link::AtFinal;
use lembas_device::lock::LockError;
use lembas_device::runtime::{Runtime, StartError};
use lembas_device::settings;
use lembas_device::setup::Setup;
use lembas_device::status;
use tokio::sync::{Notify, broadcast, mpsc, oneshot, watch};

use crate::activity::Activity;
use crate::cards::ApprovalCard;
use crate::state::HostState;
use lembas_device::desktop_view::pending::open_cards;
use lembas_device::poison::Recover;

/// How this app names itself in the device lock (`lembas status` shows it).
const HOLDER: &str = lembas_device::control::DESKTOP_HOLDER;
/// How often the app looks at another holder's status file and tries the lock again.
const HELD_POLL: Duration = Duration::from_secs(2);
/// The pause after the mirrored runtime went, before the lock is tried again (it may still be
/// letting it go).
const AFTER_MIRROR: Duration = Duration::from_millis(250);

enum Control {
    /// Dial again now: a login from the window stored a new token.
    Redial,
    /// Stop all remote work: end the link (and so its shells and watches) at once.
    EndLink,
    /// Close the link cleanly and stop; the sender hears when it is done.
    Quit(oneshot::Sender<()>),
    /// The person answered an approval card on the desktop; the sender hears whether the card was still open (the first answer wins).
    Answer {
        tool_call_id: String,
        option: ApprovalOption,
        done: oneshot::Sender<bool>,
    },
}

/// The app's handle on the device. Cheap to clone.
#[derive(Clone)]
pub struct Host {
    state: watch::Receiver<HostState>,
    activity: Arc<Mutex<Activity>>,
    /// The approval cards open on the runtime this app runs, or on the one it mirrors.
    cards: watch::Receiver<Vec<ApprovalCard>>,
    control: mpsc::UnboundedSender<Control>,
    /// Rung on every change of state, activity or config: the tray and window redraw.
    pub changed: Arc<Notify>,
    /// The device's folders and keychain entry, as the program hands them down.
    pub setup: Setup,
}

impl Host {
    /// Starts the device host on the current tokio runtime.
    pub fn start(setup: Setup) -> Host {
        let (state_tx, state) = watch::channel(HostState::default());
        let (control, control_rx) = mpsc::unbounded_channel();
        let (cards_tx, cards) = watch::channel(Vec::new());
        let host = Host {
            state,
            activity: Arc::new(Mutex::new(Activity::default())),
            cards,
            control,
            changed: Arc::new(Notify::new()),
            setup,
        };
        let (config_tx, config_rx) = watch::channel(0u64);
        match settings::watch::watch(&host.setup.dirs.config_file()) {
            Ok((watcher, mut events)) => {
                let changed = host.changed.clone();
                tokio::spawn(async move {
                    let _watcher = watcher; // watching stops when it drops
                    while events.recv().await.is_some() {
                        config_tx.send_modify(|generation| *generation += 1);
                        changed.notify_one();
                    }
                });
            }
            Err(e) => tracing::warn!("the tray will not see config changes made elsewhere: {e}"),
        }
        let runner = Runner {
            state: state_tx,
            activity: host.activity.clone(),
            cards: cards_tx,
            changed: host.changed.clone(),
            control: control_rx,
            config: config_rx,
            setup: host.setup.clone(),
        };
        tokio::spawn(runner.run());
        host
    }

    /// The state as it changes, for waiting on one.
    pub fn watch_state(&self) -> watch::Receiver<HostState> {
        self.state.clone()
    }

    pub fn state(&self) -> HostState {
        self.state.borrow().clone()
    }

    /// The approval cards open now, oldest first.
    pub fn cards(&self) -> Vec<ApprovalCard> {
        self.cards.borrow().clone()
    }

    /// Changes whenever a card opens or is settled.
    pub fn watch_cards(&self) -> watch::Receiver<Vec<ApprovalCard>> {
        self.cards.clone()
    }

    pub fn activity(&self) -> MutexGuard<'_, Activity> {
        self.activity.lock().recover()
    }

    pub fn redial(&self) {
        let _ = self.control.send(Control::Redial);
    }

    pub fn end_link(&self) {
        let _ = self.control.send(Control::EndLink);
    }

    /// Answers an open approval card; `false` when it was already answered elsewhere or is gone.
    pub async fn answer_approval(&self, tool_call_id: String, option: ApprovalOption) -> bool {
        let (done, answered) = oneshot::channel();
        let sent = self.control.send(Control::Answer {
            tool_call_id,
            option,
            done,
        });
        sent.is_ok() && answered.await.unwrap_or(false)
    }

    /// Closes the link (1000) and stops the runtime; returns once it has.
    pub async fn quit(&self) {
        let (done, stopped) = oneshot::channel();
        if self.control.send(Control::Quit(done)).is_ok() {
            let _ = tokio::time::timeout(Duration::from_secs(5), stopped).await;
        }
    }
}

struct Runner {
    state: watch::Sender<HostState>,
    activity: Arc<Mutex<Activity>>,
    cards: watch::Sender<Vec<ApprovalCard>>,
    changed: Arc<Notify>,
    control: mpsc::UnboundedReceiver<Control>,
    config: watch::Receiver<u64>,
    setup: Setup,
}

/// What ended a wait.
enum Next {
    TryAgain,
    Quit(Option<oneshot::Sender<()>>),
}

impl Runner {
    fn set(&self, change: impl FnOnce(&mut HostState)) {
        self.state.send_modify(change);
        self.changed.notify_one();
    }

    async fn run(mut self) {
        loop {
            let next = match Runtime::start_with(self.setup.clone(), HOLDER, AtFinal::Wait) {
                Ok(runtime) => {
                    self.set(|s| {
                        s.held_by = None;
                        s.problem = None;
                    });
                    self.serve(runtime).await
                }
                Err(StartError::Lock(LockError::Held { holder })) => {
                    self.set(|s| {
                        s.held_by = Some(holder);
                        s.problem = None;
                    });
                    match self.beside().await {
                        Some(Next::TryAgain) => self.wait(Some(AFTER_MIRROR)).await,
                        Some(quit) => quit,
                        None => {
                            let (_, status) = status::read(&self.setup.dirs);
                            self.set(|s| s.status = status);
                            self.wait(Some(HELD_POLL)).await
                        }
                    }
                }
                Err(e) => {
                    tracing::error!("{e}");
                    self.set(|s| {
                        s.status = None;
                        s.held_by = None;
                        s.problem = Some(e.to_string());
                    });
                    self.wait(None).await
                }
            };
            if let Next::Quit(done) = next {
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return;
            }
        }
    }

    /// Mirrors a running runtime until the app quits. In a final state the runtime waits for a
    /// login (from the window, through its control socket) or a change of the config, and goes on.
    async fn serve(&mut self, runtime: Runtime) -> Next {
        let mut status = runtime.status.clone();
        let mut events = runtime.events.subscribe();
        self.config.mark_unchanged();
        loop {
            let current = status.borrow_and_update().clone();
            self.set(|s| s.status = Some(current));
            tokio::select! {
                changed = status.changed() => if changed.is_err() { break },
                event = events.recv() => match event {
                    Ok(event) => {
                        if matches!(event, DeviceEvent::ApprovalAsked { .. } | DeviceEvent::ApprovalSettled { .. }) {
                            self.show_engine_cards(&runtime.engine.cards());
                        }
                        self.activity.lock().recover().apply(&event);
                        self.changed.notify_one();
                    }
                    // Missed events may have opened or settled cards: read them again.
                    Err(broadcast::error::RecvError::Lagged(_)) => self.show_engine_cards(&runtime.engine.cards()),
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                control = self.control.recv() => match control {
                    Some(Control::Redial) => runtime.end_link(),
                    // Stop all remote work: turns are the engine's and outlive links, so they are
                    // cancelled here; shells and watches end with the link.
                    Some(Control::EndLink) => {
                        runtime.engine.stop_all();
                        // Their answers (`cancelled`) go out on this link before it ends.
                        runtime.engine.cancel_all(std::time::Duration::from_secs(3)).await;
                        runtime.end_link();
                    }
                    Some(Control::Answer { tool_call_id, option, done }) => {
                        let _ = done.send(runtime.engine.answer_card(&tool_call_id, option).await);
                    }
                    Some(Control::Quit(done)) => {
                        self.show_cards(Vec::new());
                        runtime.stop().await;
                        return Next::Quit(Some(done));
                    }
                    None => {
                        self.show_cards(Vec::new());
                        runtime.stop().await;
                        return Next::Quit(None);
                    }
                },
            }
        }
        // The runtime ended by itself: the lock is released, and taken again once there is
        // something new to try.
        self.show_cards(Vec::new());
        runtime.wait().await;
        self.wait(None).await
    }

    /// Publishes the cards open now (the engine's list is the truth; events only say when to look).
    fn show_engine_cards(&self, cards: &[Card]) {
        self.show_cards(open_cards(cards, status::now_ms()));
    }

    /// Publishes `views`, oldest first as both sources give them (`open_cards`, here and in the
    /// runtime beside, whose `approvals/list` it is).
    fn show_cards(&self, views: Vec<ApprovalCard>) {
        self.cards.send_if_modified(|shown| {
            let changed = *shown != views;
            *shown = views;
            changed
        });
    }

    /// Waits for a change of the config, a redial request, the poll interval, or quitting.
    async fn wait(&mut self, poll: Option<Duration>) -> Next {
        let poll = async {
            match poll {
                Some(every) => tokio::time::sleep(every).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = poll => Next::TryAgain,
            changed = self.config.changed() => match changed {
                Ok(()) => Next::TryAgain,
                // Nobody watches the config: only a redial or the poll can wake this.
                Err(_) => std::future::pending().await,
            },
            control = self.control.recv() => match control {
                Some(Control::Redial | Control::EndLink) => Next::TryAgain,
                // No runtime runs here, so no card is open.
                Some(Control::Answer { done, .. }) => {
                    let _ = done.send(false);
                    Next::TryAgain
                }
                Some(Control::Quit(done)) => Next::Quit(Some(done)),
                None => Next::Quit(None),
            },
        }
    }
}
