//! The params of every method the device serves on the link: one input is a method (its first byte
//! picks one from the list) and params (the rest, as JSON). Every method must answer: a result, or
//! an error with a JSON-RPC code and a sentence; never a panic or a hang.

#![no_main]

use lembas_device::rpc;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// What `Dispatcher::route` and the engine's `methods::request` serve.
const METHODS: [&str; 21] = [
    "initialize",
    "session/new",
    "session/prompt",
    "session/set_mode",
    "session/cancel",
    "_lembas/configure",
    "_lembas/session/status",
    "_lembas/session/history",
    "_lembas/session/title",
    "_lembas/session/delete",
    "_lembas/steer",
    "_lembas/session/rewind",
    "_lembas/session/compact",
    "_lembas/files/search",
    "_lembas/commands",
    "_lembas/directories",
    "_lembas/monitor",
    "_lembas/terminal/open",
    "_lembas/terminal/input",
    "_lembas/terminal/resize",
    "_lembas/terminal/close",
];

/// The codes an answer may carry (docs/protocol.md): params not right or refused, and an internal failure.
const CODES: [i64; 2] = [rpc::INVALID_PARAMS, rpc::INTERNAL_ERROR];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let method = METHODS[pick as usize % METHODS.len()];
    // What a frame can carry: rpc::parse lets only these through as params.
    let Ok(params) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    if !matches!(params, Value::Null | Value::Object(_) | Value::Array(_)) {
        return;
    }
    let device = lembas_fuzz::device();
    let answer = device.runtime.block_on(async {
        tokio::time::timeout(
            lembas_fuzz::HANDLING_LIMIT,
            device.dispatcher.request(method, params.clone()),
        )
        .await
        .unwrap_or_else(|_| panic!("{method} did not answer within {:?}", lembas_fuzz::HANDLING_LIMIT))
    });
    device.sent();
    if let Err(e) = answer {
        assert!(CODES.contains(&e.code), "{method} {params}: unexpected code {e}");
        assert!(
            !e.message.is_empty(),
            "{method} {params}: an error without a sentence"
        );
    }
});
