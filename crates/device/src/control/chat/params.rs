//! What the `chat/*` calls and pushes carry (bound to their methods in [`crate::control::calls`]):
//! a front end at this computer (`lembas chat`, the window's composer) holding a session.

use serde::{Deserialize, Serialize};

pub use crate::engine::front_end::Sharing;
use crate::engine::timeline::Timeline;
use lembas_protocol::card::{CardAnswer, CardRequest};
use lembas_protocol::composer::AvailableCommand;
use lembas_protocol::event::JobChange;
use lembas_protocol::jobs::JobInfo;
use lembas_protocol::{Effort, Mode};

/// `chat/open`'s params: a new chat in `cwd`, the stored (or link-held) `session_id`, or the
/// latest chat in `cwd` (`latest`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct OpenParams {
    /// Absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default)]
    pub latest: bool,
    /// An instance model id; the login's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Shared from its start or not; absent: as `chat.share` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<bool>,
}

/// `chat/open`'s answer: the chat as it stands, held by this connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ChatOpened {
    pub session_id: String,
    pub cwd: String,
    pub title: String,
    pub model: String,
    pub mode: Mode,
    pub max_mode: Mode,
    pub effort: Effort,
    pub sharing: Sharing,
    /// The chat so far; no turns for a new one.
    pub timeline: Timeline,
    pub commands: Vec<AvailableCommand>,
}

/// `chat/prompt`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct PromptParams {
    pub session_id: String,
    pub text: String,
    /// The front end's own id for the turn (a prompt sent twice runs once); made up when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
}

/// `chat/prompt`'s answer: the turn started or waits its turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Prompted {
    pub turn_id: String,
}

/// `chat/steer`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct SteerParams {
    pub session_id: String,
    pub text: String,
}

/// `chat/steer`'s answer: the words waiting for the running turn's next step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Steered {
    pub queued: usize,
}

/// `chat/share`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ShareParams {
    pub session_id: String,
    pub share: bool,
    /// The answer to the `ask` question, kept for the chat's folder.
    #[serde(default)]
    pub remember: bool,
}

/// `chat/configure`'s params: what changes; the rest stays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ConfigureParams {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
}

/// `chat/configure`'s answer: the chat's settings now (the mode lowered to the ceiling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Configured {
    pub model: String,
    pub mode: Mode,
    pub effort: Effort,
}

/// One of the instance's models for this device (`chat/models`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ChatModel {
    pub id: String,
    pub name: String,
}

/// `chat/answer`'s params: a card's answer in the link's own shapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ChatAnswerParams {
    pub session_id: String,
    pub tool_call_id: String,
    pub answer: CardAnswer,
}

/// The `card` push: a card opened in a session, as the link gets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardShown {
    pub session_id: String,
    pub card: CardRequest,
}

/// The `card/settled` push: a card taken down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TakenDown {
    pub session_id: String,
    pub tool_call_id: String,
    /// Who decided it: `client` (LLeMbas over the link), `desktop` (the window, `lembas
    /// approvals`), `terminal` (a chat front end), `timeout`, or `withdrawn` (its turn ended).
    pub by: String,
}

/// The `chat/sharing` push: a held chat's sharing changed by itself (the folder left the roots,
/// the link came up or went down, remote work turned off).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharingChanged {
    pub session_id: String,
    pub sharing: Sharing,
}

/// The `chat/job` push: a background job of a session started, changed or ended, as the link's
/// `job` event tells it; `update` for each job of a chat a front end has just taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobChanged {
    pub session_id: String,
    pub state: JobChange,
    pub job: JobInfo,
}
