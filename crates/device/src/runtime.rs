//! The device runtime: what `lembas service run` and the desktop app both run. Takes the device
//! lock, keeps the settings current from the file, supervises the link, and publishes the state
//! (a watch for the app, `status.json` for other processes, events for activity lists and the
//! activity log), and serves the local control socket (`crate::control`) for the other faces.

use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;

use crate::activity_log;
use crate::control;
use crate::desktop_view::activity::Activity;
use crate::engine::Engine;
use crate::events::DeviceEvent;
use crate::keep_awake::{self, Work};
use crate::link::supervisor::{AtFinal, Supervisor};
use crate::link::{LinkOptions, Stop, wake};
use crate::lock::{self, DeviceLock, LockError};
use crate::poison::Recover;
use crate::settings::{self, Settings, SettingsError};
use crate::setup::Setup;
use crate::status::{self, Status};
use crate::terminal::board::Board;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(transparent)]
    Settings(#[from] SettingsError),
}

pub struct Runtime {
    pub status: watch::Receiver<Status>,
    pub events: broadcast::Sender<DeviceEvent>,
    pub settings: watch::Receiver<Arc<Settings>>,
    /// The agent sessions: they outlive links, and the desktop answers approval cards here.
    pub engine: Engine,
    deleted_watch: JoinHandle<()>,
    /// Holds the running jobs to the limits at each change of the settings.
    limits_watch: JoinHandle<()>,
    /// Keeps the recent activity the window shows (`window/state`).
    activity_fold: JoinHandle<()>,
    /// Holds the computer awake while remote work runs; aborted, it lets it sleep.
    keep_awake: JoinHandle<()>,
    activity_log: activity_log::Writer,
    shutdown: watch::Sender<bool>,
    wake: broadcast::Sender<()>,
    supervisor: JoinHandle<Stop>,
    /// `None` when the socket could not be made (said in the log): the runtime works without it.
    control: Option<control::Server>,
    _lock: DeviceLock,
    _watcher: notify::RecommendedWatcher,
}

impl Runtime {
    /// Starts the runtime; `what` names the holder of the device lock ("lembas service run").
    /// The link's timings are the decided ones with the config's `link:` overrides. A final state
    /// of the link (not logged in, token refused, server too old) ends it.
    pub fn start(setup: Setup, what: &str) -> Result<Runtime, StartError> {
        Runtime::start_with(setup, what, AtFinal::Stop)
    }

