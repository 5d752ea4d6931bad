//! What an error's `data.reason` says: a code a client branches on (the sentence in `message` is
//! for the person). docs/protocol.md names those of the link (scheduled refusals); the control socket's are
//! the device's own.

use crate::named;

named! {
    /// The code in an error's `data: { reason }`.
    pub enum Reason {
        // The link (docs/protocol.md).
        /// The folder is outside the roots, untrusted where trust is required, or gone.
        Folder = "folder",
        /// Scheduled work is off on this device.
        ScheduledOff = "scheduled_off",
        /// Nobody is there to approve a plan (a scheduled turn).
        Plan = "plan",
        /// The project's rules or the mode do not let it run.
        Permission = "permission",
        /// The model cannot be used.
        Model = "model",
        /// `/undo` in a scheduled turn.
        Undo = "undo",
        // The control socket.
        /// The connection did not present the runtime's control cookie.
        Cookie = "cookie",
        /// Another user's process.
        OtherUser = "other_user",
        /// No such session here.
        Unknown = "unknown",
        /// The card or terminal is no longer open.
        NotOpen = "not_open",
        /// The shown file is no longer kept.
        NotKept = "not_kept",
        /// Nothing is running there.
        NotRunning = "not_running",
        /// A settings change the device does not take.
        Refused = "refused",
        ConfigInvalid = "config_invalid",
        ConfigBusy = "config_busy",
        ConfigUnwritable = "config_unwritable",
        // Logging in.
        MalformedToken = "malformed_token",
        BadServer = "bad_server",
        TokenRefused = "token_refused",
        NoLinkScope = "no_link_scope",
        ServerNeedsUpdate = "server_needs_update",
        Unreachable = "unreachable",
        BadAnswer = "bad_answer",
        Keychain = "keychain",
        Internal = "internal",
        /// Logging out left the token or the config behind.
        LogoutIncomplete = "logout_incomplete",
        // A chat at this computer (`chat/*`).
        /// Another connection or an editor holds the session.
        Held = "held",
        /// The chat is not held by this connection.
        NotHeld = "not_held",
        /// The chat's folder is outside the roots: it is local, never shared.
        Outside = "outside",
        /// No login, so no models.
        NotLoggedIn = "not_logged_in",
    }
}
