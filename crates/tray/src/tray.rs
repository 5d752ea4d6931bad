//! The tray menu, on tray-icon and muda (Tauri's own tray crates, without Tauri, so no webview is
//! linked). Linux sends no tray clicks, so everything is in the menu; items are built once and
//! changed in place (STACK.md), and their ids are a typed enum. The icon and the items live on the
//! event loop's thread (the main one): [`Tray`] is built and shown there, and clicks leave it as
//! [`MenuId`]s.

use std::cell::Cell;

use muda::{CheckMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem};
use tray_icon::{Icon, TrayIcon, TrayIconBuilder, TrayIconEvent};

use crate::state::{IconLook, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuId {
    /// "N approvals waiting…": first while a card waits, opening the oldest.
    Approvals,
    Status,
    Scheduled,
    Remote,
    Now,
    StopAll,
    Autostart,
    Open,
    ActivityLog,
    Logs,
    Quit,
}

impl MenuId {
    pub const ALL: [MenuId; 11] = [
        MenuId::Approvals,
        MenuId::Status,
        MenuId::Remote,
        MenuId::Scheduled,
        MenuId::Now,
        MenuId::StopAll,
        MenuId::Autostart,
        MenuId::Open,
        MenuId::ActivityLog,
        MenuId::Logs,
        MenuId::Quit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MenuId::Approvals => "approvals",
            MenuId::Status => "status",
            MenuId::Scheduled => "scheduled",
            MenuId::Remote => "remote",
            MenuId::Now => "now",
            MenuId::StopAll => "stop-all",
            MenuId::Autostart => "autostart",
            MenuId::Open => "open",
            MenuId::ActivityLog => "activity-log",
            MenuId::Logs => "logs",
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
    /// Approval cards waiting for the person.
    pub waiting: usize,
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
            waiting: snapshot.cards.len(),
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
    menu: Menu,
    /// In the menu, first, only while a card waits.
    approvals: MenuItem,
    approvals_shown: Cell<bool>,
    status: MenuItem,
    scheduled: CheckMenuItem,
    remote: CheckMenuItem,
    now: MenuItem,
    stop_all: MenuItem,
    autostart: CheckMenuItem,
    /// The icon shown, so it is replaced only when the look changes.
    look: Cell<Option<IconLook>>,
}

#[derive(Debug, thiserror::Error)]
pub enum TrayError {
    #[error("the tray menu cannot be made: {0}")]
    Menu(#[from] muda::Error),
    #[error("the tray icon cannot be shown: {0}")]
    Icon(#[from] tray_icon::Error),
    #[error("the tray icon's picture is unreadable: {0}")]
    Picture(String),
}

fn picture(look: IconLook) -> &'static [u8] {
    match look {
        IconLook::Linked => include_bytes!("../../../icons/tray-linked.png"),
        IconLook::Active => include_bytes!("../../../icons/tray-active.png"),
        IconLook::Offline => include_bytes!("../../../icons/tray-offline.png"),
        IconLook::NeedsYou => include_bytes!("../../../icons/tray-needs-you.png"),
    }
}

fn icon(look: IconLook) -> Result<Icon, TrayError> {
    let (rgba, width, height) = decode_png(picture(look)).map_err(TrayError::Picture)?;
    #[cfg(target_os = "macos")]
    let rgba = match template_opacity(look) {
        Some(opacity) => as_template(rgba, opacity),
        None => rgba,
    };
    Icon::from_rgba(rgba, width, height).map_err(|e| TrayError::Picture(e.to_string()))
}

/// On macOS, whether the menu bar draws `look` as a template image (macOS colours it to suit the
/// bar, light or dark, as it does its own items, and reads only its alpha), and at what opacity.
/// The pictures are coloured squares with a white L, and the state's dot sits in a white ring:
/// [`as_template`] cuts the white out, so the L and the dot keep their shapes in one colour. Linked
/// is the mark, Active the mark with the dot, Offline the same dimmed (as macOS draws an item that
/// is off); NeedsYou stays in colour, to be seen. Stand-ins: monochrome pictures drawn for the
/// menu bar (the state in the shape, as Offline and Active differ only in colour) would replace
/// this, and the cutting with them.
fn template_opacity(look: IconLook) -> Option<u8> {
    match look {
        IconLook::Linked | IconLook::Active => Some(u8::MAX),
        IconLook::Offline => Some(u8::MAX / 2),
        IconLook::NeedsYou => None,
    }
}

/// RGBA pixels as a template image: black, white cut out (its anti-aliased edge in part), the rest
/// kept at `opacity`.
#[cfg(any(target_os = "macos", test))]
fn as_template(mut rgba: Vec<u8>, opacity: u8) -> Vec<u8> {
    const WHITE_FROM: u32 = 128;
    for pixel in rgba.chunks_exact_mut(4) {
        let lightest = u32::from(pixel[0].min(pixel[1]).min(pixel[2]));
        let white = lightest.saturating_sub(WHITE_FROM) * 255 / (255 - WHITE_FROM);
        let alpha = u32::from(pixel[3]) * (255 - white) / 255 * u32::from(opacity) / 255;
        pixel[..3].fill(0);
        pixel[3] = u8::try_from(alpha).unwrap_or(u8::MAX);
    }
    rgba
}

/// The PNG's pixels as 8-bit RGBA.
fn decode_png(bytes: &[u8]) -> Result<(Vec<u8>, u32, u32), String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8() | png::Transformations::ALPHA);
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader.output_buffer_size().ok_or("the picture is too large")?;
    let mut rgba = vec![0; size];
    let info = reader.next_frame(&mut rgba).map_err(|e| e.to_string())?;
    if info.color_type != png::ColorType::Rgba {
        return Err(format!("{:?} pixels, not RGBA", info.color_type));
    }
    rgba.truncate(info.buffer_size());
    Ok((rgba, info.width, info.height))
}

impl Tray {
    /// Builds the tray on the event loop's thread; `on_click` gets every menu click with its typed
    /// id (on that thread: it should only pass the id on).
    pub fn build(
        scheduled_label: &str,
        on_click: impl Fn(MenuId) + Send + Sync + 'static,
    ) -> Result<Tray, TrayError> {
        let id = MenuId::as_str;
        let approvals = MenuItem::with_id(id(MenuId::Approvals), "", true, None);
        let status = MenuItem::with_id(id(MenuId::Status), "Starting…", false, None);
        let scheduled = CheckMenuItem::with_id(id(MenuId::Scheduled), scheduled_label, true, false, None);
        let remote = CheckMenuItem::with_id(id(MenuId::Remote), "Remote work", true, false, None);
        let now = MenuItem::with_id(id(MenuId::Now), "Now: no remote work", false, None);
        let stop_all = MenuItem::with_id(id(MenuId::StopAll), "Stop all remote work", false, None);
        let autostart = CheckMenuItem::with_id(id(MenuId::Autostart), "Start at login", true, false, None);
        let open = MenuItem::with_id(id(MenuId::Open), "Open LLeMbas Desktop…", true, None);
        let activity_log = MenuItem::with_id(id(MenuId::ActivityLog), "Open activity log", true, None);
        let logs = MenuItem::with_id(id(MenuId::Logs), "Open logs", true, None);
        let quit = MenuItem::with_id(id(MenuId::Quit), "Quit", true, None);
        let menu = Menu::with_items(&[
            &status,
            &PredefinedMenuItem::separator(),
            // In dependency order: scheduled work is remote work.
            &remote,
            &scheduled,
            &PredefinedMenuItem::separator(),
            &now,
            &stop_all,
            &PredefinedMenuItem::separator(),
            &autostart,
            &open,
            &activity_log,
            &logs,
            &quit,
        ])?;
        MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
            match MenuId::parse(event.id().as_ref()) {
                Some(id) => on_click(id),
                None => tracing::warn!(id = event.id().as_ref(), "a menu id this app does not know"),
            }
        }));
        // A click on the icon opens the menu (tray-icon's default on macOS and Windows; Linux sends
        // no icon events). The events are dropped here, or they would pile up in tray-icon's
        // channel, one for each move of the pointer over the icon.
        TrayIconEvent::set_event_handler(Some(|_: TrayIconEvent| {}));
        let icon = TrayIconBuilder::new()
            .with_id("lembas")
            .with_icon(icon(IconLook::Offline)?)
            .with_icon_as_template(template_opacity(IconLook::Offline).is_some())
            .with_tooltip("LLeMbas Desktop")
            .with_menu(Box::new(menu.clone()))
            .build()?;
        Ok(Tray {
            icon,
            menu,
            approvals,
            approvals_shown: Cell::new(false),
            status,
            scheduled,
            remote,
            now,
            stop_all,
            autostart,
            look: Cell::new(None),
        })
    }

    /// Changes the items in place to show `view`.
    pub fn show(&self, view: &TrayView) -> Result<(), TrayError> {
        if let Some(label) = waiting_label(view.waiting) {
            self.approvals.set_text(label);
            if !self.approvals_shown.get() {
                self.menu.insert(&self.approvals, 0)?;
                self.approvals_shown.set(true);
            }
        } else if self.approvals_shown.get() {
            self.menu.remove(&self.approvals)?;
            self.approvals_shown.set(false);
        }
        self.status.set_text(&view.status);
        self.scheduled.set_checked(view.scheduled);
        self.remote.set_checked(view.remote);
        self.now.set_text(&view.now);
        self.stop_all.set_enabled(view.can_stop);
        self.autostart.set_checked(view.autostart);
        if self.look.get() != Some(view.look) {
            // tray-icon's set_icon draws any picture in colour on macOS: the template is said
            // each time.
            #[cfg(target_os = "macos")]
            self.icon
                .set_icon_with_as_template(Some(icon(view.look)?), template_opacity(view.look).is_some())?;
            #[cfg(not(target_os = "macos"))]
            self.icon.set_icon(Some(icon(view.look)?))?;
            #[cfg(all(unix, not(target_os = "macos")))]
            needs_attention(&self.icon, view.look == IconLook::NeedsYou);
            self.look.set(Some(view.look));
        }
        Ok(())
    }
}

