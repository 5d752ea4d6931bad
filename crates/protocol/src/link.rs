//! The methods of the link (docs/protocol.md): ACP's own and the `_lembas/*` extension, each with who sends
//! it, whether it is answered, and the capability a device lists before the other side relies on
//! it. The device is ACP's agent; the instance (or an editor on `lembas serve --stdio`) its client.

use crate::Capability;

/// Who sends a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client → device (agent).
    ToDevice,
    /// Device (agent) → client.
    FromDevice,
}

/// Whether a method is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    Request,
    /// Sent without an id. The device answers one sent as a request anyway (`{}`), as JSON-RPC
    /// lets a client do.
    Notification,
}

macro_rules! link_methods {
    ($($(#[$doc:meta])* $variant:ident = $wire:literal, $direction:ident $kind:ident $($capability:ident)?;)*) => {
        crate::named! {
            /// A method of the link.
            pub enum LinkMethod { $($(#[$doc])* $variant = $wire,)* }
        }

        impl LinkMethod {
            pub const fn direction(self) -> Direction {
                match self { $(LinkMethod::$variant => Direction::$direction,)* }
            }

            pub const fn kind(self) -> MethodKind {
                match self { $(LinkMethod::$variant => MethodKind::$kind,)* }
            }

            /// The capability that must be listed for it; `None`: always there (ACP's own).
            pub const fn capability(self) -> Option<Capability> {
                match self { $(LinkMethod::$variant => link_methods!(@capability $($capability)?),)* }
            }
        }
    };
    (@capability) => { None };
    (@capability $capability:ident) => { Some(Capability::$capability) };
}

link_methods! {
    Initialize = "initialize", ToDevice Request;
    /// Sent by some clients after `initialize`; nothing to do.
    Initialized = "notifications/initialized", ToDevice Notification;
    SessionNew = "session/new", ToDevice Request;
    SessionPrompt = "session/prompt", ToDevice Request;
    SessionSetMode = "session/set_mode", ToDevice Request;
    SessionCancel = "session/cancel", ToDevice Notification;
    /// An editor's only (`loadSession`): a stored session, its history replayed first.
    SessionLoad = "session/load", ToDevice Request;
    /// An editor's only (`sessionCapabilities.list`).
    SessionList = "session/list", ToDevice Request;
    /// An editor's only (`sessionCapabilities.resume`): a stored session, without its history.
    SessionResume = "session/resume", ToDevice Request;
    /// An editor's only (`sessionCapabilities.close`): the session let go of here.
    SessionClose = "session/close", ToDevice Request;
    /// An editor's only: the model or effort picked (the link has `_lembas/configure`).
    SessionSetConfigOption = "session/set_config_option", ToDevice Request;
    /// An editor's only (`sessionCapabilities.delete`): ACP's delete, by the link's rules (the
    /// link has `_lembas/session/delete`).
    AcpSessionDelete = "session/delete", ToDevice Request;
    /// An editor's only: the login offered in `authMethods` (the agent's own: the keychain's token).
    Authenticate = "authenticate", ToDevice Request;
    /// An editor's only (`auth.logout`): the login forgotten, as `lembas logout` does.
    Logout = "logout", ToDevice Request;
    SessionUpdate = "session/update", FromDevice Notification;
    RequestPermission = "session/request_permission", FromDevice Request;
    Hello = "_lembas/hello", FromDevice Notification;
    Event = "_lembas/event", FromDevice Notification;
    Monitor = "_lembas/monitor", ToDevice Request Scheduled;
    Directories = "_lembas/directories", ToDevice Request Directories;
    Configure = "_lembas/configure", ToDevice Request Configure;
    Steer = "_lembas/steer", ToDevice Request Steer;
    SessionHistory = "_lembas/session/history", ToDevice Request Sessions;
    SessionStatus = "_lembas/session/status", ToDevice Request Status;
    SessionDelete = "_lembas/session/delete", ToDevice Request Delete;
    SessionRewind = "_lembas/session/rewind", ToDevice Request Rewind;
    SessionCompact = "_lembas/session/compact", ToDevice Request Compact;
    SessionTitle = "_lembas/session/title", ToDevice Request Title;
    SessionDeleted = "_lembas/session/deleted", FromDevice Notification;
    /// A chat held at this computer (the spec's terminal) is shared with the instance.
    SessionAnnounce = "_lembas/session/announce", FromDevice Notification Sessions;
    /// The terminal let go of a shared chat.
    SessionLeft = "_lembas/session/left", FromDevice Notification Sessions;
    PermissionSettled = "_lembas/permission/settled", FromDevice Notification;
    /// The device no longer waits for the answer to one of its requests (a card withdrawn).
    CancelRequest = "$/cancel_request", FromDevice Notification;
    Show = "_lembas/show", FromDevice Request Show;
    Question = "_lembas/question", FromDevice Request Ask;
    Plan = "_lembas/plan", FromDevice Request Plan;
    /// An editor's form (`clientCapabilities.elicitation.form`): a question or plan card asked
    /// in ACP's own way.
    ElicitationCreate = "elicitation/create", FromDevice Request;
    Jobs = "_lembas/jobs", ToDevice Request Jobs;
    JobOutput = "_lembas/job/output", ToDevice Request Jobs;
    JobStop = "_lembas/job/stop", ToDevice Request Jobs;
    /// For a subagent job; the device has none, so every id is -32602.
    JobSend = "_lembas/job/send", ToDevice Request Jobs;
    /// For a subagent job; the device has none, so every id is -32602.
    JobTranscript = "_lembas/job/transcript", ToDevice Request Jobs;
    FilesSearch = "_lembas/files/search", ToDevice Request Files;
    Commands = "_lembas/commands", ToDevice Request Commands;
    TerminalOpen = "_lembas/terminal/open", ToDevice Request Terminal;
    TerminalInput = "_lembas/terminal/input", ToDevice Notification Terminal;
    TerminalResize = "_lembas/terminal/resize", ToDevice Notification Terminal;
    TerminalClose = "_lembas/terminal/close", ToDevice Notification Terminal;
    TerminalOutput = "_lembas/terminal/output", FromDevice Notification Terminal;
    TerminalExit = "_lembas/terminal/exit", FromDevice Notification Terminal;
}

impl LinkMethod {
    /// A method the device serves, by the name a client sent; `None` is -32601.
    pub fn served(name: &str) -> Option<Self> {
        Self::from_name(name).filter(|m| m.direction() == Direction::ToDevice)
    }

    /// Served only to an editor on `lembas serve --stdio`: ACP's own methods for reopening chats,
    /// where the link has the spec's (`_lembas/session/*`).
    pub const fn editor_only(self) -> bool {
        matches!(
            self,
            LinkMethod::SessionLoad
                | LinkMethod::SessionList
                | LinkMethod::SessionResume
                | LinkMethod::SessionClose
                | LinkMethod::AcpSessionDelete
                | LinkMethod::Authenticate
                | LinkMethod::Logout
        )
    }

    /// Served only on the link to the instance, never to an editor.
    pub const fn link_only(self) -> bool {
        match self.capability() {
            Some(capability) => capability.link_only(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_is_declared_once() {
        let mut seen = std::collections::HashSet::new();
        for m in LinkMethod::ALL {
            assert_eq!(LinkMethod::from_name(m.name()), Some(*m));
            assert!(seen.insert(m.name()), "{m} declared twice");
        }
        assert_eq!(LinkMethod::from_name("session/unknown"), None);
    }

    #[test]
    fn what_the_device_serves_is_what_a_client_sends() {
        assert_eq!(LinkMethod::served("session/new"), Some(LinkMethod::SessionNew));
        // The device's own requests are not served to a client that sends them back.
        assert_eq!(LinkMethod::served("session/request_permission"), None);
        assert_eq!(LinkMethod::served("_lembas/show"), None);
    }

    #[test]
    fn link_only_methods_are_those_outside_a_chat() {
        let link_only: Vec<&str> = LinkMethod::ALL
            .iter()
            .filter(|m| m.direction() == Direction::ToDevice && m.link_only())
            .map(|m| m.name())
            .collect();
        assert_eq!(
            link_only,
            [
                "_lembas/monitor",
                "_lembas/directories",
                "_lembas/terminal/open",
                "_lembas/terminal/input",
                "_lembas/terminal/resize",
                "_lembas/terminal/close"
            ]
        );
    }
}
