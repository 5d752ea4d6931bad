//! `lembas serve --stdio`: the agent for an editor (Zed's custom agent, any ACP client), on stdin
//! and stdout. Logs go to stderr only: stdout is the protocol.

use lembas_device::setup::Setup;
use lembas_device::{editor, settings};
use std::process::ExitCode;
use std::time::Duration;

pub fn stdio(setup: &Setup) -> ExitCode {
    // The same filter and redaction as the service's log, on standard error alone.
    lembas_device::log_file::init_stderr();
    let settings = match settings::load(&setup.dirs) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("lembas: {e}");
            return ExitCode::FAILURE;
        }
    };
    if settings.server.is_none() {
        // Still served: the editor shows session/new's refusal, which says the same.
        tracing::warn!(
            "this computer is not logged in to a LLeMbas instance, so no session can start: run lembas login --token-stdin --server <url>"
        );
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("lembas: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!("serving an editor on stdin and stdout");
    let served = runtime.block_on(editor::serve(
        tokio::io::BufReader::new(tokio::io::stdin()),
        tokio::io::stdout(),
        settings,
        setup.clone(),
    ));
    // Nothing is left that matters: a blocking read of a gone stdin must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match served {
        Ok(()) => {
            tracing::info!("the editor's input ended: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lembas: the editor's input could not be read: {e}");
            ExitCode::FAILURE
        }
    }
}
