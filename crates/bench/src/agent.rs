//! What the engine's benchmarks share: a device whose work folder remote work may use (trusted, so
//! nothing is asked), and a session opened there on the bench's model.

use lembas_protocol::LinkMethod;
use std::path::Path;
use std::time::Duration;

use anyhow::anyhow;
use serde_json::{Value, json};

use crate::device::DeviceHome;
use crate::instance::RawLink;
use crate::model_server::MODEL;

/// How long one request of a benchmark (a turn included) may take before it gives up.
pub const REQUEST_WAIT: Duration = Duration::from_secs(60);

/// A throwaway home for `server` with remote work on in its work folder, which is also trusted.
pub fn home(server: &str) -> anyhow::Result<DeviceHome> {
    DeviceHome::new(server, remote)
}

/// The config's remote block: remote work on in `work`, which is also trusted.
pub fn remote(work: &Path) -> String {
    format!(
        "remote:\n  enabled: true\n  roots:\n    - {work}\ntrusted:\n  - {work}\n",
        work = work.display()
    )
}

/// `session/new` in `cwd` on the bench's model; the session's id.
pub async fn new_session(link: &mut RawLink, cwd: &Path) -> anyhow::Result<String> {
    let params = json!({ "cwd": cwd, "mcpServers": [], "_meta": { "lembas_model": MODEL } });
    let answer = link
        .request(LinkMethod::SessionNew.name(), params, REQUEST_WAIT)
        .await?;
    answer["result"]["sessionId"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("session/new failed: {answer}"))
}

/// `session/prompt`'s params for one text prompt.
pub fn prompt(session: &str, text: &str) -> Value {
    json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] })
}

/// Fails unless `answer` is a turn that ended with `end_turn`.
pub fn ended(answer: &Value) -> anyhow::Result<()> {
    if answer["result"]["stopReason"] == "end_turn" {
        Ok(())
    } else {
        Err(anyhow!("the turn did not end with end_turn: {answer}"))
    }
}
