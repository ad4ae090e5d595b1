//! The Anthropic Messages wire: the conversation mapped to content blocks, cache
//! breakpoints placed so the frozen prefix and the growing history are both cached.

use knack_config::{CacheTtl, Wire};
use reqwest::Url;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::transport::{ClientSettings, StreamAssembler, Transport, parse_chunk, preview};
use super::types::{ChatMessage, ChatRequest, Completion, Role, ToolCall, Usage};
use super::{ModelClient, ModelFuture, StreamUpdate, UpdateSink};
use crate::error::{ModelError, Result};

/// The API version this client speaks.
const API_VERSION: &str = "2023-06-01";

/// Anthropic accepts at most this many `cache_control` markers per request.
pub const MAX_BREAKPOINTS: usize = 4;

/// The smallest extended-thinking budget the API accepts.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// The `reasoning_effort` values this wire understands, for error messages.
pub const THINKING_EFFORTS: &str = "minimal, low, medium, high";

/// The extended-thinking budget a provider's `reasoning_effort` stands for on
/// this wire, which takes a token budget rather than a level. Each step is
/// about three times the one below, the range the API's examples span.
pub fn thinking_budget_for_effort(effort: &str) -> Option<u32> {
    match effort.trim().to_ascii_lowercase().as_str() {
        "minimal" => Some(MIN_THINKING_BUDGET),
        "low" => Some(4_096),
        "medium" => Some(12_288),
        "high" => Some(24_576),
        _ => None,
    }
}

/// A streaming Anthropic Messages client.
#[derive(Debug, Clone)]
pub struct AnthropicClient {
    transport: Transport,
    max_tokens: u32,
    cache_control: Value,
    /// `thinking: {type: enabled, budget_tokens}` when the profile asks for it.
    thinking: Option<Value>,
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Value>,
    messages: Vec<WireMessage>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a Value>,
}

#[derive(Debug, Serialize)]
struct WireMessage {
    role: &'static str,
    content: Vec<Value>,
}

/// Which parts of a request carry a `cache_control` marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breakpoints {
    /// The system prompt's last block; it caches the tools before it too.
    pub system: bool,
    /// Indexes into the request's messages, ascending.
    pub messages: Vec<usize>,
}

/// Where the cache markers of one request go: one on the system prompt (the
/// frozen prefix: tools, then system) and the rest on the last messages, so
/// the previous request's marked end is still a marker in this one and its
/// whole conversation is read from the cache. Never more than four.
pub fn cache_breakpoints(has_system: bool, message_count: usize) -> Breakpoints {
    let for_messages = MAX_BREAKPOINTS - usize::from(has_system);
    let first = message_count.saturating_sub(for_messages);
    Breakpoints {
        system: has_system,
        messages: (first..message_count).collect(),
    }
}

impl AnthropicClient {
    pub fn new(settings: ClientSettings) -> Result<Self> {
        let mut wire_headers = vec![("anthropic-version", API_VERSION)];
        if settings.cache_ttl == CacheTtl::OneHour {
            // Older API versions only honour the one-hour TTL behind this flag.
            wire_headers.push(("anthropic-beta", "extended-cache-ttl-2025-04-11"));
        }
        let transport = Transport::new(
            &settings,
            "messages",
            |key| vec![("x-api-key".into(), key.into())],
            &wire_headers,
            None,
        )?;
        let cache_control = match settings.cache_ttl {
            CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
            CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
        };
        let cap = settings.output_cap();
        // Thinking counts against `max_tokens`, which must exceed the budget:
        // a cap the budget would use up gets the budget on top, so the
        // answer still has the room the profile meant it to have.
        let max_tokens = match settings.thinking_budget {
            Some(budget) if budget >= cap => budget.saturating_add(cap),
            _ => cap,
        };
        let thinking = settings
            .thinking_budget
            .map(|budget| json!({"type": "enabled", "budget_tokens": budget}));
        Ok(Self {
            transport,
            max_tokens,
            cache_control,
            thinking,
        })
    }

    /// `{base_url}/messages`
    pub fn endpoint(&self) -> &Url {
        self.transport.endpoint()
    }

