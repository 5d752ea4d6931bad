//! macOS: a card's notice as a user notification ([`user_notification`]) with **Allow** and
//! **Deny**, through UNUserNotificationCenter (the objc2 crates tao and tray-icon already build).
//! Set up once: the delegate that hears the person's answers, the category with the two buttons,
//! and the request to notify (alerts and sounds), which asks the person the first time only.
//!
//! UNUserNotificationCenter serves only a program run from an .app bundle with a bundle
//! identifier. A bare binary has none (NSBundle's main bundle is its folder, with no identifier),
//! and `currentNotificationCenter` throws there, which would end the program: so where
//! [`in_app_bundle`] says no, the center is never called, and every card opens in the window, as
//! it does where the person did not allow notifications, or one fails (as on Windows).
//!
//! Compiled for macOS (scripts/check-macos), never linked or run: there is no Mac here
//! (docs/testing.md).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use block2::RcBlock;
use objc2::rc::{Retained, autoreleasepool};
use objc2::runtime::{Bool, NSObject, NSObjectProtocol, ProtocolObject};
use objc2::{AnyThread, define_class, msg_send};
use objc2_foundation::{NSArray, NSBundle, NSError, NSSet, NSString};
use objc2_user_notifications::{
    UNAuthorizationOptions, UNErrorCode, UNErrorDomain, UNMutableNotificationContent, UNNotification,
    UNNotificationAction, UNNotificationActionOptions, UNNotificationCategory, UNNotificationCategoryOptions,
    UNNotificationDefaultActionIdentifier, UNNotificationDismissActionIdentifier,
    UNNotificationPresentationOptions, UNNotificationRequest, UNNotificationResponse, UNNotificationSound,
    UNUserNotificationCenter, UNUserNotificationCenterDelegate,
};
use tokio::sync::{OnceCell, oneshot};

use super::user_notification::{
    Action, BUTTONS, CATEGORY, Content, Waiting, content, in_app_bundle, response,
};
use super::{Notice, Notifier, OnOpen, Response, Shown};

pub struct UserNotifications;

/// The notices waiting for an answer; the delegate delivers to them.
static WAITING: Waiting = Waiting::new();
/// Numbers the notices this process shows (their identifiers).
static SERIAL: AtomicU64 = AtomicU64::new(1);
/// This run of the program, in the notices' identifiers: its process id and when it first showed one.
static RUN: OnceLock<String> = OnceLock::new();
/// The center holds its delegate weakly: this one lives as long as the program.
static DELEGATE: OnceLock<Retained<Delegate>> = OnceLock::new();
/// The set-up, done by the first notice; an error says why none can be shown.
static SET_UP: OnceCell<Result<(), String>> = OnceCell::const_new();

define_class!(
    // SAFETY: NSObject has no subclassing requirements; Delegate has no ivars and no Drop.
    #[unsafe(super(NSObject))]
    #[name = "LembasDesktopNoticeDelegate"]
    struct Delegate;

    unsafe impl NSObjectProtocol for Delegate {}

    // SAFETY: the signatures are those of UNUserNotificationCenterDelegate's two methods (as
    // objc2-user-notifications declares them); each calls its completion handler once.
    unsafe impl UNUserNotificationCenterDelegate for Delegate {
        /// The program's own notices show as banners even while it is frontmost (its window is
        /// another process, but the menu can be open).
        #[unsafe(method(userNotificationCenter:willPresentNotification:withCompletionHandler:))]
        fn will_present(
            &self,
            _center: &UNUserNotificationCenter,
            _notification: &UNNotification,
            completion_handler: &block2::DynBlock<dyn Fn(UNNotificationPresentationOptions)>,
        ) {
            completion_handler.call((UNNotificationPresentationOptions::Banner
                | UNNotificationPresentationOptions::List
                | UNNotificationPresentationOptions::Sound,));
        }

        /// The person's answer, handed to the notice's wait by its identifier.
        #[unsafe(method(userNotificationCenter:didReceiveNotificationResponse:withCompletionHandler:))]
        fn did_receive(
            &self,
            _center: &UNUserNotificationCenter,
            answer: &UNNotificationResponse,
            completion_handler: &block2::DynBlock<dyn Fn()>,
        ) {
            let identifier = answer.notification().request().identifier().to_string();
            let action = answer.actionIdentifier();
            // SAFETY: the framework's constant strings, set before any code of the program runs.
            let (body, closed) = unsafe {
                (
                    UNNotificationDefaultActionIdentifier,
                    UNNotificationDismissActionIdentifier,
                )
            };
            let button = action.to_string();
            let action = if action.isEqualToString(body) {
                Action::Body
            } else if action.isEqualToString(closed) {
                Action::Closed
            } else {
                Action::Button(&button)
            };
            if !WAITING.deliver(&identifier, response(action)) {
                tracing::debug!("an answer to {identifier}, which no card waits for");
            }
            completion_handler.call(());
        }
    }
);

