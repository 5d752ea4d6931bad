//! Typing the device token at a terminal without it showing: the terminal's echo is off while the
//! line is read, and back on afterwards whatever happens (an error, Ctrl-C aside). Where standard
//! input is no terminal (a pipe, a file) there is no echo to turn off.

use std::io::IsTerminal;

/// Echo stays off while this lives.
pub struct EchoOff {
    #[cfg(unix)]
    before: Option<libc::termios>,
    #[cfg(windows)]
    before: Option<u32>,
}

impl EchoOff {
    /// Turns standard input's echo off when it is a terminal; does nothing otherwise.
    pub fn on_stdin() -> EchoOff {
        if !std::io::stdin().is_terminal() {
            return EchoOff { before: None };
        }
        EchoOff {
            before: platform::echo_off(),
        }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(before) = self.before.take() {
            platform::restore(before);
            // The Enter typed was not shown either: the next output starts on a line of its own.
            eprintln!();
        }
    }
}

#[cfg(unix)]
mod platform {
    /// The terminal's settings before, once echo is off; `None` when they could not be changed.
    pub fn echo_off() -> Option<libc::termios> {
        // SAFETY: tcgetattr and tcsetattr only read and write the termios given, on fd 0.
        unsafe {
            let mut settings: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(libc::STDIN_FILENO, &mut settings) != 0 {
                return None;
            }
            let before = settings;
            settings.c_lflag &= !libc::ECHO;
            (libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &settings) == 0).then_some(before)
        }
    }

    pub fn restore(before: libc::termios) {
        // SAFETY: as above; the settings are the ones read before.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &before);
        }
    }
}

#[cfg(windows)]
mod platform {
    use windows_sys::Win32::System::Console::{
        ENABLE_ECHO_INPUT, GetConsoleMode, GetStdHandle, STD_INPUT_HANDLE, SetConsoleMode,
    };

    pub fn echo_off() -> Option<u32> {
        // SAFETY: console calls on this process's own standard input handle.
        unsafe {
            let input = GetStdHandle(STD_INPUT_HANDLE);
            let mut mode = 0;
            if GetConsoleMode(input, &mut mode) == 0 {
                return None;
            }
            (SetConsoleMode(input, mode & !ENABLE_ECHO_INPUT) != 0).then_some(mode)
        }
    }

    pub fn restore(before: u32) {
        // SAFETY: as above; the mode is the one read before.
        unsafe {
            SetConsoleMode(GetStdHandle(STD_INPUT_HANDLE), before);
        }
    }
}
