//! A freedesktop notification server of the test's own on its private session bus, which records
//! each notice and clicks its buttons as a person would.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::mpsc;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

/// How long the app gets to show or close a notice.
const WAIT: Duration = Duration::from_secs(20);
pub const PATH: &str = "/org/freedesktop/Notifications";
/// What a notification server says when CloseNotification took a notice down.
pub const CLOSED_BY_CALL: u32 = 3;

#[derive(Debug)]
pub enum Seen {
    Shown {
        id: u32,
        summary: String,
        body: String,
        actions: Vec<String>,
        /// The `urgency` hint: 0 low, 1 normal, 2 critical.
        urgency: Option<u8>,
    },
    Closed(u32),
}

/// The freedesktop notification service, as far as the app uses it.
pub struct Server {
    seen: mpsc::UnboundedSender<Seen>,
    last: u32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    #[allow(clippy::too_many_arguments)]
    async fn notify(
        &mut self,
        _app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        self.last += 1;
        let urgency = hints.get("urgency").and_then(|u| u8::try_from(u).ok());
        let _ = self.seen.send(Seen::Shown {
            id: self.last,
            summary,
            body,
            actions,
            urgency,
        });
        self.last
    }

    async fn close_notification(
        &self,
        id: u32,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<()> {
        let _ = self.seen.send(Seen::Closed(id));
        Self::notification_closed(&emitter, id, CLOSED_BY_CALL).await?;
        Ok(())
    }

    fn get_capabilities(&self) -> Vec<String> {
        // As GNOME Shell and dunst do: the body is read as markup.
        vec![
            "actions".into(),
            "body".into(),
            "body-markup".into(),
            "persistence".into(),
        ]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "test notifications".into(),
            "lembas".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    #[zbus(signal)]
    async fn action_invoked(emitter: &SignalEmitter<'_>, id: u32, action_key: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn notification_closed(emitter: &SignalEmitter<'_>, id: u32, reason: u32) -> zbus::Result<()>;
}

/// A person clicking `key` on notice `id`. The app listens for the click once its Notify call has
/// returned; a person never clicks within the same instant, so neither does this.
pub async fn click(bus: &zbus::Connection, id: u32, key: &str) {
    tokio::time::sleep(Duration::from_millis(500)).await;
    let server = bus.object_server().interface::<_, Server>(PATH).await.unwrap();
    Server::action_invoked(server.signal_emitter(), id, key)
        .await
        .unwrap();
}

pub async fn next(seen: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(WAIT, seen.recv())
        .await
        .expect("the notification server heard from the app in time")
        .expect("the server runs")
}

pub async fn shown(seen: &mut mpsc::UnboundedReceiver<Seen>) -> (u32, String, String, Vec<String>) {
    match next(seen).await {
        Seen::Shown {
            id,
            summary,
            body,
            actions,
            ..
        } => (id, summary, body, actions),
        other => panic!("a notice, not {other:?}"),
    }
}

/// The next notice's body and urgency.
pub async fn shown_urgency(seen: &mut mpsc::UnboundedReceiver<Seen>) -> (u32, String, Option<u8>) {
    match next(seen).await {
        Seen::Shown {
            id, body, urgency, ..
        } => (id, body, urgency),
        other => panic!("a notice, not {other:?}"),
    }
}

pub async fn closed(seen: &mut mpsc::UnboundedReceiver<Seen>) -> u32 {
    match next(seen).await {
        Seen::Closed(id) => id,
        other => panic!("a CloseNotification, not {other:?}"),
    }
}

/// Serves the notification service on the session bus (a private one: scripts/with-keyring).
pub async fn notification_server() -> (zbus::Connection, mpsc::UnboundedReceiver<Seen>) {
    let (seen_tx, seen) = mpsc::unbounded_channel();
    let bus = zbus::connection::Builder::session()
        .unwrap()
        .name("org.freedesktop.Notifications")
        .unwrap()
        .serve_at(
            PATH,
            Server {
                seen: seen_tx,
                last: 0,
            },
        )
        .unwrap()
        .build()
        .await
        .expect("a private session bus: run through scripts/with-keyring");
    (bus, seen)
}
