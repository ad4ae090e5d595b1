//! Fuzzes the model stream path: SSE decoding must not depend on where the network
//! splits the bytes, and chunk assembly must never panic on any payload.
#![no_main]

use agent_loop::model::{fuzz_assemble, fuzz_sse_payloads};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let whole = fuzz_sse_payloads(&[stream]);
    // Cut the same bytes into pieces whose sizes follow the seed (1..=16 bytes).
    let mut pieces = Vec::new();
    let mut rest = stream;
    let mut step = seed;
    while !rest.is_empty() {
        let size = usize::from(step % 16) + 1;
        let (head, tail) = rest.split_at(size.min(rest.len()));
        pieces.push(head);
        rest = tail;
        step = step.wrapping_mul(31).wrapping_add(7);
    }
    let split = fuzz_sse_payloads(&pieces);
    assert_eq!(whole, split, "decoding depends on how the stream was split");
    if let Ok(completion) = fuzz_assemble(&whole) {
        for call in &completion.tool_calls {
            assert!(
                !call.function.arguments.is_empty(),
                "empty arguments survive assembly"
            );
        }
    }
});