/// StatusNotifierItem's `Status`: `NeedsAttention` while a card waits (a tray host may draw the
/// item apart, or bring it out of an overflow), `Active` otherwise.
#[cfg(all(unix, not(target_os = "macos")))]
fn needs_attention(icon: &TrayIcon, attention: bool) {
    use libappindicator::{AppIndicator, AppIndicatorStatus};
    use std::mem::ManuallyDrop;
    // SAFETY: tray-icon gives out only a pointer to its AppIndicator, valid while the TrayIcon
    // lives (borrowed here, on the thread that owns it). An AppIndicator is a single pointer to a
    // GObject and has no Drop: the bitwise copy is a second handle to the same object, through
    // which `set_status` (a `&mut self` method that only passes the pointer to C) is called
    // without a `&mut` to tray-icon's own value; the copy is never dropped.
    let mut handle: ManuallyDrop<AppIndicator> =
        ManuallyDrop::new(unsafe { std::ptr::read(icon.app_indicator()) });
    handle.set_status(match attention {
        true => AppIndicatorStatus::Attention,
        false => AppIndicatorStatus::Active,
    });
}

/// The first item's words while cards wait; none when none does.
fn waiting_label(waiting: usize) -> Option<String> {
    match waiting {
        0 => None,
        1 => Some("1 approval waiting…".to_string()),
        n => Some(format!("{n} approvals waiting…")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_item_counts_the_cards_waiting() {
        assert_eq!(waiting_label(0), None);
        assert_eq!(waiting_label(1).as_deref(), Some("1 approval waiting…"));
        assert_eq!(waiting_label(3).as_deref(), Some("3 approvals waiting…"));
    }

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

    #[test]
    fn every_look_has_a_picture() {
        for look in [
            IconLook::Linked,
            IconLook::Active,
            IconLook::Offline,
            IconLook::NeedsYou,
        ] {
            let (rgba, width, height) = decode_png(picture(look)).unwrap();
            assert_eq!(rgba.len(), (width * height * 4) as usize);
        }
    }

    #[test]
    fn a_template_is_the_picture_with_its_white_cut_out() {
        for look in [IconLook::Linked, IconLook::Active, IconLook::Offline] {
            let opacity = template_opacity(look).unwrap();
            let (picture, _, _) = decode_png(picture(look)).unwrap();
            let template = as_template(picture.clone(), opacity);
            let (mut white, mut colour) = (0, 0);
            for (before, after) in picture.chunks_exact(4).zip(template.chunks_exact(4)) {
                assert_eq!(after[..3], [0, 0, 0]);
                if before[3] == 255 && before[..3] == [255, 255, 255] {
                    assert_eq!(after[3], 0, "{look:?}: the L is cut out");
                    white += 1;
                } else if before[3] == 255 && before[..3].iter().any(|&c| c < 128) {
                    assert_eq!(after[3], opacity, "{look:?}: the rest is kept");
                    colour += 1;
                } else if before[3] == 0 {
                    assert_eq!(after[3], 0, "{look:?}: around it stays clear");
                }
            }
            assert!(
                white > 300 && colour > 1500,
                "{look:?}: {white} white, {colour} coloured"
            );
        }
        assert_eq!(template_opacity(IconLook::Offline), Some(127));
        // The look that asks for the person stays in colour.
        assert_eq!(template_opacity(IconLook::NeedsYou), None);
    }
}
