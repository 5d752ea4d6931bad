//! The tray's event loop: tao's, as tray-icon's own examples run it (GTK on Linux and the BSDs,
//! AppKit on macOS, Win32 on Windows). The tray icon and its menu live on this loop's thread, the
//! main one; the tokio tasks reach the loop through its proxy ([`UserEvent`]), and the menu's clicks
//! leave it on the clicks channel.

use std::sync::Arc;
use std::time::Instant;

use lembas_device::control::endpoint::Listener;

use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};
use tao::platform::run_return::EventLoopExtRunReturn;
use tokio::sync::{mpsc, watch};

use crate::host::Host;
use crate::tray::{Tray, TrayView};
use crate::tray_socket::{self, Served};
use crate::window::WindowProcess;
use crate::{Given, notices, notifier};
use lembas_protocol::view::View;

/// How long after start the window's files are read ahead (see [`crate::window::WindowProcess::warm_up`]).
#[cfg(target_os = "linux")]
const WARM_UP_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// What the runtime's tasks hand the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserEvent {
    /// The tray's view changed: show the latest (the views channel holds it, so redraws that
    /// pile up while the loop is busy show the newest once more, never an old one).
    Redraw,
    /// Quit has stopped the runtime: the loop ends.
    Quit,
}

/// Starts the host, the notices, the socket and the redraws on the tokio runtime (entered), and
/// the tray on this thread's event loop, until Quit; the exit code.
pub fn run(started: Instant, listener: Listener, given: Given) -> i32 {
    // tao starts GTK itself, but panics when it cannot: asked first, no display is a sentence.
    #[cfg(all(unix, not(target_os = "macos")))]
    if let Err(e) = gtk::init() {
        eprintln!("LLeMbas Desktop cannot start: no display to show its tray on ({e})");
        return 1;
    }
    let mut event_loop = EventLoopBuilder::<UserEvent>::with_user_event().build();
    // A tray app: no Dock icon, no menu bar of its own (the window process has its own).
    #[cfg(target_os = "macos")]
    {
        use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
        event_loop.set_activation_policy(ActivationPolicy::Accessory);
    }
    let proxy = event_loop.create_proxy();

    let label = given.setup.decisions.scheduled.setting.label.clone();
    let host = Host::start(given.setup);
    let window = WindowProcess::new(given.window_bin);
    let open_card = {
        let window = window.clone();
        move |id: &str| {
            let view = View::Card {
                tool_call_id: id.to_string(),
            };
            if let Err(e) = window.open(Some(view)) {
                tracing::error!("cannot open the window: {e}");
            }
        }
    };
    tokio::spawn(notices::run(
        host.clone(),
        Arc::from(notifier::platform()),
        Arc::new(open_card),
    ));
    let (clicks_tx, clicks) = mpsc::unbounded_channel();
    let (views_tx, mut views) = watch::channel(None);
    tokio::spawn(crate::redraw(host.clone(), views_tx));
    tokio::spawn(wake_on_redraws(views.clone(), proxy.clone()));
    tokio::spawn(tray_socket::serve(
        listener,
        Served {
            window: window.clone(),
        },
    ));
    // Once the tray is up and the runtime has started: the window's files read ahead.
    #[cfg(target_os = "linux")]
    tokio::spawn({
        let window = window.clone();
        async move {
            tokio::time::sleep(WARM_UP_AFTER).await;
            window.warm_up().await;
        }
    });
    tokio::spawn(crate::first_run::open_at_start(host.clone(), window.clone()));
    let quit = tokio::spawn(crate::on_clicks(clicks, host, window));
    tokio::spawn(async move {
        let _ = quit.await;
        let _ = proxy.send_event(UserEvent::Quit);
    });

    let mut clicks_tx = Some(clicks_tx);
    let mut tray: Option<Tray> = None;
    event_loop.run_return(move |event, _, control_flow| {
        *control_flow = ControlFlow::Wait;
        match event {
            // Built once the loop runs, as macOS requires (its application must be running).
            Event::NewEvents(StartCause::Init) => {
                let Some(clicks_tx) = clicks_tx.take() else {
                    return;
                };
                let built = Tray::build(&label, move |id| {
                    let _ = clicks_tx.send(id);
                });
                match built {
                    Ok(built) => {
                        tracing::info!(ms = started.elapsed().as_millis() as u64, "tray ready");
                        show(&built, &mut views);
                        tray = Some(built);
                    }
                    Err(e) => {
                        eprintln!("LLeMbas Desktop cannot start: {e}");
                        *control_flow = ControlFlow::ExitWithCode(1);
                    }
                }
            }
            Event::UserEvent(UserEvent::Redraw) => {
                if let Some(tray) = &tray {
                    show(tray, &mut views);
                }
            }
            Event::UserEvent(UserEvent::Quit) => {
                // The icon goes with the tray, here on the loop's thread.
                tray = None;
                *control_flow = ControlFlow::Exit;
            }
            _ => {}
        }
    })
}

/// Shows the latest view, if the first one has come.
fn show(tray: &Tray, views: &mut watch::Receiver<Option<TrayView>>) {
    if let Some(view) = views.borrow_and_update().clone()
        && let Err(e) = tray.show(&view)
    {
        tracing::warn!("cannot update the tray: {e}");
    }
}

/// Wakes the loop for each new view; ends when the redraws or the loop have.
async fn wake_on_redraws(mut views: watch::Receiver<Option<TrayView>>, proxy: EventLoopProxy<UserEvent>) {
    while views.changed().await.is_ok() {
        if proxy.send_event(UserEvent::Redraw).is_err() {
            return;
        }
    }
}
