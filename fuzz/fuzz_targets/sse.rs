//! The model stream reader (`engine::model::ModelStream`): any bytes, split at any points, as the
//! network hands them over. Never a panic or a hang: it ends with the step's output or an error.

#![no_main]

use bytes::Bytes;
use lembas_device::engine::model::{ModelStream, Streamed};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte seeds where the chunks end: 1 to 64 bytes each.
    let Some((&seed, body)) = data.split_first() else {
        return;
    };
    let mut chunks = Vec::new();
    let mut rng = seed as u32 | 1;
    let mut at = 0;
    while at < body.len() {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        let len = 1 + (rng % 64) as usize;
        let end = (at + len).min(body.len());
        chunks.push(Bytes::copy_from_slice(&body[at..end]));
        at = end;
    }
    let runtime = lembas_fuzz::bare_runtime();
    runtime.block_on(async {
        let mut stream = ModelStream::from_chunks("fuzz/model".into(), chunks);
        // Each delta is at least one byte of the body: more steps than bytes is a loop.
        for _ in 0..=body.len() + 1 {
            match stream.next().await {
                Ok(Streamed::Text(t) | Streamed::Reasoning(t)) => assert!(!t.is_empty()),
                Ok(Streamed::Done(_)) | Err(_) => return,
            }
        }
        panic!("the stream neither ended nor failed");
    });
});