impl Delegate {
    fn new() -> Retained<Delegate> {
        let this = Delegate::alloc().set_ivars(());
        // SAFETY: NSObject's designated initialiser, on a freshly allocated Delegate.
        unsafe { msg_send![super(this), init] }
    }
}

/// A completion handler's work as the `Fn` a block takes: what the framework hands it goes down
/// the oneshot (the first time; the framework calls each handler once).
fn once<T>(tx: oneshot::Sender<T>) -> impl Fn(T) {
    let tx = Mutex::new(Some(tx));
    move |value| {
        if let Some(tx) = tx.lock().ok().and_then(|mut tx| tx.take()) {
            let _ = tx.send(value);
        }
    }
}

/// An NSError from the center: whether it says the person did not allow notifications, and what
/// it says, for a person.
fn described(error: *mut NSError) -> Option<(bool, String)> {
    // SAFETY: the framework passes null or a valid NSError that lives for the handler's call.
    let error = unsafe { error.as_ref() }?;
    // SAFETY: the framework's constant string, set before any code of the program runs.
    let domain = unsafe { UNErrorDomain };
    let not_allowed = domain.is_some_and(|domain| error.domain().isEqualToString(domain))
        && error.code() == UNErrorCode::NotificationsNotAllowed.0;
    Some((not_allowed, error.localizedDescription().to_string()))
}

/// Checks the bundle, sets the delegate and the category, and asks to notify. The person's answer
/// to that question is not kept: they can change it in System Settings at any time, and a notice
/// posted without it fails, which opens the card in the window.
async fn set_up() -> Result<(), String> {
    let asked = autoreleasepool(|_| {
        let bundle = NSBundle::mainBundle();
        let identifier = bundle.bundleIdentifier().map(|id| id.to_string());
        let path = bundle.bundlePath().to_string();
        if !in_app_bundle(identifier.as_deref(), &path) {
            let why = format!(
                "{path} is not an .app bundle with a bundle identifier, which macOS notifications need"
            );
            tracing::info!("no notifications, cards open in the window: {why}");
            return Err(why);
        }
        let center = UNUserNotificationCenter::currentNotificationCenter();
        // An earlier run's notices are for cards this run shows anew, or that are gone.
        center.removeAllPendingNotificationRequests();
        center.removeAllDeliveredNotifications();
        let delegate = DELEGATE.get_or_init(Delegate::new);
        center.setDelegate(Some(ProtocolObject::from_ref(&**delegate)));
        center.setNotificationCategories(&NSSet::from_retained_slice(&[category()]));
        let (tx, rx) = oneshot::channel();
        let answered = once(tx);
        let handler = RcBlock::new(move |granted: Bool, error: *mut NSError| {
            answered((granted.as_bool(), described(error)));
        });
        center.requestAuthorizationWithOptions_completionHandler(
            UNAuthorizationOptions::Alert | UNAuthorizationOptions::Sound,
            &handler,
        );
        Ok(rx)
    })?;
    match asked.await {
        Ok((true, _)) => tracing::debug!("notifications allowed"),
        Ok((false, error)) => tracing::info!(
            "notifications are not allowed (cards open in the window): {}",
            error.map_or_else(|| "turned off in System Settings".to_string(), |(_, e)| e)
        ),
        Err(_) => tracing::warn!("the request to notify was never answered"),
    }
    Ok(())
}

