//! Talking to the model: the `ModelClient` seam and one client per wire protocol
//! (Chat Completions, Anthropic Messages, OpenAI Responses); the session never knows which.
//! The shared HTTP transport, retries, SSE decoding, usage and cost live here too. This crate
//! knows nothing of tools, sessions or skills: it sends a request and assembles the reply.

mod anthropic;
mod chat_completions;
mod chunk;
mod error;
mod responses;
mod retry;
mod sse;
mod transport;
mod types;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use anthropic::{
    AnthropicClient, MIN_THINKING_BUDGET, THINKING_EFFORTS, cache_breakpoints,
    thinking_budget_for_effort,
};
pub use chat_completions::ChatCompletionsClient;
pub use knack_config::Wire;
pub use responses::ResponsesClient;
pub use retry::RetryPolicy;
pub use transport::{
    ClientSettings, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_REASONING_MAX_OUTPUT_TOKENS, ModelTimeouts,
    default_base_url,
};
pub use types::{
    ChatMessage, ChatRequest, Completion, FrozenTools, FunctionCall, ReasoningItem, RequestPurpose,
    Role, ToolCall, Usage, freeze_tools,
};

pub use error::{ModelError, Result};

use transport::StreamAssembler;

/// Something that happened while one model request was in flight.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamUpdate {
    /// A piece of the assistant's text.
    TextDelta(String),
    /// A piece of the model's reasoning, from servers that stream it separately.
    ReasoningDelta(String),
    /// The model started a tool call (its arguments are still streaming).
    ToolCallStarted { id: String, name: String },
    /// Everything reported since the request began is void: the attempt failed
    /// part-way and the whole request is being sent again.
    Reset,
    /// The request failed in a retryable way; it is sent again after `delay_ms`.
    Retry {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
}

/// The callback that receives [`StreamUpdate`]s in order.
pub type UpdateSink<'a> = &'a mut (dyn FnMut(StreamUpdate) + Send);

/// A boxed future, so the trait stays object-safe (`Arc<dyn ModelClient>`).
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<Completion>> + Send + 'a>>;

/// The one seam between the agent loop and a model server; tests and other
/// providers plug in here.
pub trait ModelClient: Send + Sync {
    /// Sends `request`, streaming updates into `on_update`, retrying as the
    /// client's policy allows, and returns the finished completion.
    ///
    /// Dropping the future cancels the request.
    fn stream_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_update: UpdateSink<'a>,
    ) -> ModelFuture<'a>;
}

/// The client for `settings.wire`.
pub fn build_client(settings: ClientSettings) -> Result<Arc<dyn ModelClient>> {
    Ok(match settings.wire {
        Wire::Chat => Arc::new(ChatCompletionsClient::new(settings)?),
        Wire::Anthropic => Arc::new(AnthropicClient::new(settings)?),
        Wire::Responses => Arc::new(ResponsesClient::new(settings)?),
    })
}

/// Benchmark entry point: one wire's per-request work without the network —
/// the body it would send and the parse of a reply stream — so the client's
/// own overhead can be measured (`examples/client_overhead.rs`).
#[doc(hidden)]
pub struct WireCodec {
    client: CodecClient,
}

enum CodecClient {
    Chat(ChatCompletionsClient),
    Anthropic(AnthropicClient),
    Responses(ResponsesClient),
}

impl WireCodec {
    /// The codec of `settings.wire`; nothing is sent anywhere.
    pub fn new(settings: ClientSettings) -> Result<Self> {
        let client = match settings.wire {
            Wire::Chat => CodecClient::Chat(ChatCompletionsClient::new(settings)?),
            Wire::Anthropic => CodecClient::Anthropic(AnthropicClient::new(settings)?),
            Wire::Responses => CodecClient::Responses(ResponsesClient::new(settings)?),
        };
        Ok(Self { client })
    }

    /// The request body, exactly as the client would send it.
    pub fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>> {
        match &self.client {
            CodecClient::Chat(client) => client.encode(request),
            CodecClient::Anthropic(client) => client.encode(request),
            CodecClient::Responses(client) => client.encode(request),
        }
    }

