//! Desktop notifications with buttons, behind one small interface: the platform's own service shows
//! a card's notice with **Allow** and **Deny**, says which the person clicked (or that they clicked
//! the notice itself), and takes it down when the card is settled elsewhere.
//!
//! Linux (and the BSDs): the freedesktop notification service over D-Bus, through notify-rust.
//! Windows: a toast with the two buttons ([`toast_xml`], `toast`), the window where toasts are off.
//! macOS: a user notification with the two buttons through UNUserNotificationCenter
//! ([`user_notification`], `macos`); it needs the program run from its .app bundle, and where it
//! runs without one, or notifications are not allowed, the card opens in the window. (Tauri's
//! notification plugin has no buttons on the desktop.) The Windows and macOS adapters are compiled
//! here, never run (docs/testing.md).

use std::future::Future;
use std::pin::Pin;

use crate::cards::Notice;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(windows)]
mod toast;
pub mod toast_xml;
pub mod user_notification;

/// What the person did with a notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    Allow,
    Deny,
    /// Clicked the notice itself: show the card in the window.
    Open,
    /// Closed it without choosing, or it expired: the card stays open in the window.
    Dismissed,
}

/// The action keys on the notice (`default` is the freedesktop name of a click on its body).
pub const ALLOW: &str = "allow";
pub const DENY: &str = "deny";
pub const OPEN: &str = "default";

impl Response {
    pub fn from_action(key: &str) -> Response {
        match key {
            ALLOW => Response::Allow,
            DENY => Response::Deny,
            OPEN => Response::Open,
            _ => Response::Dismissed,
        }
    }
}

pub type Shown = Pin<Box<dyn Future<Output = Result<Response, String>> + Send>>;

/// Called each time the notice itself is clicked (it stays up: the card is still open).
pub type OnOpen = Box<dyn Fn() + Send + Sync>;

pub trait Notifier: Send + Sync + 'static {
    /// Shows `notice` and resolves with the person's answer (`Allow`, `Deny`) or `Dismissed`;
    /// a click on the notice calls `on_open` and the wait goes on. Dropping the future takes the
    /// notice down (the card was answered elsewhere, or timed out).
    fn show(&self, notice: Notice, on_open: OnOpen) -> Shown;
}

/// The platform's notifier.
pub fn platform() -> Box<dyn Notifier> {
    #[cfg(all(unix, not(target_os = "macos")))]
    return Box::new(freedesktop::Freedesktop);
    #[cfg(windows)]
    return Box::new(toast::Toasts);
    #[cfg(target_os = "macos")]
    return Box::new(macos::UserNotifications);
}

#[cfg(all(unix, not(target_os = "macos")))]
pub mod freedesktop {
    use notify_rust::{Hint, Notification, Timeout, Urgency};
    use std::sync::Arc;

    use super::{ALLOW, DENY, Notice, Notifier, OPEN, OnOpen, Response, Shown};

    pub struct Freedesktop;

    /// Text as freedesktop body markup reads it: `&`, `<` and `>` as entities.
    pub fn escaped(text: &str) -> String {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    }

    /// Closes the notice when the wait for it is dropped before the person answered.
    struct CloseOnDrop(Option<Arc<notify_rust::NotificationHandle>>);

    impl Drop for CloseOnDrop {
        fn drop(&mut self) {
            // Dropped outside a runtime (the app is ending): the notice stays until closed by hand.
            if let (Some(handle), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
                runtime.spawn(async move { handle.close_async().await });
            }
        }
    }

    impl Notifier for Freedesktop {
        fn show(&self, notice: Notice, on_open: OnOpen) -> Shown {
            Box::pin(async move {
                // A server that reads markup in the body would take a command's `<`, `&&` or `2>&1`
                // for markup: the body goes escaped to such a one, as it is to any other.
                let markup = tokio::task::spawn_blocking(notify_rust::get_capabilities)
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .is_some_and(|capabilities| capabilities.iter().any(|c| c == "body-markup"));
                let body = if markup {
                    escaped(&notice.body)
                } else {
                    notice.body.clone()
                };
                let mut notification = Notification::new();
                notification
                    .appname("LLeMbas Desktop")
                    .summary(&notice.summary)
                    .body(&body)
                    .action(OPEN, "Open")
                    .action(ALLOW, "Allow")
                    .action(DENY, "Deny")
                    // It stays until answered, even after a click on it (resident): the card
                    // waits, so the notice does too.
                    .timeout(Timeout::Never)
                    // Normal: a card is not an emergency that breaks through Do Not Disturb,
                    // until its last minute.
                    .urgency(if notice.urgent {
                        Urgency::Critical
                    } else {
                        Urgency::Normal
                    })
                    .hint(Hint::Resident(true));
                // Shown on a task of its own: a card settled while the service is still showing
                // its notice drops this future, and the notice must still be taken down. What the
                // task hands over closes the notice when dropped unread: when this future is gone
                // (send fails), and when it goes after the send but before it read the handle.
                let (shown_tx, shown_rx) = tokio::sync::oneshot::channel();
                tokio::spawn(async move {
                    let shown = notification
                        .show_async()
                        .await
                        .map(|handle| CloseOnDrop(Some(Arc::new(handle))));
                    // Refused: the value comes back and is dropped here, which takes the notice down.
                    let _ = shown_tx.send(shown);
                });
                let mut guard = match shown_rx.await {
                    Ok(Ok(guard)) => guard,
                    Ok(Err(e)) => return Err(format!("the notification service refused the notice: {e}")),
                    Err(_) => return Err("the notice could not be shown".to_string()),
                };
                let Some(handle) = guard.0.clone() else {
                    return Err("the notice could not be shown".to_string());
                };
                loop {
                    let mut response = Response::Dismissed;
                    handle
                        .wait_for_action_async(|r| {
                            if let notify_rust::ActionResponse::Custom(key) = r {
                                response = Response::from_action(key);
                            }
                        })
                        .await;
                    match response {
                        Response::Open => {
                            on_open();
                            continue;
                        }
                        // Resident: the server keeps it after a button, so it is taken down here.
                        Response::Allow | Response::Deny => handle.close_async().await,
                        // Closed by the person or the server: nothing to take down.
                        Response::Dismissed => {}
                    }
                    guard.0 = None;
                    return Ok(response);
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_keys_read_as_responses() {
        assert_eq!(Response::from_action("allow"), Response::Allow);
        assert_eq!(Response::from_action("deny"), Response::Deny);
        assert_eq!(Response::from_action("default"), Response::Open);
        assert_eq!(Response::from_action("__closed"), Response::Dismissed);
    }
}