/// The category every notice is posted in, with its two buttons. Closing a notice is reported
/// too (CustomDismissAction), so its wait ends as `Dismissed` as on the other systems.
fn category() -> Retained<UNNotificationCategory> {
    let buttons: Vec<Retained<UNNotificationAction>> = BUTTONS
        .iter()
        .map(|button| {
            UNNotificationAction::actionWithIdentifier_title_options(
                &NSString::from_str(button.identifier),
                &NSString::from_str(button.title),
                if button.destructive {
                    UNNotificationActionOptions::Destructive
                } else {
                    UNNotificationActionOptions::empty()
                },
            )
        })
        .collect();
    UNNotificationCategory::categoryWithIdentifier_actions_intentIdentifiers_options(
        &NSString::from_str(CATEGORY),
        &NSArray::from_retained_slice(&buttons),
        &NSArray::new(),
        UNNotificationCategoryOptions::CustomDismissAction,
    )
}

/// Why a notice was not posted.
enum Refused {
    /// The person did not allow notifications (or has not answered yet).
    NotAllowed,
    Failed(String),
}

/// Posts the notice; the receiver says whether the center took it.
fn post(content: &Content) -> oneshot::Receiver<Result<(), Refused>> {
    autoreleasepool(|_| {
        let body = UNMutableNotificationContent::new();
        body.setTitle(&NSString::from_str(&content.title));
        body.setBody(&NSString::from_str(&content.body));
        body.setCategoryIdentifier(&NSString::from_str(CATEGORY));
        body.setSound(Some(&UNNotificationSound::defaultSound()));
        let request = UNNotificationRequest::requestWithIdentifier_content_trigger(
            &NSString::from_str(&content.identifier),
            &body,
            None,
        );
        let (tx, rx) = oneshot::channel();
        let posted = once(tx);
        let handler = RcBlock::new(move |error: *mut NSError| {
            posted(match described(error) {
                None => Ok(()),
                Some((true, _)) => Err(Refused::NotAllowed),
                Some((_, error)) => Err(Refused::Failed(error)),
            });
        });
        UNUserNotificationCenter::currentNotificationCenter()
            .addNotificationRequest_withCompletionHandler(&request, Some(&handler));
        rx
    })
}

/// The notice, posted or about to be; dropping it takes it down, from the screen and from the
/// Notification Center's list (the card was answered here or elsewhere, or timed out).
struct TakeDownOnDrop(String);

impl Drop for TakeDownOnDrop {
    fn drop(&mut self) {
        autoreleasepool(|_| {
            let identifiers = NSArray::from_retained_slice(&[NSString::from_str(&self.0)]);
            let center = UNUserNotificationCenter::currentNotificationCenter();
            // Neither call waits, and one for a notice that is gone already is no error.
            center.removePendingNotificationRequestsWithIdentifiers(&identifiers);
            center.removeDeliveredNotificationsWithIdentifiers(&identifiers);
        });
    }
}

impl Notifier for UserNotifications {
    fn show(&self, notice: Notice, on_open: OnOpen) -> Shown {
        Box::pin(async move {
            if let Err(e) = SET_UP.get_or_init(set_up).await {
                // No notices for this program: the window shows the card, which waits there.
                tracing::debug!("no notice, the card opens in the window: {e}");
                on_open();
                return std::future::pending().await;
            }
            let run = RUN.get_or_init(|| {
                let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
                format!("{}.{}", std::process::id(), since.as_millis())
            });
            let content = content(&notice, run, SERIAL.fetch_add(1, Ordering::Relaxed));
            let (_registered, mut heard) = WAITING.wait(&content.identifier);
            let _shown = TakeDownOnDrop(content.identifier.clone());
            match post(&content).await {
                Ok(Ok(())) => {}
                Ok(Err(Refused::NotAllowed)) => {
                    on_open();
                    return std::future::pending().await;
                }
                Ok(Err(Refused::Failed(e))) => {
                    on_open();
                    return Err(format!("macOS did not show the notification: {e}"));
                }
                Err(_) => {
                    on_open();
                    return Err("macOS never said whether it showed the notification".to_string());
                }
            }
            while let Some(response) = heard.recv().await {
                match response {
                    Response::Open => on_open(),
                    response => return Ok(response),
                }
            }
            Err("the notification's delegate went away".to_string())
        })
    }
}
