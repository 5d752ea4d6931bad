//! `lembas chat`: a chat with the agent in this terminal, in a folder of this computer, shared with
//! LLeMbas when the person wants (ENGINE.md "Chats started at this computer").
//!
//! Full screen (the alternate screen, drawn by ratatui through crossterm, as Codex's TUI) rather than
//! inline in the scrollback (as Claude Code's): a chat here is a live thing that changes in place (a
//! tool call's status and output, the plan, a card that waits and is taken down when LLeMbas
//! answers it, the status line's link), and a full screen redraws all of that from the state alone.
//! Drawn from the state, a resize storm or a terminal too small costs one redraw of what fits, never
//! a scrollback torn by lines printed at the wrong width; and only the end of the conversation that
//! fits is laid out, so a chat of thousands of messages opens as fast as a short one. The price, the
//! terminal's own scrollback, is paid back by PgUp/PgDn, and the chat stays in the store
//! (`lembas chat -c` continues it, `lembas sessions list` lists it).
//!
//! The parts: [`screen`] (the conversation fed updates), [`input`] (the input line), [`complete`]
//! (`/` and `@`), [`cards`] (approvals, questions, plans), [`commands`] (the front end's own `/`
//! commands), [`app`] (what each key does), [`draw`] (the frame) and [`text`] (its columns),
//! [`connection`] (the runtime), and [`run`], the loop that joins them to the terminal.

mod app;
mod cards;
mod commands;
mod complete;
mod connection;
mod draw;
mod input;
mod run;
mod screen;
mod text;

pub use run::{Options, run};
