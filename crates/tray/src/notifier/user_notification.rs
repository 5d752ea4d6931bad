//! The user notification a card's notice becomes on macOS: its identifier, title and body, the
//! category with **Allow** and **Deny**, what the person's action means, and the notices waiting
//! for one. Pure (Rust and tokio only), so it is tested on every system; `macos.rs` hands it to
//! UNUserNotificationCenter.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use tokio::sync::mpsc;

use super::{ALLOW, DENY, Response};
use crate::cards::Notice;

/// The category every notice is posted in: it carries the two buttons.
pub const CATEGORY: &str = "lembas.approval";

/// A button on the notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Button {
    pub identifier: &'static str,
    pub title: &'static str,
    /// Drawn as a destructive action (red).
    pub destructive: bool,
}

/// The category's buttons, in the order macOS shows them.
pub const BUTTONS: [Button; 2] = [
    Button {
        identifier: ALLOW,
        title: "Allow",
        destructive: false,
    },
    Button {
        identifier: DENY,
        title: "Deny",
        destructive: true,
    },
];

/// What a notification request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content {
    pub identifier: String,
    pub title: String,
    pub body: String,
}

/// The request for `notice`, the `serial`th shown by the run `run` of the program. Each showing
/// has its own identifier, not the card's: a card is shown again in its last minute, and taking
/// the first showing down must not take down the second. The run is in it because the
/// Notification Center keeps notices across runs: an answer to an earlier run's notice must never
/// reach this run's card with the same serial. The text is plain (no markup is read), so a
/// command's `<`, `&&` or `2>&1` stays as it is. An urgent notice is the same notice shown again,
/// as on Windows: macOS's louder kinds (time-sensitive, critical) need entitlements the app does
/// not have.
pub fn content(notice: &Notice, run: &str, serial: u64) -> Content {
    Content {
        identifier: format!("lembas-notice-{run}-{serial}"),
        title: notice.summary.clone(),
        body: notice.body.clone(),
    }
}

/// The action a response names, as the delegate reads it from the framework's identifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<'a> {
    /// `UNNotificationDefaultActionIdentifier`: a click on the notice itself.
    Body,
    /// `UNNotificationDismissActionIdentifier`: closed (the category asks to be told).
    Closed,
    /// One of the category's buttons, by its identifier.
    Button(&'a str),
}

/// What the person did. A button this app did not put there counts as closing the notice: the
/// card stays open in the window.
pub fn response(action: Action) -> Response {
    match action {
        Action::Body => Response::Open,
        Action::Closed => Response::Dismissed,
        Action::Button(ALLOW) => Response::Allow,
        Action::Button(DENY) => Response::Deny,
        Action::Button(_) => Response::Dismissed,
    }
}

/// The notices on screen, by identifier, each with the wait its answers go to. The delegate is
/// one object for every notice; this is how its answer finds the right card.
pub struct Waiting {
    by_identifier: Mutex<BTreeMap<String, mpsc::UnboundedSender<Response>>>,
}

/// A notice's place in [`Waiting`]; dropping it (the wait is over or was dropped) takes it out,
/// so a late answer goes nowhere.
pub struct Registered<'a> {
    waiting: &'a Waiting,
    identifier: String,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.waiting.entries().remove(&self.identifier);
    }
}

impl Default for Waiting {
    fn default() -> Self {
        Self::new()
    }
}

