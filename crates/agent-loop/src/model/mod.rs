//! Talking to the model: the `ModelClient` seam and one client per wire protocol
//! (Chat Completions, Anthropic Messages, OpenAI Responses); the session never knows which.

mod anthropic;
mod chat_completions;
mod chunk;
mod responses;
mod retry;
mod sse;
mod transport;
mod types;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use anthropic::{AnthropicClient, cache_breakpoints};
pub use chat_completions::ChatCompletionsClient;
pub use knack_config::Wire;
pub use responses::ResponsesClient;
pub use retry::RetryPolicy;
pub use transport::{ClientSettings, ModelTimeouts};
pub use types::{
    ChatMessage, ChatRequest, Completion, FrozenTools, FunctionCall, ReasoningItem, RequestPurpose,
    Role, ToolCall, Usage, freeze_tools,
};

use transport::StreamAssembler;

use crate::error::Result;

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
