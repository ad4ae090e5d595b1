//! Per-request client overhead on every wire: building and serialising a 200-message request
//! and parsing a streamed reply, without the network. `cargo xtask bench client` runs it.
//!
//! Prints `BENCH name=<median> ms min=… max=… n=…` lines: `client_<wire>` is the whole
//! per-request cost (target ≤ 2 ms), `encode_<wire>` and `parse_<wire>` its two halves.

use std::hint::black_box;
use std::time::Instant;

use model_client::{
    ChatMessage, ChatRequest, ClientSettings, ReasoningItem, RequestPurpose, StreamUpdate,
    ToolCall, Wire, WireCodec, freeze_tools,
};
use serde_json::{Value, json};
use test_support::print_bench;

/// Messages after the system prompt.
const MESSAGES: usize = 200;
/// Streamed text deltas in the reply (about one token each).
const TEXT_DELTAS: usize = 400;
/// Pieces the reply's tool-call arguments arrive in.
const ARGUMENT_PIECES: usize = 20;
/// Bytes per simulated network read.
const READ_SIZE: usize = 1024;
const WARMUP: usize = 20;
const SAMPLES: usize = 300;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tools = freeze_tools(&tool_specs())?;
    for wire in [Wire::Chat, Wire::Anthropic, Wire::Responses] {
        let mut settings = ClientSettings::new("http://127.0.0.1:9/v1").with_wire(wire);
        settings.api_key = Some("bench-key".into());
        settings.prompt_cache_key = Some(true);
        settings.max_output_tokens = Some(8192);
        let codec = WireCodec::new(settings)?;
        let history = history(wire);
        let sse = reply_stream(wire);

        // One checked round first: the figures mean nothing if the parse is wrong.
        let request = build(&history, &tools);
        let body = codec.encode(&request)?;
        let mut updates = 0usize;
        let completion =
            codec.parse_stream(&sse, READ_SIZE, &mut |_u: StreamUpdate| updates += 1)?;
        let expected_text = "word ".repeat(TEXT_DELTAS);
        if completion.content != expected_text || completion.tool_calls.len() != 1 {
            return Err(format!(
                "{wire:?}: the stream parsed wrong ({} chars, {} calls)",
                completion.content.len(),
                completion.tool_calls.len()
            )
            .into());
        }

        let (mut total, mut encode, mut parse) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..WARMUP + SAMPLES {
            let started = Instant::now();
            let request = build(&history, &tools);
            let body = codec.encode(&request)?;
            let encoded = started.elapsed();
            let mut sink = |update: StreamUpdate| {
                black_box(update);
            };
            let completion = codec.parse_stream(&sse, READ_SIZE, &mut sink)?;
            let done = started.elapsed();
            black_box((body, completion));
            if round >= WARMUP {
                total.push(done);
                encode.push(encoded);
                parse.push(done - encoded);
            }
        }
        let name = format!("{wire:?}").to_lowercase();
        println!(
            "{name}: request body {} KiB, reply stream {} KiB, {updates} updates",
            body.len() / 1024,
            sse.len() / 1024
        );
        print_bench(&format!("client_{name}"), total);
        print_bench(&format!("encode_{name}"), encode);
        print_bench(&format!("parse_{name}"), parse);
    }
    Ok(())
}

/// What the session does per request: the system prompt and the history
/// cloned into a fresh request that shares the frozen tool bytes.
fn build(history: &[ChatMessage], tools: &Option<model_client::FrozenTools>) -> ChatRequest {
    ChatRequest {
        model: "bench-model".into(),
        messages: history.to_vec(),
        tools: tools.clone(),
        purpose: RequestPurpose::Turn,
        session_id: "20260101-000000-abcdef".into(),
    }
}

/// Twenty tools with schemas the size of knack's own.
fn tool_specs() -> Vec<Value> {
    (0..20)
        .map(|i| {
            json!({"type": "function", "function": {
                "name": format!("tool_{i}"),
                "description": "Does one thing well; the description is about as long as knack's. ".repeat(3),
                "parameters": {"type": "object", "properties": {
                    "path": {"type": "string", "description": "A path inside the workspace."},
                    "query": {"type": "string", "description": "What to look for."},
                    "limit": {"type": "integer", "description": "At most this many results."}
                }, "required": ["path"]}
            }})
        })
        .collect()
}

