//! One frame from the link, as the device's reader takes it (`link::incoming::receive`: the JSON-RPC
//! parser, then the dispatcher). Never a panic or a hang; a request gets exactly one answer with its
//! id, a frame that is no message gets one error answer, a notification or an answer gets none.

#![no_main]

use lembas_device::link::incoming;
use lembas_device::rpc::{self, Incoming};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // A WebSocket text frame is UTF-8 by the protocol; an editor's line is read lossily.
    let text = String::from_utf8_lossy(data);
    let device = lembas_fuzz::device();
    device.runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        // No socket: every answer goes through the queue, where the target reads it.
        incoming::receive(&text, &device.dispatcher, &device.out, None, &mut tasks).await;
        lembas_fuzz::join_all(&mut tasks).await;
    });
    let answers: Vec<Value> = device
        .sent()
        .iter()
        .map(|frame| serde_json::from_str::<Value>(frame).expect("the device sends JSON"))
        .filter(|message| message.get("method").is_none())
        .collect();
    for answer in &answers {
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert!(
            answer.get("result").is_some() != answer.get("error").is_some(),
            "an answer has a result or an error: {answer}"
        );
        if let Some(error) = answer.get("error") {
            assert!(error["code"].is_i64(), "{answer}");
            assert!(
                error["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{answer}"
            );
        }
    }
    match rpc::parse(&text) {
        Ok(Incoming::Request { id, .. }) => {
            assert_eq!(answers.len(), 1, "one answer to a request: {answers:?}");
            assert!(same_id(&answers[0]["id"], &id), "{} for {id}", answers[0]["id"]);
        }
        Ok(Incoming::Notification { .. } | Incoming::Response { .. }) => {
            assert!(
                answers.is_empty(),
                "no answer to a notification or an answer: {answers:?}"
            )
        }
        Err(rejected) => {
            assert_eq!(
                answers.len(),
                1,
                "one error answer to a frame that is no message: {answers:?}"
            );
            assert_eq!(answers[0]["error"]["code"], rejected.error.code);
        }
    }
});

/// The id an answer carries is the request's. An integer beyond 64 bits is read (and echoed) as a
/// float, and serde_json reads a float back only to within a rounding step (without its
/// float_roundtrip feature): such ids match when they are that close.
fn same_id(answered: &Value, asked: &Value) -> bool {
    match (answered.as_f64(), asked.as_f64()) {
        (Some(a), Some(b)) if asked.is_f64() => (a - b).abs() <= b.abs() * 4.0 * f64::EPSILON,
        _ => answered == asked,
    }
}