    /// As [`Runtime::start`], choosing what a final state does: the desktop's runtime waits in it,
    /// serving its control socket, so the window can log in through it.
    pub fn start_with(setup: Setup, what: &str, at_final: AtFinal) -> Result<Runtime, StartError> {
        let lock = lock::acquire(&setup.dirs, what)?;
        let config = setup.dirs.config_file();
        let home = setup.dirs.home.clone();
        let initial = settings::load_from(&config, &home)?;
        let options = LinkOptions::from_settings(&initial.link, &setup.decisions.link);
        let (settings_tx, settings_rx) = watch::channel(Arc::new(initial));
        let (status_tx, status_rx) = watch::channel(Status::new());
        let (events, _) = broadcast::channel(256);
        // Subscribed before anything can happen, so the log misses nothing from the start.
        let activity_log = activity_log::spawn(
            events.subscribe(),
            activity_log::default_file(&setup.dirs, &setup.decisions.activity),
        );
        let (shutdown, shutdown_rx) = watch::channel(false);

        let (watcher, mut changed) = settings::watch::watch(&config)?;
        let status_for_settings = status_tx.clone();
        tokio::spawn(async move {
            while changed.recv().await.is_some() {
                match settings::load_from(&config, &home) {
                    Ok(new) => {
                        settings_tx.send_if_modified(|current| {
                            let differs = **current != new;
                            if differs {
                                *current = Arc::new(new.clone());
                            }
                            differs
                        });
                    }
                    // Keep the last good settings; say why the new ones were not taken.
                    Err(e) => {
                        tracing::error!("{e}");
                        status_for_settings.send_modify(|s| s.last_error = Some(e.to_string()));
                    }
                }
            }
        });

        let mut status_watch = status_rx.clone();
        let dirs = setup.dirs.clone();
        tokio::spawn(async move {
            loop {
                let snapshot = status_watch.borrow_and_update().clone();
                if let Err(e) = status::write(&dirs, &snapshot) {
                    tracing::warn!("cannot write the status file: {e}");
                }
                if status_watch.changed().await.is_err() {
                    return;
                }
            }
        });

        let wake = wake::spawn_watch();
        let engine = Engine::new(settings_rx.clone(), events.clone(), setup.clone());
        let deleted_watch = engine.spawn_deleted_watch();
        let limits_watch = engine.spawn_limits_watch();
        let activity = Arc::new(Mutex::new(Activity::default()));
        let (work_changed, work_watch) = watch::channel(());
        let activity_fold = spawn_activity_fold(
            events.subscribe(),
            activity.clone(),
            status_tx.clone(),
            work_changed,
        );
        let keep_awake = keep_awake::spawn(
            settings_rx.clone(),
            work_watch,
            {
                let (activity, engine) = (activity.clone(), engine.clone());
                move || {
                    let now = activity.lock().recover().now();
                    Work {
                        turns: now.turns,
                        jobs: engine.jobs_running(),
                        watches: now.watches,
                    }
                }
            },
            status_tx.clone(),
        );
        let board = Board::default();
        let control = control::Server::start(control::RuntimeHandles {
            status: status_rx.clone(),
            events: events.clone(),
            engine: engine.clone(),
            board: board.clone(),
            wake: wake.clone(),
            activity,
            holder: what.to_string(),
        })
        .inspect_err(|e| {
            tracing::error!(
                "no control socket at {}: {e}; lembas approvals and the tray cannot reach this runtime",
                control::socket_path(&setup.dirs).display()
            )
        })
        .ok();
        let supervisor = Supervisor {
            options,
            settings: settings_rx.clone(),
            status: status_tx,
            events: events.clone(),
            engine: engine.clone(),
            board,
            shutdown: shutdown_rx,
            wake: wake.clone(),
            at_final,
        };
        let supervisor = tokio::spawn(supervisor.run());
        Ok(Runtime {
            status: status_rx,
            events,
            settings: settings_rx,
            engine,
            deleted_watch,
            limits_watch,
            activity_fold,
            keep_awake,
            activity_log,
            shutdown,
            wake,
            supervisor,
            control,
            _lock: lock,
            _watcher: watcher,
        })
    }

    /// Asks the link to close (1000) and waits for the supervisor to end.
    pub async fn stop(self) -> Stop {
        let _ = self.shutdown.send(true);
        self.wait().await
    }

    /// Waits until the supervisor stops by itself (a final state) or is stopped.
    pub async fn wait(mut self) -> Stop {
        let stop = (&mut self.supervisor).await.unwrap_or(Stop::Shutdown);
        // Clients find no runtime from here on and read the files, which get the last word below.
        self.control.take();
        self.deleted_watch.abort();
        self.limits_watch.abort();
        self.activity_fold.abort();
        self.keep_awake.abort();
        // The link's last state is in the log before the device says it stopped.
        self.activity_log.finish().await;
        // The last status must reach the file before the lock is released.
        let last = self.status.borrow().clone();
        let _ = status::write(&self.engine.setup().dirs, &last);
        stop
    }

    /// Ends the current link now and dials again at once, as after a wake from sleep: everything
    /// the link started (shells, watches) ends with it. The desktop's "Stop all remote work" uses
    /// it after turning remote work off, so running watches stop instead of running to their end.
    pub fn end_link(&self) {
        let _ = self.wake.send(());
    }

    /// A handle to ask for shutdown from elsewhere (a signal handler).
    pub fn shutdown_handle(&self) -> watch::Sender<bool> {
        self.shutdown.clone()
    }
}

/// Folds every event into the recent activity and what runs now, as the window shows them.
/// Folds the events into the activity the control socket serves, and the agents at work into the
/// status file (`lembas status`); `work_changed` is told after each event (keep-awake counts again).
fn spawn_activity_fold(
    mut events: broadcast::Receiver<DeviceEvent>,
    activity: Arc<Mutex<Activity>>,
    status: watch::Sender<Status>,
    work_changed: watch::Sender<()>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(event) => {
                    let mut activity = activity.lock().recover();
                    activity.apply(&event);
                    if matches!(event, DeviceEvent::Turn { .. }) {
                        let (agents, folders) = (activity.now().turns, activity.working_folders());
                        status.send_modify(|s| {
                            s.agents_working = agents;
                            s.working_in = folders;
                        });
                    }
                    drop(activity);
                    work_changed.send_replace(());
                }
                // A few lines missed from a bounded list: the log has them all.
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    })
}
