//! Beside another runtime: when a headless `lembas service run` holds the device lock, the app
//! mirrors it through its control endpoint. The subscription brings its status and events (the
//! activity), the approval cards are read again whenever one opens or is settled, and the app's
//! answers and Stop all remote work go back through the endpoint. When the subscription ends (the
//! service stopped) the app tries the lock again.

use lembas_device::control::{CallError, Client, Pushed};
use lembas_device::events::DeviceEvent;
use lembas_device::paths::Dirs;
use lembas_device::poison::Recover;
use tokio::sync::mpsc;

use super::{Control, Next, Runner};

/// A connection to the other runtime for calls (the subscription has its own), dialled again at
/// the next call when it broke.
struct Calls {
    client: Option<Client>,
    dirs: Dirs,
}

impl Calls {
    async fn with<T>(
        &mut self,
        call: impl AsyncFnOnce(&mut Client) -> Result<T, CallError>,
    ) -> Result<T, CallError> {
        if self.client.is_none() {
            self.client = Some(
                Client::connect(&self.dirs)
                    .await
                    .map_err(|e| CallError::Io(std::io::Error::other(e)))?,
            );
        }
        let Some(client) = self.client.as_mut() else {
            return Err(CallError::Closed);
        };
        let result = call(client).await;
        if matches!(
            result,
            Err(CallError::Io(_) | CallError::Closed | CallError::Unreadable(_))
        ) {
            // The next call dials again.
            self.client = None;
        }
        result
    }
}

impl Runner {
    /// Mirrors the runtime serving the control socket; `None` when none can be reached (the app
    /// reads the status file instead).
    pub(super) async fn beside(&mut self) -> Option<Next> {
        let subscription = match Client::connect(&self.setup.dirs).await {
            Ok(client) => client.subscribe().await,
            Err(e) => {
                tracing::debug!("no control endpoint to mirror: {e}");
                return None;
            }
        };
        let mut subscription = match subscription {
            Ok(subscription) => subscription,
            Err(e) => {
                tracing::warn!("the running device refused the tray's subscription: {e}");
                return None;
            }
        };
        tracing::info!("mirroring the device run by another process through its control socket");
        // A subscription read is not cancel-safe (a half-read line would be lost): it is pumped
        // into a channel, which is.
        let (pushed_tx, mut pushed) = mpsc::channel(64);
        let pump = tokio::spawn(async move {
            while let Some(item) = subscription.next().await {
                if pushed_tx.send(item).await.is_err() {
                    return;
                }
            }
        });
        let mut calls = Calls {
            client: None,
            dirs: self.setup.dirs.clone(),
        };
        self.show_pending(&mut calls).await;
        let next = loop {
            tokio::select! {
                item = pushed.recv() => match item {
                    Some(Pushed::Status(status)) => self.set(|s| s.status = Some(status)),
                    Some(Pushed::Event(event)) => {
                        if matches!(event, DeviceEvent::ApprovalAsked { .. } | DeviceEvent::ApprovalSettled { .. }) {
                            self.show_pending(&mut calls).await;
                        }
                        self.activity.lock().recover().apply(&event);
                        self.changed.notify_one();
                    }
                    // Missed events may have opened or settled cards: read them again.
                    Some(Pushed::Missed(_)) => self.show_pending(&mut calls).await,
                    // The runtime has gone: the lock may be free now.
                    None => break Next::TryAgain,
                },
                control = self.control.recv() => match control {
                    Some(Control::EndLink) => {
                        if let Err(e) = calls.with(async |c| c.stop_remote_work().await).await {
                            tracing::error!("the running device did not stop remote work: {e}");
                            let said = format!("Stop all remote work did not reach the running device: {e}");
                            self.activity.lock().recover().note("error", said);
                            self.changed.notify_one();
                        }
                    }
                    // The other runtime reads the token on its next dial: nothing to do here.
                    Some(Control::Redial) => {}
                    Some(Control::Answer { tool_call_id, option, done }) => {
                        let answered = calls.with(async |c| c.answer(&tool_call_id, option).await).await;
                        if let Err(e) = &answered {
                            tracing::info!("{tool_call_id} was not answered: {e}");
                        }
                        let _ = done.send(answered.is_ok());
                        self.show_pending(&mut calls).await;
                    }
                    Some(Control::Quit(done)) => break Next::Quit(Some(done)),
                    None => break Next::Quit(None),
                },
            }
        };
        pump.abort();
        self.show_cards(Vec::new());
        Some(next)
    }

    /// Reads the other runtime's open cards and shows them; on failure the cards shown stay.
    async fn show_pending(&self, calls: &mut Calls) {
        match calls.with(async |c| c.approvals().await).await {
            Ok(pending) => self.show_cards(pending),
            Err(e) => tracing::warn!("cannot read the running device's approvals: {e}"),
        }
    }
}
