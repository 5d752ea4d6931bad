//! Each control method bound once to what it takes and what it answers: the server reads the one
//! and writes the other ([`serve_call`]), and the client calls through the same types
//! ([`super::Client::ask`]), so neither end reads the other's JSON by hand.

use lembas_protocol::session::Empty;
use lembas_protocol::{ControlMethod, ControlPush};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;

use crate::rpc::{self, RpcError};

/// A control method: its name, its params and its answer.
pub trait ControlCall {
    const METHOD: ControlMethod;
    type Params: DeserializeOwned;
    type Answer: Serialize;
}

macro_rules! calls {
    ($($method:ident($params:ty) -> $answer:ty;)*) => {
        $(
            #[doc = concat!("[`ControlMethod::", stringify!($method), "`]: `", stringify!($params), "` → `", stringify!($answer), "`.")]
            #[derive(Debug, Clone, Copy)]
            pub struct $method;

            impl ControlCall for $method {
                const METHOD: ControlMethod = ControlMethod::$method;
                type Params = $params;
                type Answer = $answer;
            }
        )*

        /// The methods bound here, in the order they are declared.
        pub const TYPED: &[ControlMethod] = &[$(ControlMethod::$method,)*];

        /// Visits every type a method takes or answers, for their TypeScript declarations.
        #[cfg(test)]
        pub fn visit_types(visitor: &mut impl ts_rs::TypeVisitor) {
            $(
                visitor.visit::<$params>();
                visitor.visit::<$answer>();
            )*
        }

        /// `ControlCalls`: each method's params and answer, for the window's typed calls.
        #[cfg(test)]
        pub fn typescript(cfg: &ts_rs::Config) -> String {
            use ts_rs::TS;
            let mut lines = vec!["export type ControlCalls = {".to_string()];
            $(
                lines.push(format!(
                    "  {:?}: {{ params: {}, answer: {} }},",
                    ControlMethod::$method.name(),
                    <$params>::name(cfg),
                    <$answer>::name(cfg),
                ));
            )*
            lines.push("};".to_string());
            lines.join("\n")
        }
    };
}

/// One type per method, named as its [`ControlMethod`] variant: `serve_call(call::Status, …)`.
pub mod call {
    use super::{ControlCall, ControlMethod, Empty};
    use crate::control::SettingChange;
    use crate::control::chat::params::*;
    use crate::control::params::*;
    use crate::desktop_view::Snapshot;
    use crate::desktop_view::pending::ApprovalCard;
    use crate::engine::PutBackAnswer;
    use crate::engine::grants::Grant;
    use crate::engine::show::ShownFile;
    use crate::engine::timeline::Timeline;
    use crate::terminal::board::Listed as ListedTerminal;
    use lembas_protocol::composer::{CommandList, FilesFound, FilesSearchParams, FolderParams};

    calls! {
        Hello(HelloParams) -> Empty;
        Status(Empty) -> StatusAnswer;
        Subscribe(Streams) -> Empty;
        ApprovalsList(Empty) -> Vec<ApprovalCard>;
        ApprovalsAnswer(AnswerParams) -> Answered;
        Activity(ActivityParams) -> ActivityPage;
        WindowState(Empty) -> Snapshot;
        SettingsChange(SettingChange) -> Snapshot;
        Login(LoginParams) -> Said;
        Logout(Empty) -> Said;
        SessionsList(Empty) -> Vec<ListedSession>;
        SessionsTimeline(SessionParams) -> Timeline;
        SessionsStop(SessionParams) -> Stopped;
        SessionsUndo(UndoParams) -> PutBackAnswer;
        SessionsRevoke(RevokeParams) -> Vec<Grant>;
        TerminalsList(Empty) -> Vec<ListedTerminal>;
        TerminalsReplay(TerminalParams) -> Replay;
        TerminalsHangUp(TerminalParams) -> TerminalParams;
        TerminalsWrite(TerminalWriteParams) -> Empty;
        RemoteStop(Empty) -> RemoteStopped;
        ShownList(ShownListParams) -> Vec<ShownFile>;
        ShownRead(ShownReadParams) -> ShownText;
        ChatOpen(OpenParams) -> ChatOpened;
        ChatPrompt(PromptParams) -> Prompted;
        ChatSteer(SteerParams) -> Steered;
        ChatShare(ShareParams) -> Sharing;
        ChatClose(SessionParams) -> Empty;
        ChatConfigure(ConfigureParams) -> Configured;
        ChatModels(Empty) -> Vec<ChatModel>;
        ChatAnswer(ChatAnswerParams) -> Empty;
        ChatFiles(FilesSearchParams) -> FilesFound;
        ChatCommands(FolderParams) -> CommandList;
    }
}

