//! Asking the running device through its control socket. The commands that read (status, activity,
//! sessions, approvals) ask the runtime when one runs and read the files when none does.

use std::future::Future;
use std::time::Duration;

use lembas_device::control::{CallError, Client, ConnectError};
use lembas_device::paths::Dirs;

/// How long a command waits for the runtime's answer before saying it does not answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(15);

/// What asking the runtime gave.
pub enum Live<T> {
    /// No runtime runs for this user.
    NotRunning,
    Answered(T),
    /// One runs but the exchange failed; the sentence says why.
    Failed(String),
    /// The runtime answered with an error (its sentence is for a person).
    Refused(lembas_device::rpc::RpcError),
}

/// Connects and runs `ask` on a small runtime of its own, within [`ANSWER_WITHIN`].
pub fn ask<T, F, Fut>(dirs: &Dirs, ask: F) -> Live<T>
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = Result<T, CallError>>,
{
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return Live::Failed(format!("cannot start: {e}")),
    };
    runtime.block_on(async {
        let client = match Client::connect(dirs).await {
            Ok(client) => client,
            Err(ConnectError::NotRunning) => return Live::NotRunning,
            Err(ConnectError::Refused(e)) => return Live::Refused(e),
            Err(e) => return Live::Failed(e.to_string()),
        };
        match tokio::time::timeout(ANSWER_WITHIN, ask(client)).await {
            Ok(Ok(answer)) => Live::Answered(answer),
            Ok(Err(CallError::Rpc(e))) => Live::Refused(e),
            Ok(Err(e)) => Live::Failed(e.to_string()),
            Err(_) => Live::Failed(format!(
                "the running LLeMbas device did not answer within {}s",
                ANSWER_WITHIN.as_secs()
            )),
        }
    })
}
