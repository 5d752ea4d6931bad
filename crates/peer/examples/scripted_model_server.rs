//! A peer whose model has the replies `tests/model-stream/check.py` expects queued, in its order,
//! so a real OpenAI client can read them (`scripts/check-model-stream`). Prints the peer's URL on
//! standard output and runs until standard input closes; the token is `model-stream-check-token`.

use std::io::Read;

use lembas_peer::{ModelReply, Part, Peer, PeerConfig};
use serde_json::json;

const TOKEN: &str = "model-stream-check-token";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await?;
    let model = peer.model();
    model.push(ModelReply::text(
        "Hello from the scripted model, streamed in pieces.",
    ));
    model.push(ModelReply::Stream {
        parts: vec![
            Part::Reasoning("The user wants a number; two and two make four.".to_string()),
            Part::Text("4".to_string()),
        ],
        finish_reason: "stop".to_string(),
    });
    model.push(ModelReply::Stream {
        parts: vec![
            Part::ToolCall {
                id: "call_read".to_string(),
                name: "read".to_string(),
                arguments: json!({ "path": "docs/naïve café.md" }).to_string(),
            },
            Part::ToolCall {
                id: "call_bash".to_string(),
                name: "bash".to_string(),
                arguments: json!({ "command": "ls -la | head -3", "description": "List the folder" })
                    .to_string(),
            },
        ],
        finish_reason: "tool_calls".to_string(),
    });
    model.push(ModelReply::Error {
        status: 429,
        retry_after: Some(3),
        message: "Rate limit reached for requests".to_string(),
    });
    model.push(ModelReply::Cut {
        parts: vec![Part::Text("This answer is cut".to_string())],
    });
    println!("{}", peer.url());
    // Blocking is fine here: the server runs on the runtime's other threads.
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    eprintln!(
        "scripted_model_server: {} requests, {} replies left queued",
        model.requests().len(),
        model.pending()
    );
    peer.stop().await;
    Ok(())
}
