//! The local control socket's methods and pushes (one runtime, many faces: the CLI, the tray, the
//! window). What each takes and gives is documented where the device serves it
//! (`lembas_device::control`).

use crate::named;

named! {
    /// A request to the runtime's control socket.
    pub enum ControlMethod {
        /// `{ cookie }` → `{}`: the first request of a connection.
        Hello = "hello",
        Status = "status",
        Subscribe = "subscribe",
        ApprovalsList = "approvals/list",
        ApprovalsAnswer = "approvals/answer",
        Activity = "activity",
        WindowState = "window/state",
        SettingsChange = "settings/change",
        Login = "login",
        Logout = "logout",
        SessionsList = "sessions/list",
        SessionsTimeline = "sessions/timeline",
        SessionsStop = "sessions/stop",
        /// Puts back the files a turn and the later ones changed.
        SessionsUndo = "sessions/undo",
        /// Takes back an "Allow for this chat".
        SessionsRevoke = "sessions/revoke",
        TerminalsList = "terminals/list",
        TerminalsReplay = "terminals/replay",
        TerminalsHangUp = "terminals/hang_up",
        TerminalsWrite = "terminals/write",
        RemoteStop = "remote/stop",
        ShownList = "shown/list",
        ShownRead = "shown/read",
        /// A chat at this computer (the spec's terminal): a new one, a stored one or the latest
        /// in a folder, held by the connection that opened it.
        ChatOpen = "chat/open",
        ChatPrompt = "chat/prompt",
        ChatSteer = "chat/steer",
        ChatShare = "chat/share",
        ChatClose = "chat/close",
        ChatConfigure = "chat/configure",
        ChatModels = "chat/models",
        ChatAnswer = "chat/answer",
        ChatFiles = "chat/files",
        ChatCommands = "chat/commands",
    }
}

named! {
    /// A notification the runtime pushes to a subscribed connection.
    pub enum ControlPush {
        Status = "status",
        Event = "event",
        /// `{ count }`: events the connection read too slowly to get.
        Missed = "missed",
        SessionUpdate = "session/update",
        SessionMissed = "session/missed",
        TerminalOutput = "terminal/output",
        TerminalExit = "terminal/exit",
        TerminalMissed = "terminal/missed",
        /// A card opened in a session: `{ session_id, card }`.
        Card = "card",
        /// A card taken down: `{ session_id, tool_call_id, by }`.
        CardSettled = "card/settled",
        /// A held chat's sharing changed by itself: `{ session_id, sharing }`.
        ChatSharing = "chat/sharing",
        /// A job of a session started, changed or ended: `{ session_id, state, job }` (also each of
        /// a chat's jobs when a front end takes it).
        ChatJob = "chat/job",
    }
}