/// A notification the runtime pushes to a subscriber: its name and its params.
pub trait ControlPushed {
    const PUSH: ControlPush;
    type Params: Serialize;
}

macro_rules! pushes {
    ($($push:ident($params:ty);)*) => {
        $(
            #[doc = concat!("[`ControlPush::", stringify!($push), "`]: `", stringify!($params), "`.")]
            #[derive(Debug, Clone, Copy)]
            pub struct $push;

            impl ControlPushed for $push {
                const PUSH: ControlPush = ControlPush::$push;
                type Params = $params;
            }
        )*

        /// The pushes bound here.
        pub const TYPED: &[ControlPush] = &[$(ControlPush::$push,)*];
    };
}

/// One type per push, named as its [`ControlPush`] variant: `notification(push::Missed, …)`.
pub mod push {
    use super::{ControlPush, ControlPushed};
    use crate::control::chat::params::{CardShown, JobChanged, SharingChanged, TakenDown};
    use crate::control::params::{Count, TerminalEnded, TerminalShown};
    use crate::engine::ShownUpdate;
    use crate::events::DeviceEvent;
    use crate::status::Status as RuntimeStatus;

    pushes! {
        Status(RuntimeStatus);
        Event(DeviceEvent);
        Missed(Count);
        SessionUpdate(ShownUpdate);
        SessionMissed(Count);
        TerminalOutput(TerminalShown);
        TerminalExit(TerminalEnded);
        TerminalMissed(Count);
        Card(CardShown);
        CardSettled(TakenDown);
        ChatSharing(SharingChanged);
        ChatJob(JobChanged);
    }
}

/// `push`'s line, its params written as declared.
pub fn notification<P: ControlPushed>(_: P, params: &P::Params) -> String {
    rpc::notification(P::PUSH.name(), serde_json::to_value(params).unwrap_or_default())
}

/// Serves `call`: its params read (-32602 naming the field that is not right), `handler` run, its
/// answer written.
pub async fn serve_call<C, F>(
    call: C,
    params: Value,
    handler: impl FnOnce(C::Params) -> F,
) -> Result<Value, RpcError>
where
    C: ControlCall,
    F: Future<Output = Result<C::Answer, RpcError>>,
{
    let params = read(call, params)?;
    lembas_protocol::request::answer(handler(params).await?)
}

/// `call`'s params, or -32602 naming the field that is not right.
pub fn read<C: ControlCall>(_: C, params: Value) -> Result<C::Params, RpcError> {
    rpc::params(C::METHOD.name(), params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_push_is_bound_to_its_params() {
        let untyped: Vec<&str> = ControlPush::ALL
            .iter()
            .filter(|p| !push::TYPED.contains(p))
            .map(|p| p.name())
            .collect();
        assert_eq!(untyped, Vec::<&str>::new());
    }

    #[test]
    fn every_control_method_is_bound_to_its_types() {
        let untyped: Vec<&str> = ControlMethod::ALL
            .iter()
            .filter(|m| !call::TYPED.contains(m))
            .map(|m| m.name())
            .collect();
        assert_eq!(untyped, Vec::<&str>::new());
    }
}
