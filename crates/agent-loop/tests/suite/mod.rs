//! Shared setup: a fast-retrying client pointed at the scripted mock server.

mod loop_overhead;
mod model_errors;
mod model_retries;
mod model_streaming;
mod model_wire;
mod model_wires;
mod real_model;
mod session_approval;
mod session_end_of_turn;
mod session_model_switch;
mod session_store;
mod soak;
mod tools_files;
mod tools_memory;
mod tools_modes;
mod tools_registry;
mod tools_sandbox;
mod tools_skills;
mod tools_terminal;

pub mod tool_env;

use std::time::Duration;

use agent_loop::ModelError;
use agent_loop::model::{
    ChatCompletionsClient, ChatMessage, ChatRequest, ClientSettings, Completion, ModelClient,
    ModelTimeouts, RequestPurpose, RetryPolicy, StreamUpdate,
};

pub fn settings(base_url: &str, max_retries: u32) -> ClientSettings {
    ClientSettings {
        timeouts: ModelTimeouts {
            connect: Duration::from_secs(2),
            first_byte: Duration::from_secs(5),
            idle: Duration::from_secs(5),
        },
        retry: RetryPolicy {
            max_retries,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
            max_retry_after: Duration::from_secs(5),
        },
        ..ClientSettings::new(base_url)
    }
}

pub fn client(base_url: &str, max_retries: u32) -> ChatCompletionsClient {
    ChatCompletionsClient::new(settings(base_url, max_retries)).unwrap()
}

pub fn request() -> ChatRequest {
    ChatRequest {
        model: "mock-model".into(),
        messages: vec![
            ChatMessage::system("You are a test."),
            ChatMessage::user("hello"),
        ],
        tools: None,
        purpose: RequestPurpose::Turn,
        session_id: "session-1".into(),
    }
}

/// A ceiling for calls that must end long before what they wait on: far
/// above anything a loaded machine adds, far below the wait a broken
/// timeout would sit through (minutes to an hour in these tests).
pub const HANG: Duration = Duration::from_secs(60);

/// Awaits `future`, failing the test if it takes longer than `limit`.
pub async fn within<T>(limit: Duration, future: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(limit, future).await {
        Ok(value) => value,
        Err(_) => panic!("still waiting after {limit:?}: a timeout did not fire"),
    }
}

/// Runs one request and collects every update it reported.
pub async fn run(
    client: &dyn ModelClient,
    request: &ChatRequest,
) -> (Result<Completion, ModelError>, Vec<StreamUpdate>) {
    let mut updates = Vec::new();
    let result = client
        .stream_chat(request, &mut |update| updates.push(update))
        .await;
    (result, updates)
}

/// The text a consumer would show: deltas, forgetting everything before a reset.
pub fn visible_text(updates: &[StreamUpdate]) -> String {
    let mut text = String::new();
    for update in updates {
        match update {
            StreamUpdate::TextDelta(piece) => text.push_str(piece),
            StreamUpdate::Reset => text.clear(),
            StreamUpdate::ReasoningDelta(_)
            | StreamUpdate::ToolCallStarted { .. }
            | StreamUpdate::Retry { .. } => {}
        }
    }
    text
}

pub fn retries(updates: &[StreamUpdate]) -> Vec<(u32, u64, String)> {
    updates
        .iter()
        .filter_map(|update| match update {
            StreamUpdate::Retry {
                attempt,
                delay_ms,
                reason,
            } => Some((*attempt, *delay_ms, reason.clone())),
            _ => None,
        })
        .collect()
}
