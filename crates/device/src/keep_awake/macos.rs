//! macOS: an IOKit power assertion (`PreventUserIdleSystemSleep`), named with the reason so
//! `pmset -g assertions` shows it; dropping [`Hold`] releases it, and the system drops it when the
//! process ends. The power source is IOKit's providing power source ("AC Power", "Battery Power").
//! Not compiled here (no Apple SDK on Linux, docs/windows.md): kept to a few plain C calls.

use std::ffi::{c_char, c_void};

use super::Power;

type CFStringRef = *const c_void;
type IOPMAssertionID = u32;

const UTF8: u32 = 0x0800_0100;
const LEVEL_ON: u32 = 255;
const SUCCESS: i32 = 0;

#[link(name = "CoreFoundation", kind = "framework")]
unsafe extern "C" {
    fn CFStringCreateWithBytes(
        alloc: *const c_void,
        bytes: *const u8,
        len: isize,
        encoding: u32,
        external: u8,
    ) -> CFStringRef;
    fn CFStringGetCString(string: CFStringRef, buffer: *mut c_char, size: isize, encoding: u32) -> u8;
    fn CFRelease(object: *const c_void);
}

#[link(name = "IOKit", kind = "framework")]
unsafe extern "C" {
    fn IOPMAssertionCreateWithName(
        kind: CFStringRef,
        level: u32,
        name: CFStringRef,
        id: *mut IOPMAssertionID,
    ) -> i32;
    fn IOPMAssertionRelease(id: IOPMAssertionID) -> i32;
    fn IOPSCopyPowerSourcesInfo() -> *const c_void;
    fn IOPSGetProvidingPowerSourceType(snapshot: *const c_void) -> CFStringRef;
}

/// A CFString owned here, released on drop.
struct Text(CFStringRef);

impl Text {
    fn new(text: &str) -> Option<Text> {
        let len = isize::try_from(text.len()).ok()?;
        // SAFETY: the bytes are valid for `len`; the string is copied (not external).
        let made = unsafe { CFStringCreateWithBytes(std::ptr::null(), text.as_ptr(), len, UTF8, 0) };
        (!made.is_null()).then_some(Text(made))
    }
}

impl Drop for Text {
    fn drop(&mut self) {
        // SAFETY: made by a Create call above, released once.
        unsafe { CFRelease(self.0) }
    }
}

pub struct Hold(IOPMAssertionID);

impl Drop for Hold {
    fn drop(&mut self) {
        // SAFETY: an id IOPMAssertionCreateWithName gave, released once.
        unsafe { IOPMAssertionRelease(self.0) };
    }
}

pub async fn hold(why: &str) -> Result<Hold, String> {
    let kind = Text::new("PreventUserIdleSystemSleep").ok_or("cannot make a CFString")?;
    let name = Text::new(&format!("LLeMbas: {why}")).ok_or("cannot make a CFString")?;
    let mut id: IOPMAssertionID = 0;
    // SAFETY: both strings live through the call; `id` is written on success.
    let result = unsafe { IOPMAssertionCreateWithName(kind.0, LEVEL_ON, name.0, &mut id) };
    if result == SUCCESS {
        Ok(Hold(id))
    } else {
        Err(format!("IOKit refused the power assertion ({result:#x})"))
    }
}

pub async fn power() -> Power {
    // SAFETY: a Copy call: the snapshot is owned here and released below; the type string is
    // borrowed from it (Get rule) and read before the release.
    unsafe {
        let snapshot = IOPSCopyPowerSourcesInfo();
        if snapshot.is_null() {
            return Power::Unknown;
        }
        let source = IOPSGetProvidingPowerSourceType(snapshot);
        let mut buffer = [0 as c_char; 64];
        let read = !source.is_null() && CFStringGetCString(source, buffer.as_mut_ptr(), 64, UTF8) != 0;
        CFRelease(snapshot);
        if !read {
            return Power::Unknown;
        }
        match std::ffi::CStr::from_ptr(buffer.as_ptr()).to_str() {
            Ok("Battery Power") => Power::Battery,
            Ok("AC Power") => Power::Mains,
            _ => Power::Unknown,
        }
    }
}