    async fn send(&self, request: &ChatRequest, on_update: UpdateSink<'_>) -> Result<Completion> {
        let body = self.encode(request)?;
        self.transport
            .stream::<AnthropicAssembler>(&body, request, on_update)
            .await
    }

    /// The body bytes; the system blocks and tools come out the same for
    /// every request of a session because they derive from frozen inputs only.
    pub(crate) fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>> {
        let (system_text, rest) = match request.messages.split_first() {
            Some((first, rest)) if first.role == Role::System => (first.content.as_deref(), rest),
            _ => (None, request.messages.as_slice()),
        };
        let mut system = Vec::new();
        if let Some(text) = system_text.filter(|t| !t.is_empty()) {
            system.push(json!({"type": "text", "text": text}));
        }
        let mut messages = map_messages(rest);
        let breakpoints = cache_breakpoints(!system.is_empty(), messages.len());
        if breakpoints.system
            && let Some(Value::Object(block)) = system.last_mut()
        {
            block.insert("cache_control".into(), self.cache_control.clone());
        }
        for index in breakpoints.messages {
            if let Some(message) = messages.get_mut(index) {
                mark_last_cacheable(&mut message.content, &self.cache_control);
            }
        }
        let tools = match request.tools.as_deref() {
            Some(raw) => convert_tools(raw.get())?,
            None => None,
        };
        let wire = WireRequest {
            model: &request.model,
            max_tokens: self.max_tokens,
            system,
            tools,
            messages,
            stream: true,
            thinking: self.thinking.as_ref(),
        };
        Ok(serde_json::to_vec(&wire)?)
    }
}

impl ModelClient for AnthropicClient {
    fn stream_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_update: UpdateSink<'a>,
    ) -> ModelFuture<'a> {
        Box::pin(self.send(request, on_update))
    }
}

/// OpenAI-style function specs to Anthropic tools (`name`, `description`, `input_schema`).
fn convert_tools(raw: &str) -> Result<Option<Value>> {
    super::transport::convert_tool_specs(raw, |function| {
        let mut tool = Map::new();
        tool.insert(
            "name".into(),
            function.get("name").cloned().unwrap_or(Value::Null),
        );
        if let Some(description) = function.get("description") {
            tool.insert("description".into(), description.clone());
        }
        let schema = function
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        tool.insert("input_schema".into(), schema);
        Value::Object(tool)
    })
}

/// The stored conversation as Anthropic messages: tool results become
/// `tool_result` blocks of one user message, thinking blocks go back first in
/// their assistant message, and neighbours of one role are merged because
/// the roles must alternate.
fn map_messages(messages: &[ChatMessage]) -> Vec<WireMessage> {
    let mut out: Vec<WireMessage> = Vec::with_capacity(messages.len());
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System | Role::User => ("user", user_blocks(message)),
            Role::Tool => ("user", vec![tool_result_block(message)]),
            Role::Assistant => ("assistant", assistant_blocks(message)),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    out
}

fn user_blocks(message: &ChatMessage) -> Vec<Value> {
    match message.content.as_deref() {
        Some(text) if !text.is_empty() => vec![json!({"type": "text", "text": text})],
        _ => Vec::new(),
    }
}

fn tool_result_block(message: &ChatMessage) -> Value {
    json!({
        "type": "tool_result",
        "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
        "content": message.content.as_deref().unwrap_or_default(),
    })
}

fn assistant_blocks(message: &ChatMessage) -> Vec<Value> {
    let mut blocks: Vec<Value> = message
        .reasoning
        .iter()
        .flatten()
        .filter(|item| item.wire == Wire::Anthropic)
        .map(|item| item.item.clone())
        .collect();
    if let Some(text) = message.content.as_deref().filter(|t| !t.is_empty()) {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for call in message.tool_calls.iter().flatten() {
        blocks.push(tool_use_block(call));
    }
    blocks
}

fn tool_use_block(call: &ToolCall) -> Value {
    // `input` must be an object; arguments the model garbled were already
    // answered with an error result, so an empty object keeps the pair valid.
    let input = match serde_json::from_str::<Value>(&call.function.arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => json!({}),
    };
    json!({"type": "tool_use", "id": call.id, "name": call.function.name, "input": input})
}

/// Marks the last block that may carry a marker (thinking blocks may not).
fn mark_last_cacheable(blocks: &mut [Value], cache_control: &Value) {
    let cacheable = blocks.iter_mut().rev().find(|block| {
        !matches!(
            block.get("type").and_then(Value::as_str),
            Some("thinking" | "redacted_thinking")
        )
    });
    if let Some(Value::Object(block)) = cacheable {
        block.insert("cache_control".into(), cache_control.clone());
    }
}

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    /// Kept verbatim and sent back as it came (`redacted_thinking`).
    Opaque(Value),
    Ignored,
}

