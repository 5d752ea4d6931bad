//! Windows: a card's notice as a toast ([`toast_xml`]) with **Allow** and **Deny**, through the
//! WinRT toast API in the `windows` crate (the version and the API the Tauri world's
//! `tauri-winrt-notification` wraps). Not through that crate itself: it cannot take a toast down,
//! which a card answered elsewhere needs, nor say whether the person turned toasts off.
//!
//! Toasts need the app's id (`APP_ID`) known to Windows: the installer registers it under
//! `HKCU\Software\Classes\AppUserModelId`. Where toasts are off (for the app or for all), or the
//! toast fails, the card opens in the window instead.
//!
//! Cross-built, never run: Wine has no toasts (docs/testing.md).

use std::sync::Arc;

use tokio::sync::mpsc;
use windows::Data::Xml::Dom::XmlDocument;
use windows::Foundation::TypedEventHandler;
use windows::UI::Notifications::{
    NotificationSetting, ToastActivatedEventArgs, ToastDismissalReason, ToastDismissedEventArgs,
    ToastFailedEventArgs, ToastNotification, ToastNotificationManager, ToastNotifier,
};
use windows::Win32::System::Com::{COINIT_MULTITHREADED, CoInitializeEx};
use windows::core::{HSTRING, IInspectable, Interface};

use super::toast_xml::{OPEN, toast_xml};
use super::{Notice, Notifier, OnOpen, Response, Shown};

/// The app's id for toasts, as the installer registers it.
pub const APP_ID: &str = "LLeMbas.Desktop";

pub struct Toasts;

/// What the toast's handlers say, in the order the person acts.
enum Event {
    /// A button or the toast itself, by its arguments.
    Activated(String),
    Dismissed(Option<ToastDismissalReason>),
    Failed,
}

/// The toast on screen; dropping it takes it down (the card was settled elsewhere).
struct HideOnDrop {
    notifier: ToastNotifier,
    toast: ToastNotification,
}

impl Drop for HideOnDrop {
    fn drop(&mut self) {
        let (notifier, toast) = (self.notifier.clone(), self.toast.clone());
        let hide = move || {
            in_com();
            // Gone already (answered, dismissed): nothing to take down, and no error worth telling.
            let _ = notifier.Hide(&toast);
        };
        // Dropped on an async task's thread: the call goes where COM can be set up for it.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(hide)),
            Err(_) => hide(),
        }
    }
}

/// Puts this thread in COM's multithreaded apartment, which the WinRT calls need; a thread already
/// in COM is no error.
fn in_com() {
    // SAFETY: initialises COM for this thread; no pointer is passed.
    let _ = unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) };
}

impl Notifier for Toasts {
    fn show(&self, notice: Notice, on_open: OnOpen) -> Shown {
        Box::pin(async move {
            let (events, mut heard) = mpsc::unbounded_channel();
            let shown = tokio::task::spawn_blocking(move || show(&notice, events))
                .await
                .map_err(|e| format!("the toast could not be shown: {e}"))?;
            let _shown = match shown {
                Ok(Some(shown)) => shown,
                // Toasts are off: the window shows the card, which waits there.
                Ok(None) => {
                    on_open();
                    return std::future::pending().await;
                }
                Err(e) => {
                    on_open();
                    return Err(format!("the toast could not be shown: {e}"));
                }
            };
            while let Some(event) = heard.recv().await {
                match event {
                    Event::Activated(arguments) if arguments == OPEN => on_open(),
                    Event::Activated(arguments) => return Ok(Response::from_action(&arguments)),
                    // Taken down by the tray itself (a new toast for the card's last minute).
                    Event::Dismissed(Some(ToastDismissalReason::ApplicationHidden)) => {}
                    Event::Dismissed(_) => return Ok(Response::Dismissed),
                    Event::Failed => {
                        on_open();
                        return Err("Windows did not show the toast".to_string());
                    }
                }
            }
            Err("the toast's handlers went away".to_string())
        })
    }
}

/// Shows the toast; `None` when the person (or a policy) turned toasts off.
fn show(notice: &Notice, events: mpsc::UnboundedSender<Event>) -> windows::core::Result<Option<HideOnDrop>> {
    in_com();
    let notifier = ToastNotificationManager::CreateToastNotifierWithId(&HSTRING::from(APP_ID))?;
    if notifier.Setting()? != NotificationSetting::Enabled {
        return Ok(None);
    }
    let xml = XmlDocument::new()?;
    xml.LoadXml(&HSTRING::from(toast_xml(notice)))?;
    let toast = ToastNotification::CreateToastNotification(&xml)?;
    let events = Arc::new(events);
    let activated = events.clone();
    toast.Activated(&TypedEventHandler::<ToastNotification, IInspectable>::new(
        move |_, args| {
            let args: &Option<IInspectable> = &args;
            let arguments = args
                .as_ref()
                .and_then(|args| args.cast::<ToastActivatedEventArgs>().ok())
                .and_then(|args| args.Arguments().ok())
                .map(|arguments| arguments.to_string())
                .unwrap_or_else(|| OPEN.to_string());
            let _ = activated.send(Event::Activated(arguments));
            Ok(())
        },
    ))?;
    let dismissed = events.clone();
    toast.Dismissed(
        &TypedEventHandler::<ToastNotification, ToastDismissedEventArgs>::new(move |_, args| {
            let args: &Option<ToastDismissedEventArgs> = &args;
            let reason = args.as_ref().and_then(|args| args.Reason().ok());
            let _ = dismissed.send(Event::Dismissed(reason));
            Ok(())
        }),
    )?;
    toast.Failed(
        &TypedEventHandler::<ToastNotification, ToastFailedEventArgs>::new(move |_, _| {
            let _ = events.send(Event::Failed);
            Ok(())
        }),
    )?;
    notifier.Show(&toast)?;
    Ok(Some(HideOnDrop { notifier, toast }))
}
