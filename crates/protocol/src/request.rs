//! Each request a device serves, bound once to its method, its params and its answer: a handler
//! takes the params type and gives the answer type, and [`serve`] reads the one and writes the
//! other, so no handler reads JSON by hand or builds its answer as a literal.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::future::Future;

use crate::LinkMethod;
use crate::rpc::{self, RpcError};

/// A request a device serves: its method, what it takes and what it answers.
pub trait Request {
    const METHOD: LinkMethod;
    type Params: DeserializeOwned;
    type Answer: Serialize;
}

macro_rules! requests {
    ($($method:ident($params:ty) -> $answer:ty;)*) => {
        $(
            #[doc = concat!("[`LinkMethod::", stringify!($method), "`]: `", stringify!($params), "` → `", stringify!($answer), "`.")]
            #[derive(Debug, Clone, Copy)]
            pub struct $method;

            impl Request for $method {
                const METHOD: LinkMethod = LinkMethod::$method;
                type Params = $params;
                type Answer = $answer;
            }
        )*

        /// The methods bound here, in the order they are declared.
        pub const TYPED: &[LinkMethod] = &[$(LinkMethod::$method,)*];
    };
}

/// One type per request, named as its [`LinkMethod`] variant: `serve(method::SessionNew, …)`.
pub mod method {
    use super::{LinkMethod, Request};
    use crate::composer::*;
    use crate::directories::DirectoriesParams;
    use crate::jobs::{JobList, JobParams, JobStopped};
    use crate::prompt::*;
    use crate::session::*;
    use crate::terminal::{
        TerminalCloseParams, TerminalInputParams, TerminalOpenParams, TerminalOpened, TerminalResizeParams,
    };

    requests! {
        Initialize(crate::initialize::InitializeParams) -> crate::initialize::InitializeAnswer;
        SessionNew(NewSessionParams) -> NewSessionAnswer;
        SessionPrompt(PromptParams) -> PromptAnswer;
        SessionSetMode(SetModeParams) -> Empty;
        SessionCancel(CancelParams) -> Empty;
        SessionLoad(OpenSessionParams) -> OpenedSession;
        SessionResume(OpenSessionParams) -> OpenedSession;
        SessionList(ListParams) -> crate::session::SessionList;
        SessionClose(SessionRef) -> Empty;
        SessionSetConfigOption(SetConfigOptionParams) -> ConfigOptions;
        Configure(ConfigureParams) -> Configured;
        Steer(SteerParams) -> Steered;
        SessionStatus(SessionRef) -> crate::status::SessionStatus;
        SessionHistory(SessionRef) -> History;
        SessionTitle(TitleParams) -> Titled;
        SessionDelete(SessionRef) -> Deleted;
        AcpSessionDelete(SessionRef) -> Empty;
        Authenticate(crate::initialize::AuthenticateParams) -> Empty;
        Logout(Empty) -> Empty;
        SessionRewind(RewindParams) -> Rewound;
        SessionCompact(SessionRef) -> Compacted;
        FilesSearch(FilesSearchParams) -> FilesFound;
        Commands(FolderParams) -> CommandList;
        Jobs(SessionRef) -> JobList;
        JobOutput(JobParams) -> crate::jobs::JobOutput;
        JobStop(JobParams) -> JobStopped;
        JobSend(JobParams) -> Empty;
        JobTranscript(JobParams) -> Empty;
        Directories(DirectoriesParams) -> crate::directories::Directories;
        Monitor(crate::scheduled::MonitorParams) -> crate::scheduled::Watched;
        TerminalOpen(TerminalOpenParams) -> TerminalOpened;
        TerminalInput(TerminalInputParams) -> Empty;
        TerminalResize(TerminalResizeParams) -> Empty;
        TerminalClose(TerminalCloseParams) -> Empty;
    }
}

/// Serves `request`: its params read (-32602 naming the field that is not right), `handler` run,
/// its answer written.
pub async fn serve<R, F>(
    request: R,
    params: Value,
    handler: impl FnOnce(R::Params) -> F,
) -> Result<Value, RpcError>
where
    R: Request,
    F: Future<Output = Result<R::Answer, RpcError>>,
{
    let params = read(request, params)?;
    answer(handler(params).await?)
}

/// `request`'s params, or -32602 naming the field that is not right.
pub fn read<R: Request>(_: R, params: Value) -> Result<R::Params, RpcError> {
    rpc::params(R::METHOD.name(), params)
}

/// An answer as JSON (a typed answer always writes; -32603 if it somehow did not).
pub fn answer<T: Serialize>(answer: T) -> Result<Value, RpcError> {
    serde_json::to_value(answer)
        .map_err(|e| RpcError::internal(format!("The answer could not be written: {e}.")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Direction, MethodKind};

    /// Every request a client may send is bound here.
    #[test]
    fn every_served_request_is_bound_to_its_types() {
        let untyped: Vec<&str> = LinkMethod::ALL
            .iter()
            .filter(|m| m.direction() == Direction::ToDevice && !method::TYPED.contains(m))
            .filter(|m| m.kind() == MethodKind::Request || m.capability().is_some())
            .map(|m| m.name())
            .collect();
        assert_eq!(untyped, Vec::<&str>::new());
    }

    #[test]
    fn params_that_are_not_right_are_refused_naming_the_field() {
        let cases = [
            (
                r#"{"cwd":"/w","mcpServers":[{"type":"http","name":"x"}]}"#,
                "mcpServers[0]",
            ),
            (r#"{"mcpServers":[]}"#, "missing field `cwd`"),
            (r#"{"cwd":"/w","_meta":{"mode":7}}"#, "_meta.mode: invalid type"),
            (
                r#"{"cwd":"/w","_meta":{"lembas":{"scheduled":{"mode":"yolo"}}}}"#,
                "_meta.lembas.scheduled.mode: \"yolo\" is not a mode",
            ),
        ];
        for (params, said) in cases {
            let params: Value = serde_json::from_str(params).unwrap();
            let error = read(method::SessionNew, params).unwrap_err();
            assert_eq!(error.code, rpc::INVALID_PARAMS);
            assert!(
                error
                    .message
                    .starts_with("The params of session/new are not right: "),
                "{}",
                error.message
            );
            assert!(error.message.contains(said), "{said}: {}", error.message);
        }
        let prompt = serde_json::json!({ "sessionId": "s", "prompt": [], "_meta": { "lembas": { "system_prompt": 5 } } });
        assert_eq!(
            read(method::SessionPrompt, prompt).unwrap_err().message,
            "The params of session/prompt are not right: _meta.lembas.system_prompt: invalid type: integer `5`, expected a string."
        );
        let read = read(method::SessionNew, serde_json::json!({ "cwd": "/w" })).unwrap();
        assert_eq!(
            (read.cwd.as_str(), read.mcp_servers, read.meta),
            ("/w", None, None)
        );
    }
}