/// Builds one completion from a Messages event stream.
#[derive(Debug, Default)]
pub(crate) struct AnthropicAssembler {
    blocks: Vec<(u64, Block)>,
    content: String,
    input_tokens: u64,
    cache_read: Option<u64>,
    cache_write: Option<u64>,
    output_tokens: u64,
    saw_usage: bool,
    stop_reason: Option<String>,
    done: bool,
    emitted: bool,
}

impl AnthropicAssembler {
    fn block_mut(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, block)| block)
    }

    fn take_usage(&mut self, usage: &Value) {
        let field = |name: &str| usage.get(name).and_then(Value::as_u64);
        if let Some(n) = field("input_tokens") {
            self.input_tokens = n;
            self.saw_usage = true;
        }
        if let Some(n) = field("cache_read_input_tokens") {
            self.cache_read = Some(n);
        }
        if let Some(n) = field("cache_creation_input_tokens") {
            self.cache_write = Some(n);
        }
        if let Some(n) = field("output_tokens") {
            self.output_tokens = n;
            self.saw_usage = true;
        }
    }

    fn start_block(
        &mut self,
        index: u64,
        block: &Value,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) {
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        let text_of = |name: &str| {
            block
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let entry = match kind {
            "text" => {
                let text = text_of("text");
                self.push_text(text, sink);
                Block::Text
            }
            "tool_use" => {
                let (id, name) = (text_of("id"), text_of("name"));
                // Streamed input starts as `{}` and arrives in deltas; a whole
                // message carries it complete.
                let json = match block.get("input") {
                    Some(Value::Object(map)) if !map.is_empty() => {
                        Value::Object(map.clone()).to_string()
                    }
                    _ => String::new(),
                };
                self.emitted = true;
                sink(StreamUpdate::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                });
                Block::ToolUse { id, name, json }
            }
            "thinking" => {
                let thinking = text_of("thinking");
                if !thinking.is_empty() {
                    self.emitted = true;
                    sink(StreamUpdate::ReasoningDelta(thinking.clone()));
                }
                Block::Thinking {
                    thinking,
                    signature: text_of("signature"),
                }
            }
            "redacted_thinking" => Block::Opaque(block.clone()),
            other => {
                tracing::debug!(block = other, "ignoring an unknown content block");
                Block::Ignored
            }
        };
        self.blocks.push((index, entry));
    }

    fn push_text(&mut self, text: String, sink: &mut (dyn FnMut(StreamUpdate) + Send)) {
        if text.is_empty() {
            return;
        }
        self.content.push_str(&text);
        self.emitted = true;
        sink(StreamUpdate::TextDelta(text));
    }

    fn apply_delta(
        &mut self,
        index: u64,
        delta: &Value,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) {
        let kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
        let piece = |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or("");
        match kind {
            "text_delta" => self.push_text(piece("text").to_owned(), sink),
            "input_json_delta" => {
                if let Some(Block::ToolUse { json, .. }) = self.block_mut(index) {
                    json.push_str(piece("partial_json"));
                }
            }
            "thinking_delta" => {
                let text = piece("thinking").to_owned();
                if let Some(Block::Thinking { thinking, .. }) = self.block_mut(index) {
                    thinking.push_str(&text);
                }
                if !text.is_empty() {
                    self.emitted = true;
                    sink(StreamUpdate::ReasoningDelta(text));
                }
            }
            "signature_delta" => {
                let piece = piece("signature").to_owned();
                if let Some(Block::Thinking { signature, .. }) = self.block_mut(index) {
                    signature.push_str(&piece);
                }
            }
            other => tracing::debug!(delta = other, "ignoring an unknown delta"),
        }
    }
}

