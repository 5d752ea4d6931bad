//! Windows: `SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED)`, which holds only as
//! long as the thread that set it lives (and does not set it again), so a thread of its own sets it
//! and waits; dropping [`Hold`] ends the thread, which clears it. The power source is
//! `GetSystemPowerStatus`'s AC line.

use std::sync::mpsc;

use windows_sys::Win32::System::Power::{
    ES_CONTINUOUS, ES_SYSTEM_REQUIRED, GetSystemPowerStatus, SYSTEM_POWER_STATUS, SetThreadExecutionState,
};

use super::Power;

/// While this lives, the system does not sleep for idleness (the display may still turn off).
pub struct Hold {
    _release: mpsc::Sender<()>,
}

pub async fn hold(_why: &str) -> Result<Hold, String> {
    let (release, released) = mpsc::channel::<()>();
    let (set, was_set) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("keep-awake".into())
        .spawn(move || {
            // SAFETY: plain flags; the call changes only this thread's execution state.
            let previous = unsafe { SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED) };
            let _ = set.send(previous != 0);
            // Until the Hold is dropped (the sender gone), then cleared before the thread ends.
            let _ = released.recv();
            // SAFETY: as above.
            unsafe { SetThreadExecutionState(ES_CONTINUOUS) };
        })
        .map_err(|e| format!("cannot start a thread to hold it ({e})"))?;
    match was_set.await {
        Ok(true) => Ok(Hold { _release: release }),
        _ => Err("Windows refused SetThreadExecutionState".into()),
    }
}

pub async fn power() -> Power {
    let mut state = SYSTEM_POWER_STATUS {
        ACLineStatus: 255,
        BatteryFlag: 0,
        BatteryLifePercent: 0,
        SystemStatusFlag: 0,
        BatteryLifeTime: 0,
        BatteryFullLifeTime: 0,
    };
    // SAFETY: `state` is a valid SYSTEM_POWER_STATUS for the call to fill.
    if unsafe { GetSystemPowerStatus(&mut state) } == 0 {
        return Power::Unknown;
    }
    match state.ACLineStatus {
        0 => Power::Battery,
        1 => Power::Mains,
        _ => Power::Unknown,
    }
}
