//! The tray menu. Linux sends no tray clicks, so everything is in the menu; items are built once
//! and changed in place (STACK.md), and their ids are a typed enum.

use std::sync::Mutex;

use tauri::image::Image;
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Wry};

use crate::state::{IconLook, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuId {
    Status,
    Scheduled,
    Remote,
    Now,
    StopAll,
    Autostart,
    Open,
    ActivityLog,
    Quit,
}

impl MenuId {
    pub const ALL: [MenuId; 9] = [
        MenuId::Status,
        MenuId::Scheduled,
        MenuId::Remote,
        MenuId::Now,
        MenuId::StopAll,
        MenuId::Autostart,
        MenuId::Open,
        MenuId::ActivityLog,
        MenuId::Quit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MenuId::Status => "status",
            MenuId::Scheduled => "scheduled",
            MenuId::Remote => "remote",
            MenuId::Now => "now",
            MenuId::StopAll => "stop-all",
            MenuId::Autostart => "autostart",
            MenuId::Open => "open",
            MenuId::ActivityLog => "activity-log",
            MenuId::Quit => "quit",
        }
    }

    pub fn parse(id: &str) -> Option<MenuId> {
        MenuId::ALL.into_iter().find(|m| m.as_str() == id)
    }
}

/// What the menu shows; pure, from the snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct TrayView {
    pub status: String,
    pub scheduled: bool,
    pub remote: bool,
    pub now: String,
    pub can_stop: bool,
    pub autostart: bool,
    pub look: IconLook,
}

impl TrayView {
    pub fn of(snapshot: &Snapshot, autostart: bool, look: IconLook) -> TrayView {
        TrayView {
            status: snapshot.link.line.clone(),
            scheduled: snapshot.remote.scheduled,
            remote: snapshot.remote.enabled,
            now: snapshot.now_line.clone(),
            // Turning remote work off is worth offering even when nothing runs this second.
            can_stop: snapshot.remote.enabled || !snapshot.now.is_idle(),
            autostart,
            look,
        }
    }
}

pub struct Tray {
    icon: TrayIcon,
    status: MenuItem<Wry>,
    scheduled: CheckMenuItem<Wry>,
    remote: CheckMenuItem<Wry>,
    now: MenuItem<Wry>,
    stop_all: MenuItem<Wry>,
    autostart: CheckMenuItem<Wry>,
    /// The icon shown, so it is replaced only when the look changes.
    look: Mutex<Option<IconLook>>,
}

fn icon(look: IconLook) -> tauri::Result<Image<'static>> {
    let bytes: &'static [u8] = match look {
        IconLook::Linked => include_bytes!("../../icons/tray-linked.png"),
        IconLook::Active => include_bytes!("../../icons/tray-active.png"),
        IconLook::Offline => include_bytes!("../../icons/tray-offline.png"),
    };
    Image::from_bytes(bytes)
}

impl Tray {
    /// Builds the tray; `on_click` gets every menu click with its typed id.
    pub fn build(
        app: &AppHandle,
        scheduled_label: &str,
        on_click: impl Fn(&AppHandle, MenuId) + Send + Sync + 'static,
    ) -> tauri::Result<Tray> {
        let id = MenuId::as_str;
        let status = MenuItem::with_id(app, id(MenuId::Status), "Starting…", false, None::<&str>)?;
        let scheduled = CheckMenuItem::with_id(
            app,
            id(MenuId::Scheduled),
            scheduled_label,
            true,
            false,
            None::<&str>,
        )?;
        let remote =
            CheckMenuItem::with_id(app, id(MenuId::Remote), "Remote work", true, false, None::<&str>)?;
        let now = MenuItem::with_id(app, id(MenuId::Now), "Now: no remote work", false, None::<&str>)?;
        let stop_all = MenuItem::with_id(
            app,
            id(MenuId::StopAll),
            "Stop all remote work",
            false,
            None::<&str>,
        )?;
        let autostart = CheckMenuItem::with_id(
            app,
            id(MenuId::Autostart),
            "Start at login",
            true,
            false,
            None::<&str>,
        )?;
        let open = MenuItem::with_id(app, id(MenuId::Open), "Open LLeMbas Desktop…", true, None::<&str>)?;
        let activity_log = MenuItem::with_id(
            app,
            id(MenuId::ActivityLog),
            "Open activity log",
            true,
            None::<&str>,
        )?;
        let quit = MenuItem::with_id(app, id(MenuId::Quit), "Quit", true, None::<&str>)?;
        let menu = Menu::with_items(
            app,
            &[
                &status,
                &PredefinedMenuItem::separator(app)?,
                &scheduled,
                &remote,
                &PredefinedMenuItem::separator(app)?,
                &now,
                &stop_all,
                &PredefinedMenuItem::separator(app)?,
                &autostart,
                &open,
                &activity_log,
                &quit,
            ],
        )?;
        let icon = TrayIconBuilder::with_id("lembas")
            .icon(icon(IconLook::Offline)?)
            .tooltip("LLeMbas Desktop")
            .menu(&menu)
            .on_menu_event(move |app, event| match MenuId::parse(event.id().as_ref()) {
                Some(id) => on_click(app, id),
                None => tracing::warn!(id = event.id().as_ref(), "a menu id this app does not know"),
            })
            .build(app)?;
        Ok(Tray {
            icon,
            status,
            scheduled,
            remote,
            now,
            stop_all,
            autostart,
            look: Mutex::new(None),
        })
    }

    /// Changes the items in place to show `view`.
    pub fn show(&self, view: &TrayView) -> tauri::Result<()> {
        self.status.set_text(&view.status)?;
        self.scheduled.set_checked(view.scheduled)?;
        self.remote.set_checked(view.remote)?;
        self.now.set_text(&view.now)?;
        self.stop_all.set_enabled(view.can_stop)?;
        self.autostart.set_checked(view.autostart)?;
        let mut shown = self.look.lock().unwrap_or_else(|p| p.into_inner());
        if *shown != Some(view.look) {
            self.icon.set_icon(Some(icon(view.look)?))?;
            *shown = Some(view.look);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn menu_ids_round_trip_and_are_distinct() {
        for id in MenuId::ALL {
            assert_eq!(MenuId::parse(id.as_str()), Some(id));
        }
        let mut names: Vec<_> = MenuId::ALL.iter().map(|m| m.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), MenuId::ALL.len());
        assert_eq!(MenuId::parse("rm -rf"), None);
    }
}