impl StreamAssembler for AnthropicAssembler {
    fn accept(&mut self, data: &str, sink: &mut (dyn FnMut(StreamUpdate) + Send)) -> Result<()> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let event: Value = parse_chunk(data)?;
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                if let Some(usage) = event.pointer("/message/usage") {
                    self.take_usage(usage);
                }
            }
            "content_block_start" => {
                let block = event.get("content_block").cloned().unwrap_or(Value::Null);
                self.start_block(index, &block, sink);
            }
            "content_block_delta" => {
                let delta = event.get("delta").cloned().unwrap_or(Value::Null);
                self.apply_delta(index, &delta, sink);
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = event.get("usage") {
                    self.take_usage(usage);
                }
            }
            "message_stop" => self.done = true,
            "content_block_stop" | "ping" => {}
            "error" => {
                let message = event
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map_or_else(|| preview(data), str::to_owned);
                return Err(ModelError::StreamReportedError { message });
            }
            other => tracing::debug!(event = other, "ignoring an unknown stream event"),
        }
        Ok(())
    }

    fn accept_whole(
        &mut self,
        body: &str,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<()> {
        let message: Value =
            serde_json::from_str(body).map_err(|_| ModelError::MalformedStream {
                detail: format!("the reply is not JSON: {}", preview(body)),
            })?;
        if let Some(error) = message.pointer("/error/message").and_then(Value::as_str) {
            return Err(ModelError::StreamReportedError {
                message: error.to_owned(),
            });
        }
        if let Some(usage) = message.get("usage") {
            self.take_usage(usage);
        }
        let blocks = message
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (index, block) in blocks.iter().enumerate() {
            self.start_block(index as u64, block, sink);
        }
        self.stop_reason = message
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.done = true;
        Ok(())
    }

    fn saw_done(&self) -> bool {
        self.done
    }

    fn is_complete(&self) -> bool {
        self.done || self.stop_reason.is_some()
    }

    fn emitted(&self) -> bool {
        self.emitted
    }

    fn finish(mut self) -> Result<Completion> {
        self.blocks.sort_by_key(|(index, _)| *index);
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        for (_, block) in self.blocks {
            match block {
                Block::ToolUse { id, name, json } => {
                    let arguments = if json.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        json
                    };
                    tool_calls.push(ToolCall::function(id, name, arguments));
                }
                Block::Thinking {
                    thinking,
                    signature,
                } => reasoning.push(super::ReasoningItem {
                    wire: Wire::Anthropic,
                    item: json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                }),
                Block::Opaque(item) => reasoning.push(super::ReasoningItem {
                    wire: Wire::Anthropic,
                    item,
                }),
                Block::Text | Block::Ignored => {}
            }
        }
        let usage = self.saw_usage.then(|| Usage {
            prompt_tokens: self.input_tokens
                + self.cache_read.unwrap_or(0)
                + self.cache_write.unwrap_or(0),
            completion_tokens: self.output_tokens,
            cached_tokens: self.cache_read,
            cache_write_tokens: self.cache_write,
            ..Usage::default()
        });
        Ok(Completion {
            content: self.content,
            tool_calls,
            usage,
            finish_reason: self.stop_reason.map(|reason| finish_reason(&reason)),
            reasoning,
        })
    }
}