impl Waiting {
    pub const fn new() -> Waiting {
        Waiting {
            by_identifier: Mutex::new(BTreeMap::new()),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, mpsc::UnboundedSender<Response>>> {
        // A panic elsewhere while it was held leaves a map that is still whole.
        self.by_identifier.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for answers to the notice `identifier`, before it is posted, so a quick click is
    /// not lost.
    pub fn wait(&self, identifier: &str) -> (Registered<'_>, mpsc::UnboundedReceiver<Response>) {
        let (tx, rx) = mpsc::unbounded_channel();
        self.entries().insert(identifier.to_string(), tx);
        let registered = Registered {
            waiting: self,
            identifier: identifier.to_string(),
        };
        (registered, rx)
    }

    /// Hands `response` to the wait for `identifier`; false when none waits (the card was settled
    /// and its notice taken down, or the notice is from an earlier run of the app).
    pub fn deliver(&self, identifier: &str, response: Response) -> bool {
        self.entries()
            .get(identifier)
            .is_some_and(|tx| tx.send(response).is_ok())
    }
}

/// Whether this program runs from an .app bundle with a bundle identifier, from what NSBundle
/// says of the main bundle. UNUserNotificationCenter serves only such a program: a bare binary
/// (`cargo run`, target/…/lembas-desktop) makes `currentNotificationCenter` throw, which would
/// end the program, so that is never called for one.
pub fn in_app_bundle(bundle_identifier: Option<&str>, bundle_path: &str) -> bool {
    bundle_identifier.is_some_and(|id| !id.is_empty())
        && std::path::Path::new(bundle_path)
            .extension()
            .is_some_and(|extension| extension == "app")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_posted_as_plain_text_with_its_own_identifier() {
        let notice = Notice {
            summary: "LLeMbas asks: Run a command in ~/work".into(),
            body: "Run: make test && echo \"<done>\" 2>&1".into(),
            urgent: false,
        };
        let run = "4242.1796000000000";
        let first = content(&notice, run, 1);
        assert_eq!(first.identifier, "lembas-notice-4242.1796000000000-1");
        assert_eq!(first.title, "LLeMbas asks: Run a command in ~/work");
        assert_eq!(first.body, "Run: make test && echo \"<done>\" 2>&1");
        let urgent = Notice {
            urgent: true,
            ..notice.clone()
        };
        let again = content(&urgent, run, 2);
        assert_ne!(first.identifier, again.identifier);
        assert_eq!(again.title, first.title);
        let next_run = content(&notice, "4243.1796000100000", 1);
        assert_ne!(first.identifier, next_run.identifier);
    }

    #[test]
    fn the_category_has_allow_and_a_destructive_deny() {
        let buttons: Vec<(&str, &str, bool)> = BUTTONS
            .iter()
            .map(|b| (b.identifier, b.title, b.destructive))
            .collect();
        assert_eq!(buttons, [("allow", "Allow", false), ("deny", "Deny", true)]);
    }

    #[test]
    fn actions_read_as_responses() {
        assert_eq!(response(Action::Button("allow")), Response::Allow);
        assert_eq!(response(Action::Button("deny")), Response::Deny);
        assert_eq!(response(Action::Body), Response::Open);
        assert_eq!(response(Action::Closed), Response::Dismissed);
        // The freedesktop name of a body click is no button here.
        assert_eq!(response(Action::Button("default")), Response::Dismissed);
        assert_eq!(response(Action::Button("Allow")), Response::Dismissed);
    }

    #[test]
    fn an_answer_reaches_only_its_own_notice_and_none_after_the_wait_is_dropped() {
        let waiting = Waiting::new();
        let (first, mut first_rx) = waiting.wait("lembas-notice-1");
        let (_second, mut second_rx) = waiting.wait("lembas-notice-2");
        assert!(waiting.deliver("lembas-notice-1", Response::Open));
        assert!(waiting.deliver("lembas-notice-1", Response::Allow));
        assert!(waiting.deliver("lembas-notice-2", Response::Deny));
        assert_eq!(first_rx.try_recv(), Ok(Response::Open));
        assert_eq!(first_rx.try_recv(), Ok(Response::Allow));
        assert_eq!(second_rx.try_recv(), Ok(Response::Deny));
        assert!(second_rx.try_recv().is_err());
        assert!(!waiting.deliver("lembas-notice-3", Response::Allow));
        drop(first);
        assert!(!waiting.deliver("lembas-notice-1", Response::Deny));
        assert!(waiting.deliver("lembas-notice-2", Response::Allow));
    }

    #[test]
    fn an_answer_whose_wait_was_dropped_goes_nowhere() {
        let waiting = Waiting::new();
        let (_registered, rx) = waiting.wait("lembas-notice-1");
        drop(rx);
        assert!(!waiting.deliver("lembas-notice-1", Response::Allow));
    }

    #[test]
    fn only_an_app_bundle_with_an_identifier_may_use_the_notification_center() {
        assert!(in_app_bundle(
            Some("ai.lembas.desktop"),
            "/Applications/LLeMbas Desktop.app"
        ));
        // A bare binary: its directory is the main bundle, with no identifier.
        assert!(!in_app_bundle(None, "/Users/me/src/lembas/target/release"));
        // An Info.plist linked into a bare binary gives an identifier, but no bundle.
        assert!(!in_app_bundle(
            Some("ai.lembas.desktop"),
            "/Users/me/src/lembas/target/release"
        ));
        assert!(!in_app_bundle(Some(""), "/Applications/LLeMbas Desktop.app"));
        assert!(!in_app_bundle(None, "/Applications/LLeMbas Desktop.app"));
    }
}