    /// Decodes an SSE reply fed in `read_size` pieces (as network reads
    /// arrive) and assembles it, handing every update to `on_update`.
    pub fn parse_stream(
        &self,
        sse: &[u8],
        read_size: usize,
        on_update: UpdateSink<'_>,
    ) -> Result<Completion> {
        match &self.client {
            CodecClient::Chat(_) => parse_with::<chunk::ReplyAssembler>(sse, read_size, on_update),
            CodecClient::Anthropic(_) => {
                parse_with::<anthropic::AnthropicAssembler>(sse, read_size, on_update)
            }
            CodecClient::Responses(_) => {
                parse_with::<responses::ResponsesAssembler>(sse, read_size, on_update)
            }
        }
    }
}

fn parse_with<A: StreamAssembler>(
    sse: &[u8],
    read_size: usize,
    on_update: UpdateSink<'_>,
) -> Result<Completion> {
    let mut decoder = sse::SseDecoder::default();
    let mut assembler = A::default();
    for piece in sse.chunks(read_size.max(1)) {
        for data in decoder.push(piece) {
            assembler.accept(&data, on_update)?;
        }
        if assembler.saw_done() {
            break;
        }
    }
    if !assembler.saw_done()
        && let Some(data) = decoder.finish()
    {
        assembler.accept(&data, on_update)?;
    }
    assembler.finish()
}

/// Fuzzing entry point: runs `pieces` (one network read each) through the SSE
/// decoder and returns every `data` payload, including one left open at the end.
#[doc(hidden)]
pub fn fuzz_sse_payloads(pieces: &[&[u8]]) -> Vec<String> {
    let mut decoder = sse::SseDecoder::default();
    let mut payloads = Vec::new();
    for piece in pieces {
        payloads.extend(decoder.push(piece));
    }
    payloads.extend(decoder.finish());
    payloads
}

/// Fuzzing entry point: assembles one completion from stream payloads the way
/// the client does, stopping at the first error a chunk reports.
#[doc(hidden)]
pub fn fuzz_assemble(payloads: &[String]) -> Result<Completion> {
    let mut assembler = chunk::ReplyAssembler::default();
    let mut sink = |_update: StreamUpdate| {};
    for payload in payloads {
        assembler.accept(payload, &mut sink)?;
        if assembler.saw_done() {
            break;
        }
    }
    assembler.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::{ModelWire, ScriptedReply};

    #[test]
    fn the_bench_codec_encodes_and_parses_like_the_client_on_every_wire() {
        let reply = ScriptedReply::text("all done")
            .with_tool_calls([("c1", "skills_list", "{}")])
            .with_reasoning("thinking");
        for (wire, mock) in [
            (Wire::Chat, ModelWire::Chat),
            (Wire::Anthropic, ModelWire::Anthropic),
            (Wire::Responses, ModelWire::Responses),
        ] {
            let codec =
                WireCodec::new(ClientSettings::new("http://127.0.0.1:9/v1").with_wire(wire))
                    .unwrap();
            let request = ChatRequest {
                model: "m".into(),
                messages: vec![ChatMessage::system("s"), ChatMessage::user("u")],
                tools: None,
                purpose: RequestPurpose::Turn,
                session_id: "sess".into(),
            };
            let body: serde_json::Value =
                serde_json::from_slice(&codec.encode(&request).unwrap()).unwrap();
            assert_eq!(body["model"], "m", "{wire:?}");
            let sse: String = reply
                .frames_for(mock)
                .iter()
                .map(|data| format!("data: {data}\n\n"))
                .collect();
            let mut reasoning = String::new();
            // Read sizes that split frames anywhere must not matter.
            for read_size in [7, 4096] {
                reasoning.clear();
                let completion = codec
                    .parse_stream(sse.as_bytes(), read_size, &mut |update| {
                        if let StreamUpdate::ReasoningDelta(text) = update {
                            reasoning.push_str(&text);
                        }
                    })
                    .unwrap();
                assert_eq!(completion.content, "all done", "{wire:?}");
                assert_eq!(completion.tool_calls.len(), 1, "{wire:?}");
                assert_eq!(reasoning, "thinking", "{wire:?}");
            }
        }
    }
}