/// A system prompt of about 8 KB, then 200 messages: user turns, assistant
/// tool calls (with the reasoning this wire replays), tool results of about
/// 1.5 KB, and assistant answers.
fn history(wire: Wire) -> Vec<ChatMessage> {
    let mut messages = vec![ChatMessage::system(
        "You are knack, an agent that works in the user's repository. ".repeat(130),
    )];
    let mut i = 0;
    while messages.len() <= MESSAGES {
        match i % 4 {
            0 => messages.push(ChatMessage::user(format!(
                "Step {i}: look at the module and tell me what it does. {}",
                "Context. ".repeat(20)
            ))),
            1 => {
                let call = ToolCall::function(
                    format!("call_{i}"),
                    "tool_1",
                    format!(r#"{{"path":"src/module_{i}.rs","limit":50}}"#),
                );
                let message = ChatMessage::assistant("Reading it.", vec![call]);
                messages.push(message.with_reasoning(reasoning(wire, i)));
            }
            2 => messages.push(ChatMessage::tool_result(
                format!("call_{}", i - 1),
                format!(
                    r#"{{"success":true,"content":"{}"}}"#,
                    "fn example() -> u32 { 42 }\\n".repeat(55)
                ),
            )),
            _ => messages.push(ChatMessage::assistant(
                format!("The module computes a number. {}", "Detail. ".repeat(30)),
                vec![],
            )),
        }
        i += 1;
    }
    messages
}

fn reasoning(wire: Wire, i: usize) -> Vec<ReasoningItem> {
    let item = match wire {
        Wire::Chat => return Vec::new(),
        Wire::Anthropic => json!({"type": "thinking",
            "thinking": format!("I should read module {i} first."), "signature": "c2ln".repeat(60)}),
        Wire::Responses => json!({"type": "reasoning", "id": format!("rs_{i}"), "summary": [],
            "encrypted_content": "ZW5j".repeat(150)}),
    };
    vec![ReasoningItem { wire, item }]
}

/// A reply of 400 text deltas, one tool call whose arguments come in 20
/// pieces, and usage, as `wire` streams it.
fn reply_stream(wire: Wire) -> Vec<u8> {
    let arguments = format!(r#"{{"path":"src/lib.rs","query":"{}"}}"#, "x".repeat(200));
    let pieces: Vec<String> = arguments
        .as_bytes()
        .chunks(arguments.len().div_ceil(ARGUMENT_PIECES))
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let mut frames: Vec<Value> = Vec::new();
    let mut done = false;
    match wire {
        Wire::Chat => {
            for _ in 0..TEXT_DELTAS {
                frames.push(json!({"id": "c", "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": null}]}));
            }
            frames.push(json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 0, "id": "call_x", "type": "function", "function": {"name": "tool_1", "arguments": ""}}]}}]}));
            for piece in &pieces {
                frames.push(
                    json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": piece}}]}}]}),
                );
            }
            frames.push(json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
            frames.push(
                json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 60000,
                "completion_tokens": 480, "prompt_tokens_details": {"cached_tokens": 59000}}}),
            );
            done = true;
        }
        Wire::Anthropic => {
            frames.push(json!({"type": "message_start", "message": {"id": "m", "type": "message",
                "role": "assistant", "content": [], "usage": {"input_tokens": 100,
                "cache_read_input_tokens": 59000, "cache_creation_input_tokens": 900, "output_tokens": 1}}}));
            frames.push(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}));
            for _ in 0..TEXT_DELTAS {
                frames.push(json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": "word "}}));
            }
            frames.push(json!({"type": "content_block_stop", "index": 0}));
            frames.push(json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_x", "name": "tool_1", "input": {}}}));
            for piece in &pieces {
                frames.push(json!({"type": "content_block_delta", "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}));
            }
            frames.push(json!({"type": "content_block_stop", "index": 1}));
            frames.push(
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 480}}),
            );
            frames.push(json!({"type": "message_stop"}));
        }
        Wire::Responses => {
            frames.push(json!({"type": "response.created", "response": {"id": "r", "status": "in_progress"}}));
            frames.push(
                json!({"type": "response.output_item.added", "output_index": 0,
                "item": {"type": "message", "id": "msg", "role": "assistant", "content": []}}),
            );
            for _ in 0..TEXT_DELTAS {
                frames.push(
                    json!({"type": "response.output_text.delta", "item_id": "msg",
                    "output_index": 0, "content_index": 0, "delta": "word "}),
                );
            }
            frames.push(json!({"type": "response.output_item.added", "output_index": 1,
                "item": {"type": "function_call", "id": "fc", "call_id": "call_x", "name": "tool_1", "arguments": ""}}));
            for piece in &pieces {
                frames.push(json!({"type": "response.function_call_arguments.delta",
                    "item_id": "fc", "output_index": 1, "delta": piece}));
            }
            frames.push(json!({"type": "response.function_call_arguments.done",
                "item_id": "fc", "output_index": 1, "arguments": arguments}));
            frames.push(
                json!({"type": "response.completed", "response": {"id": "r", "status": "completed",
                "usage": {"input_tokens": 60000, "input_tokens_details": {"cached_tokens": 59000},
                "output_tokens": 480, "output_tokens_details": {"reasoning_tokens": 0}}}}),
            );
        }
    }
    let mut sse = String::new();
    for frame in frames {
        let event = frame.get("type").and_then(Value::as_str).map(str::to_owned);
        if let Some(event) = event.filter(|_| wire != Wire::Chat) {
            sse.push_str(&format!("event: {event}\n"));
        }
        sse.push_str(&format!("data: {frame}\n\n"));
    }
    if done {
        sse.push_str("data: [DONE]\n\n");
    }
    sse.into_bytes()
}
