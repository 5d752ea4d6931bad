//! The local control endpoint: one runtime (the holder of the device lock), many faces. The
//! runtime serves it; `lembas status|activity|sessions|approvals` and the tray app are its clients.
//!
//! Where: a Unix socket, `$XDG_RUNTIME_DIR/lembas/control.sock`, or `$XDG_STATE_HOME/lembas/run/
//! control.sock` when `XDG_RUNTIME_DIR` is unset (a folder under the user's home, made 0700 and
//! checked, instead of a guessable name in /tmp that another user could take first). The folder is
//! 0700 and the socket 0600, and every connection's peer credentials are checked: another user's
//! process is refused even where the modes were widened. Windows (a named pipe) is not built yet.
//!
//! Who: the same user is not enough, since remote work (a model's command, a watch) runs as that
//! user too. Each connection first presents the control cookie ([`cookie`]): 32 random bytes (hex)
//! the runtime writes at each start to `<state>/control.cookie` (0600), in the state folder no
//! remote session reads, so only the person's own processes (the CLI, the tray, the window) can.
//! [`Client::connect`] presents it.
//!
//! What: JSON-RPC 2.0, one message a line, UTF-8. Each method is bound to its params and its
//! answer once, in [`calls`]; the server serves and [`Client::ask`] calls through those types.
//! Requests (params an object or absent):
//! - `hello` `{ cookie }` → `{}`: the first request. Until it matched, every other request is
//!   refused: -32600 with `data: { reason: "cookie" }` (a wrong cookie's `hello`: -32602, the same
//!   reason); the connection goes on, and a right `hello` later admits it.
//! - `status` → `{ running: true, status }` ([`crate::status::Status`]).
//! - `subscribe` `{ sessions?, terminals? }` → `{}`, then notifications: `status` (params the
//!   [`crate::status::Status`], at once and on every change), `event` (params a
//!   [`crate::events::DeviceEvent`]) and `missed` (`{ count }`: events this client read too slowly
//!   to get). With `sessions: true` also `session/update` `{ session_id, update }` (the ACP update
//!   the client got; `_lembas_turn` and `_lembas_decision` updates are the window's own) and
//!   `session/missed` `{ count }` (re-read the transcript); with `terminals: true` also
//!   `terminal/output` `{ id, offset, data }` (base64, from byte `offset` of the terminal's output),
//!   `terminal/exit` `{ id, code }` and `terminal/missed` `{ count }` (re-read with replay). These
//!   streams never wait for a slow client: it skips, and is told.
//! - `approvals/list` → `[ApprovalCard]`, the oldest card first: the one card the window, the
//!   notifications and `lembas approvals` show.
//! - `approvals/answer` `{ id, answer: "allow" | "deny" }` → `{ id, session_id, answer }`; the same
//!   path as the desktop's answer (first answer wins, the client is told `_lembas/permission/settled`).
//!   A card no longer open is -32602 with `data: { reason: "not_open" }`.
//! - `activity` `{ n?, described? }` → `{ lines, unreadable, path }`: the activity log's newest
//!   lines, newest first, as logged; `described: true` gives each as `{ at_ms, kind, text }` (at
//!   most 1000), for a view.
//! - `window/state` → the window's snapshot ([`crate::desktop_view::Snapshot`]: the link, the settings,
//!   the recent activity, the open approval cards). A window reads it again on each `status` or
//!   `event` notification of its subscription.
//! - `settings/change` `{ setting, value }` → the new snapshot: one setting written to the config
//!   ([`settings::SettingChange`]); a refused change is -32602 with `data: { reason: "refused" }`.
//! - `login` `{ server, token }` → `{ message }`: the token proved and stored in the keychain, the
//!   server written to the config, the link dialled again; errors carry `data.reason`
//!   (`bad_server`, `unreachable`, `token_refused`, `malformed_token`, ...). The token is never
//!   logged.
//! - `logout` → `{ message }`: the login gone from the config and the keychain, the link ended.
//! - `sessions/list` → `[SessionSummary + { running, open, model, mode, scheduled }]`: those
//!   running in this runtime first, then the latest.
//! - `sessions/timeline` `{ session_id }` → [`crate::engine::timeline::Timeline`]: every turn of
//!   the chat (those taken out of the conversation too, marked), each tool call a step: the
//!   device's headline, what the agent said it would do, the command or diff, what decided it (the
//!   mode and the judge's reason, an earlier "Allow for this chat", or who answered, when and where),
//!   its result; the files each turn's copies can put back; the grants in force. -32602 `unknown`
//!   for no such session.
//! - `sessions/stop` `{ session_id }` → `{ session_id, stopped: true }`: the running turn is
//!   cancelled as by session/cancel. -32602 `not_running` when nothing runs there.
//! - `sessions/undo` `{ session_id, turn_id }` → `{ session_id, turn_id, files, left }`: the files
//!   that turn and every later one changed with `write` and `edit` put back as they were before
//!   it, from the copies kept (judged as writes under the limits now; `left` names those that
//!   stayed). The conversation stays. -32602 `refused` while a turn runs, `unknown` for no such
//!   turn, `undo` when no copies are kept from that turn on.
//! - `sessions/revoke` `{ session_id, grant }` → `[Grant]`, those left: one "Allow for this chat"
//!   taken back (`{ kind: "writes" }`, `{ kind: "command", pattern }`, `{ kind: "tool", name }`);
//!   the next such call asks again. -32602 `not_open` when it is not in force.
//! - `terminals/list` → `[{ id, cwd, shell, opened_ms, offset }]`, the remote terminals open here.
//! - `terminals/replay` `{ id }` → `{ id, data, offset }`: the last 256 KiB of its output (base64)
//!   and the offset they end at.
//! - `terminals/hang_up` `{ id }` → `{ id }`: hung up as the instance's close; it hears the exit.
//! - `terminals/write` `{ id, data }` → `{}`: typed into the shell (the window's Type here too).
//!   Unknown terminals are -32602 `not_open`.
//! - `remote/stop` → `{ remote_enabled: false, stopped_turns }`: Stop all remote work (remote work
//!   off in the config, every running turn cancelled, and the link ends at once so shells and
//!   watches stop), as the tray's menu item does.
//! - `shown/list` `{ session_id? }` → `[ShownFile]` ([`crate::engine::show::ShownFile`]): the files
//!   sessions showed (the `show` tool) still kept, newest first; one session's when given.
//! - `shown/read` `{ id }` → `{ file: ShownFile, text }`; one no longer kept is -32602 with
//!   `data: { reason: "not_kept" }`. Each new one is announced as the event `shown`.
//!
//! - `chat/open` `{ cwd?, session_id?, latest?, model?, share? }` → [`chat::params::ChatOpened`]
//!   `{ session_id, cwd, title, model, mode, max_mode, effort, sharing, timeline, commands }`: a
//!   chat at this computer (the spec's "terminal"), held by this connection until `chat/close` or
//!   until the connection ends. A new chat in `cwd` (absolute; a folder outside the roots is a
//!   local chat, never shared), the stored or link-held `session_id` (taken over), or with
//!   `latest` the latest chat in `cwd` (a new one when none). `model` the instance's id (the
//!   login's default when absent); `share` from its start, else as `chat.share` says (a chat the
//!   link held is shared, since the instance has it). -32602 `held` (another connection or an
//!   editor holds it), `unknown`, `model`, `not_logged_in`, `folder` (not absolute, missing, not a
//!   folder). Every open card of the chat is pushed (`card`) with the answer.
//! - `chat/prompt` `{ session_id, text, turn_id? }` → `{ turn_id }`: a turn starts or waits its
//!   turn; what it does streams as `session/update`. `/…` is an engine command, `@path` expanded
//!   as for the link's prompt. -32602 `not_held` on a chat this connection does not hold.
//! - `chat/steer` `{ session_id, text }` → `{ queued }`: words for the running turn's next step;
//!   -32602 `not_running` when nothing runs.
//! - `chat/share` `{ session_id, share, remember? }` → [`chat::params::Sharing`] `{ shared,
//!   refused, ask, linked }`: announced to the instance (`_lembas/session/announce`) or left
//!   (`_lembas/session/left`); `remember` keeps the answer for the folder (`chat.share: ask`).
//!   -32602 `outside` for a chat outside the roots.
//! - `chat/close` `{ session_id }` → `{}`: let go: its running turn is cancelled, its cards
//!   withdrawn, `left` sent when it was shared; it stays open in the runtime under the link's
//!   rules. The connection's end lets go of every chat it held.
//! - `chat/configure` `{ session_id, model?, mode?, effort? }` → `{ model, mode, effort }`: the
//!   link's `_lembas/configure` rules (the mode lowered to the ceiling; -32602 `model`).
//! - `chat/models` → `[{ id, name }]`: the instance's models for this device.
//! - `chat/answer` `{ session_id, tool_call_id, answer }` → `{}`: a card's answer in the link's
//!   shapes (approval, question, plan); first answer wins, and the link hears
//!   `_lembas/permission/settled`. -32602 `not_open` when it no longer waits.
//! - `chat/files` (`_lembas/files/search`'s params) → `{ root, files }` and `chat/commands`
//!   (`{ sessionId?, cwd? }`) → `{ commands }`: the `@` and `/` completions, answered as the link's;
//!   a held chat's own folder is used as it is (a local chat's lies outside the roots).
//!
//! Every `chat/*` request naming a chat other than `chat/open` needs this connection to hold it:
//! -32602 `not_held` otherwise.
//!
//! With `sessions: true`, a subscribed connection is also pushed `card` `{ session_id, card }` (a
//! card opened, the request as the link gets it), `card/settled` `{ session_id, tool_call_id, by }`
//! (answered elsewhere, timed out or withdrawn), `chat/sharing` `{ session_id, sharing }` (a held
//! chat's sharing changed by itself) and `chat/job` `{ session_id, state, job }` (a background job
//! started, changed or ended, as the link's `job` event says it; `update` for each job of a chat
//! `chat/open` has just taken).
//!
//! The desktop's runtime stays up in the link's final states (not logged in, token refused), so
//! its window can log in through it; a headless `lembas service run` ends in them.
//!
//! A malformed line gets an error answer (-32700 / -32600, id null) and the connection goes on.

mod activity;
pub mod calls;
pub mod chat;
pub mod client;
pub mod cookie;
pub mod credentials;
pub mod endpoint;
mod login;
pub mod params;
mod runtime_handles;
mod server;
pub mod sessions;
pub mod settings;
mod terminals;
mod window_state;
#[cfg(test)]
mod window_types;

use std::path::PathBuf;

use crate::paths::Dirs;

pub use crate::desktop_view::pending::{ApprovalCard, Detail, Diff, Plan, ScheduledRun};
pub use client::{CallError, Client, ConnectError, Pushed, Subscription};
/// What [`Client::answer`] picks.
pub use lembas_protocol::permission::ApprovalOption;
pub(crate) use runtime_handles::RuntimeHandles;
pub(crate) use server::Server;
pub use settings::SettingChange;
pub use window_state::DESKTOP_HOLDER;

/// The runtime's control socket, in the runtime folder ([`Dirs::runtime`]).
pub fn socket_path(dirs: &Dirs) -> PathBuf {
    dirs.runtime.join("control.sock")
}