/// Anthropic's `stop_reason` in the Chat Completions vocabulary the loop logs.
fn finish_reason(stop_reason: &str) -> String {
    match stop_reason {
        "end_turn" | "stop_sequence" => "stop",
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        "refusal" => "content_filter",
        other => other,
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ReasoningItem, RequestPurpose, freeze_tools};
    use pretty_assertions::assert_eq;

    fn client(ttl: CacheTtl) -> AnthropicClient {
        let mut settings = ClientSettings::new("http://127.0.0.1:1/v1");
        settings.cache_ttl = ttl;
        AnthropicClient::new(settings).unwrap()
    }

    fn assemble(frames: &[Value]) -> (Result<Completion>, Vec<StreamUpdate>) {
        let mut updates = Vec::new();
        let mut assembler = AnthropicAssembler::default();
        for frame in frames {
            if let Err(err) = assembler.accept(&frame.to_string(), &mut |u| updates.push(u)) {
                return (Err(err), updates);
            }
        }
        (assembler.finish(), updates)
    }

    fn conversation(turns: usize) -> Vec<ChatMessage> {
        let mut messages = vec![ChatMessage::system("frozen"), ChatMessage::user("task")];
        for i in 0..turns {
            let id = format!("c{i}");
            messages.push(
                ChatMessage::assistant("", vec![ToolCall::function(&id, "skills_list", "{}")])
                    .with_reasoning(vec![ReasoningItem {
                        wire: Wire::Anthropic,
                        item: json!({"type": "thinking", "thinking": "hm", "signature": "sig"}),
                    }]),
            );
            messages.push(ChatMessage::tool_result(&id, "{\"success\":true}"));
        }
        messages
    }

    fn request(messages: Vec<ChatMessage>) -> ChatRequest {
        ChatRequest {
            model: "claude".into(),
            messages,
            tools: freeze_tools(&[json!({"type": "function", "function": {
                "name": "skills_list", "description": "List skills",
                "parameters": {"type": "object", "properties": {}}}})])
            .unwrap(),
            purpose: RequestPurpose::Turn,
            session_id: "s".into(),
        }
    }

    fn markers(value: &Value) -> usize {
        match value {
            Value::Object(map) => {
                usize::from(map.contains_key("cache_control"))
                    + map.values().map(markers).sum::<usize>()
            }
            Value::Array(items) => items.iter().map(markers).sum(),
            _ => 0,
        }
    }

    #[test]
    fn breakpoints_never_exceed_four_and_cover_the_latest_messages() {
        for count in 0..40 {
            for has_system in [false, true] {
                let points = cache_breakpoints(has_system, count);
                assert!(usize::from(points.system) + points.messages.len() <= MAX_BREAKPOINTS);
                assert_eq!(points.system, has_system);
                if count > 0 {
                    assert_eq!(points.messages.last(), Some(&(count - 1)));
                }
            }
        }
        assert_eq!(cache_breakpoints(true, 10).messages, vec![7, 8, 9]);
        assert_eq!(cache_breakpoints(false, 2).messages, vec![0, 1]);
    }

    #[test]
    fn the_request_maps_system_tools_thinking_and_tool_results() {
        let body = client(CacheTtl::FiveMinutes)
            .encode(&request(conversation(2)))
            .unwrap();
        let value: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            value["system"],
            json!([{"type": "text", "text": "frozen", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(
            value["tools"],
            json!([{"name": "skills_list", "description": "List skills",
                    "input_schema": {"type": "object", "properties": {}}}])
        );
        assert_eq!(
            value["max_tokens"],
            super::super::transport::DEFAULT_MAX_OUTPUT_TOKENS
        );
        let messages = value["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
        assert_eq!(messages[1]["content"][0]["signature"], "sig");
        assert_eq!(messages[1]["content"][1]["type"], "tool_use");
        assert_eq!(messages[2]["content"][0]["tool_use_id"], "c0");
        assert_eq!(markers(&value), 4);
        // Thinking blocks never carry a marker.
        assert!(messages[3]["content"][0].get("cache_control").is_none());
        assert!(messages[3]["content"][1].get("cache_control").is_some());
    }

    #[test]
    fn no_thinking_is_requested_unless_the_profile_asks() {
        let body = client(CacheTtl::FiveMinutes)
            .encode(&request(conversation(1)))
            .unwrap();
        let value: Value = serde_json::from_slice(&body).unwrap();
        assert!(value.get("thinking").is_none(), "{value}");
    }

    #[test]
    fn a_thinking_budget_goes_out_with_room_for_the_answer() {
        let encode = |budget: u32, cap: Option<u32>| {
            let mut settings =
                ClientSettings::new("http://127.0.0.1:9/v1").with_wire(Wire::Anthropic);
            settings.thinking_budget = Some(budget);
            settings.max_output_tokens = cap;
            let body = AnthropicClient::new(settings)
                .unwrap()
                .encode(&request(conversation(1)))
                .unwrap();
            serde_json::from_slice::<Value>(&body).unwrap()
        };
        let value = encode(4_096, None);
        assert_eq!(
            value["thinking"],
            json!({"type": "enabled", "budget_tokens": 4096})
        );
        // Without a cap of its own the profile gets the larger reasoning default.
        assert_eq!(
            value["max_tokens"],
            super::super::transport::DEFAULT_REASONING_MAX_OUTPUT_TOKENS
        );
        // A cap at or below the budget would be refused: the budget goes on top.
        let value = encode(24_576, Some(8_192));
        assert_eq!(value["thinking"]["budget_tokens"], 24_576);
        assert_eq!(value["max_tokens"], 24_576 + 8_192);
        let value = encode(2_000, Some(8_192));
        assert_eq!(value["max_tokens"], 8_192);
    }

    #[test]
    fn efforts_map_to_growing_budgets_and_unknown_ones_to_none() {
        let budgets: Vec<u32> = ["minimal", "low", "medium", "High "]
            .iter()
            .map(|e| thinking_budget_for_effort(e).unwrap())
            .collect();
        assert_eq!(budgets[0], MIN_THINKING_BUDGET);
        assert!(budgets.windows(2).all(|w| w[0] < w[1]), "{budgets:?}");
        assert_eq!(thinking_budget_for_effort("extreme"), None);
    }

    #[test]
    fn tool_results_and_a_following_note_share_one_user_message() {
        let mut messages = conversation(1);
        messages.push(ChatMessage::user("[Skill catalog update]"));
        let body = client(CacheTtl::OneHour)
            .encode(&request(messages))
            .unwrap();
        let value: Value = serde_json::from_slice(&body).unwrap();
        let last = &value["messages"][2]["content"];
        assert_eq!(last[0]["type"], "tool_result");
        assert_eq!(last[1]["type"], "text");
        assert_eq!(
            last[1]["cache_control"],
            json!({"type": "ephemeral", "ttl": "1h"})
        );
    }

    #[test]
    fn a_stream_with_thinking_text_and_tool_use_assembles() {
        let (completion, updates) = assemble(&[
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 10,
                "cache_read_input_tokens": 900, "cache_creation_input_tokens": 50, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "let me"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Looking."}}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "tu1", "name": "skill_view", "input": {}}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"name\":"}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "\"x\"}"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}}),
            json!({"type": "message_stop"}),
        ]);
        let completion = completion.unwrap();
        assert_eq!(completion.content, "Looking.");
        assert_eq!(
            completion.tool_calls,
            vec![ToolCall::function("tu1", "skill_view", r#"{"name":"x"}"#)]
        );
        assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            completion.reasoning[0].item,
            json!({"type": "thinking", "thinking": "let me", "signature": "SIG"})
        );
        let usage = completion.usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.cached_tokens,
                usage.cache_write_tokens,
                usage.completion_tokens
            ),
            (960, Some(900), Some(50), 42)
        );
        assert_eq!(usage.fresh_input_tokens(), 10);
        assert_eq!(updates[0], StreamUpdate::ReasoningDelta("let me".into()));
        assert!(updates.contains(&StreamUpdate::ToolCallStarted {
            id: "tu1".into(),
            name: "skill_view".into()
        }));
    }

    #[test]
    fn error_events_and_bad_json_are_retryable_errors() {
        let (result, _) = assemble(&[
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ]);
        let err = result.unwrap_err();
        assert!(
            err.is_retryable() && err.to_string().contains("Overloaded"),
            "{err}"
        );
        let mut assembler = AnthropicAssembler::default();
        let err = assembler
            .accept("{\"type\": \"content_blo", &mut |_| {})
            .unwrap_err();
        assert!(matches!(err, ModelError::MalformedChunk { .. }), "{err}");
    }

    #[test]
    fn stop_reasons_map_to_the_loop_vocabulary() {
        for (anthropic, ours) in [
            ("end_turn", "stop"),
            ("tool_use", "tool_calls"),
            ("max_tokens", "length"),
            ("pause_turn", "pause_turn"),
        ] {
            assert_eq!(finish_reason(anthropic), ours);
        }
    }

    #[test]
    fn a_whole_message_reply_is_accepted() {
        let mut assembler = AnthropicAssembler::default();
        assembler
            .accept_whole(
                r#"{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"n","input":{"a":1}}],
                   "stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}}"#,
                &mut |_| {},
            )
            .unwrap();
        let completion = assembler.finish().unwrap();
        assert_eq!(completion.content, "hi");
        assert_eq!(completion.tool_calls[0].function.arguments, r#"{"a":1}"#);
    }
}
