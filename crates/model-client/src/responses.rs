//! The OpenAI Responses wire: instructions plus input items, streamed `response.*` events.
//! Stateless (`store: false`), so reasoning items travel back with their encrypted content.

use knack_config::Wire;
use reqwest::Url;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::transport::{ClientSettings, StreamAssembler, Transport, parse_chunk, preview};
use super::types::{ChatMessage, ChatRequest, Completion, ReasoningItem, Role, ToolCall, Usage};
use super::{ModelClient, ModelFuture, StreamUpdate, UpdateSink};
use crate::error::{ModelError, Result};

/// A streaming OpenAI Responses client.
#[derive(Debug, Clone)]
pub struct ResponsesClient {
    transport: Transport,
    max_output_tokens: u32,
    reasoning_effort: Option<String>,
    /// Whether `prompt_cache_key` is sent (on unless the profile turns it off).
    prompt_cache_key: bool,
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Value>,
    stream: bool,
    store: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    max_output_tokens: u32,
}

impl ResponsesClient {
    pub fn new(settings: ClientSettings) -> Result<Self> {
        let transport = Transport::new(
            &settings,
            "responses",
            |key| vec![("authorization".into(), format!("Bearer {key}"))],
            &[],
            None,
        )?;
        Ok(Self {
            transport,
            max_output_tokens: settings.output_cap(),
            reasoning_effort: settings.reasoning_effort,
            prompt_cache_key: settings.prompt_cache_key.unwrap_or(true),
        })
    }

    /// `{base_url}/responses`
    pub fn endpoint(&self) -> &Url {
        self.transport.endpoint()
    }

    async fn send(&self, request: &ChatRequest, on_update: UpdateSink<'_>) -> Result<Completion> {
        let body = self.encode(request)?;
        self.transport
            .stream::<ResponsesAssembler>(&body, request, on_update)
            .await
    }

    /// The body bytes: `instructions` is the frozen system prompt itself, so
    /// it is byte-identical in every request of a session.
    pub(crate) fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>> {
        let (instructions, rest) = match request.messages.split_first() {
            Some((first, rest)) if first.role == Role::System => (first.content.as_deref(), rest),
            _ => (None, request.messages.as_slice()),
        };
        let tools = match request.tools.as_deref() {
            Some(raw) => convert_tools(raw.get())?,
            None => None,
        };
        // Without asking for the encrypted content, a reasoning item cannot
        // be replayed when nothing is stored; models without reasoning
        // refuse the option, so it follows the provider's setting.
        let (reasoning, include) = match &self.reasoning_effort {
            Some(effort) => (
                Some(json!({"effort": effort, "summary": "auto"})),
                vec!["reasoning.encrypted_content"],
            ),
            None => (None, Vec::new()),
        };
        let wire = WireRequest {
            model: &request.model,
            instructions,
            input: map_input(rest),
            tools,
            stream: true,
            store: false,
            prompt_cache_key: self.prompt_cache_key.then_some(request.session_id.as_str()),
            reasoning,
            include,
            max_output_tokens: self.max_output_tokens,
        };
        Ok(serde_json::to_vec(&wire)?)
    }
}

impl ModelClient for ResponsesClient {
    fn stream_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_update: UpdateSink<'a>,
    ) -> ModelFuture<'a> {
        Box::pin(self.send(request, on_update))
    }
}

/// Chat Completions function specs to Responses tools (flat, not strict:
/// knack's schemas have optional properties, which strict mode refuses).
fn convert_tools(raw: &str) -> Result<Option<Value>> {
    super::transport::convert_tool_specs(raw, |function| {
        let mut tool = Map::new();
        tool.insert("type".into(), json!("function"));
        for key in ["name", "description", "parameters"] {
            if let Some(value) = function.get(key) {
                tool.insert(key.into(), value.clone());
            }
        }
        tool.insert("strict".into(), json!(false));
        Value::Object(tool)
    })
}

/// The conversation as input items: reasoning items come back before the
/// assistant output they led to, calls and their outputs pair by `call_id`.
fn map_input(messages: &[ChatMessage]) -> Vec<Value> {
    let mut input = Vec::with_capacity(messages.len());
    for message in messages {
        let text = message.content.as_deref().unwrap_or_default();
        match message.role {
            Role::System | Role::User => {
                input.push(json!({"role": "user", "content": text}));
            }
            Role::Tool => input.push(json!({
                "type": "function_call_output",
                "call_id": message.tool_call_id.as_deref().unwrap_or_default(),
                "output": text,
            })),
            Role::Assistant => {
                input.extend(
                    message
                        .reasoning
                        .iter()
                        .flatten()
                        .filter(|item| item.wire == Wire::Responses)
                        .map(|item| item.item.clone()),
                );
                if !text.is_empty() {
                    input.push(json!({"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text}]}));
                }
                for call in message.tool_calls.iter().flatten() {
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.function.name,
                        "arguments": call.function.arguments,
                    }));
                }
            }
        }
    }
    input
}

#[derive(Debug)]
struct Call {
    item_id: String,
    call_id: String,
    name: String,
    arguments: String,
}

/// Builds one completion from a Responses event stream.
#[derive(Debug, Default)]
pub(crate) struct ResponsesAssembler {
    content: String,
    calls: Vec<Call>,
    reasoning: Vec<ReasoningItem>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    done: bool,
    emitted: bool,
}

impl ResponsesAssembler {
    fn call_mut(&mut self, item_id: &str) -> Option<&mut Call> {
        self.calls.iter_mut().find(|call| call.item_id == item_id)
    }

    fn text(&mut self, text: &str, sink: &mut (dyn FnMut(StreamUpdate) + Send)) {
        if !text.is_empty() {
            self.content.push_str(text);
            self.emitted = true;
            sink(StreamUpdate::TextDelta(text.to_owned()));
        }
    }

    /// A function call seen for the first time (added) or whole (done).
    fn upsert_call(&mut self, item: &Value, sink: &mut (dyn FnMut(StreamUpdate) + Send)) {
        let field = |name: &str| item.get(name).and_then(Value::as_str).unwrap_or("");
        let item_id = field("id").to_owned();
        let arguments = field("arguments");
        if let Some(call) = self.call_mut(&item_id) {
            if !arguments.is_empty() {
                call.arguments = arguments.to_owned();
            }
            return;
        }
        let call = Call {
            item_id,
            call_id: field("call_id").to_owned(),
            name: field("name").to_owned(),
            arguments: arguments.to_owned(),
        };
        self.emitted = true;
        sink(StreamUpdate::ToolCallStarted {
            id: call.call_id.clone(),
            name: call.name.clone(),
        });
        self.calls.push(call);
    }

    fn item_done(
        &mut self,
        item: &Value,
        whole: bool,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) {
        match item.get("type").and_then(Value::as_str).unwrap_or("") {
            "function_call" => self.upsert_call(item, sink),
            // Only an item that carries its encrypted content can be sent
            // back when the server keeps nothing (`store: false`).
            "reasoning" if item.get("encrypted_content").is_some_and(Value::is_string) => {
                self.reasoning.push(ReasoningItem {
                    wire: Wire::Responses,
                    item: item.clone(),
                });
            }
            "message" if whole => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        self.text(text, sink);
                    }
                }
            }
            _ => {}
        }
    }

    fn completed(&mut self, response: &Value) {
        if let Some(usage) = response.get("usage") {
            let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64);
            self.usage = Some(Usage {
                prompt_tokens: number("/input_tokens").unwrap_or(0),
                completion_tokens: number("/output_tokens").unwrap_or(0),
                cached_tokens: number("/input_tokens_details/cached_tokens"),
                reasoning_tokens: number("/output_tokens_details/reasoning_tokens"),
                ..Usage::default()
            });
        }
        let incomplete = response.get("status").and_then(Value::as_str) == Some("incomplete");
        self.finish_reason = Some(
            if incomplete {
                "length"
            } else if self.calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
            .to_owned(),
        );
        self.done = true;
    }
}

fn error_message(value: &Value, data: &str) -> String {
    value
        .pointer("/response/error/message")
        .or_else(|| value.pointer("/error/message"))
        .or_else(|| value.get("message"))
        .and_then(Value::as_str)
        .map_or_else(|| preview(data), str::to_owned)
}

impl StreamAssembler for ResponsesAssembler {
    fn accept(&mut self, data: &str, sink: &mut (dyn FnMut(StreamUpdate) + Send)) -> Result<()> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let event: Value = parse_chunk(data)?;
        let text = |name: &str| event.get(name).and_then(Value::as_str).unwrap_or("");
        match text("type") {
            "response.output_text.delta" => {
                let delta = text("delta").to_owned();
                self.text(&delta, sink);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = text("delta");
                if !delta.is_empty() {
                    self.emitted = true;
                    sink(StreamUpdate::ReasoningDelta(delta.to_owned()));
                }
            }
            "response.output_item.added" => {
                if let Some(item) = event.get("item")
                    && item.get("type").and_then(Value::as_str) == Some("function_call")
                {
                    self.upsert_call(item, sink);
                }
            }
            "response.function_call_arguments.delta" => {
                let (item_id, delta) = (text("item_id").to_owned(), text("delta").to_owned());
                if let Some(call) = self.call_mut(&item_id) {
                    call.arguments.push_str(&delta);
                }
            }
            "response.function_call_arguments.done" => {
                let (item_id, arguments) =
                    (text("item_id").to_owned(), text("arguments").to_owned());
                if let Some(call) = self.call_mut(&item_id) {
                    call.arguments = arguments;
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.get("item") {
                    self.item_done(item, false, sink);
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = event.get("response").cloned().unwrap_or(Value::Null);
                self.completed(&response);
            }
            "response.failed" | "error" => {
                return Err(ModelError::StreamReportedError {
                    message: error_message(&event, data),
                });
            }
            other => tracing::debug!(event = other, "ignoring a stream event"),
        }
        Ok(())
    }

    fn accept_whole(
        &mut self,
        body: &str,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<()> {
        let response: Value =
            serde_json::from_str(body).map_err(|_| ModelError::MalformedStream {
                detail: format!("the reply is not JSON: {}", preview(body)),
            })?;
        if response.get("error").is_some_and(|e| !e.is_null()) {
            return Err(ModelError::StreamReportedError {
                message: error_message(&response, body),
            });
        }
        for item in response
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.item_done(item, true, sink);
        }
        self.completed(&response);
        Ok(())
    }

    fn saw_done(&self) -> bool {
        self.done
    }

    fn is_complete(&self) -> bool {
        self.done
    }

    fn emitted(&self) -> bool {
        self.emitted
    }

    fn finish(self) -> Result<Completion> {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|call| {
                let arguments = if call.arguments.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments
                };
                ToolCall::function(call.call_id, call.name, arguments)
            })
            .collect();
        Ok(Completion {
            content: self.content,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
            reasoning: self.reasoning,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RequestPurpose, freeze_tools};
    use pretty_assertions::assert_eq;

    fn client(effort: Option<&str>) -> ResponsesClient {
        let mut settings = ClientSettings::new("http://127.0.0.1:1/v1");
        settings.reasoning_effort = effort.map(str::to_owned);
        ResponsesClient::new(settings).unwrap()
    }

    fn assemble(frames: &[Value]) -> (Result<Completion>, Vec<StreamUpdate>) {
        let mut updates = Vec::new();
        let mut assembler = ResponsesAssembler::default();
        for frame in frames {
            if let Err(err) = assembler.accept(&frame.to_string(), &mut |u| updates.push(u)) {
                return (Err(err), updates);
            }
        }
        (assembler.finish(), updates)
    }

    #[test]
    fn the_request_is_stateless_keyed_and_maps_items() {
        let reasoning = ReasoningItem {
            wire: Wire::Responses,
            item: json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"}),
        };
        let foreign = ReasoningItem {
            wire: Wire::Anthropic,
            item: json!({"type": "thinking"}),
        };
        let request = ChatRequest {
            model: "gpt".into(),
            messages: vec![
                ChatMessage::system("frozen"),
                ChatMessage::user("task"),
                ChatMessage::assistant(
                    "Checking.",
                    vec![ToolCall::function("c1", "skills_list", "{}")],
                )
                .with_reasoning(vec![reasoning, foreign]),
                ChatMessage::tool_result("c1", "{\"success\":true}"),
            ],
            tools: freeze_tools(&[
                json!({"type": "function", "function": {"name": "skills_list",
                "description": "d", "parameters": {"type": "object"}}}),
            ])
            .unwrap(),
            purpose: RequestPurpose::Turn,
            session_id: "sess-1".into(),
        };
        let value: Value =
            serde_json::from_slice(&client(Some("medium")).encode(&request).unwrap()).unwrap();
        assert_eq!(value["instructions"], "frozen");
        assert_eq!(value["store"], false);
        assert_eq!(value["prompt_cache_key"], "sess-1");
        assert_eq!(value["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(
            value["tools"],
            json!([{"type": "function", "name": "skills_list", "description": "d",
                    "parameters": {"type": "object"}, "strict": false}])
        );
        let kinds: Vec<String> = value["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| {
                item["type"]
                    .as_str()
                    .or(item["role"].as_str())
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "user",
                "reasoning",
                "message",
                "function_call",
                "function_call_output"
            ]
        );
        assert_eq!(value["input"][4]["call_id"], "c1");
        let plain: Value = serde_json::from_slice(&client(None).encode(&request).unwrap()).unwrap();
        assert!(plain.get("include").is_none() && plain.get("reasoning").is_none());
        // A cap always goes out; thinking counts against it, so it is larger then.
        assert_eq!(
            plain["max_output_tokens"],
            super::super::DEFAULT_MAX_OUTPUT_TOKENS
        );
        assert_eq!(
            value["max_output_tokens"],
            super::super::DEFAULT_REASONING_MAX_OUTPUT_TOKENS
        );

        // `prompt_cache_key: false` in the profile leaves the key out.
        let mut settings = ClientSettings::new("http://127.0.0.1:1/v1");
        settings.prompt_cache_key = Some(false);
        let keyless = ResponsesClient::new(settings).unwrap();
        let value: Value = serde_json::from_slice(&keyless.encode(&request).unwrap()).unwrap();
        assert!(value.get("prompt_cache_key").is_none(), "{value}");
        assert_eq!(value["store"], false);
    }

    #[test]
    fn a_stream_with_reasoning_text_and_calls_assembles() {
        let (completion, updates) = assemble(&[
            json!({"type": "response.created", "response": {"id": "r"}}),
            json!({"type": "response.reasoning_summary_text.delta", "delta": "thinking"}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC"}}),
            json!({"type": "response.output_text.delta", "delta": "Hi "}),
            json!({"type": "response.output_text.delta", "delta": "there"}),
            json!({"type": "response.output_item.added", "output_index": 2, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "skill_view", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"name\":"}),
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "\"x\"}"}),
            json!({"type": "response.some_future_event"}),
            json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 100,
                "input_tokens_details": {"cached_tokens": 80}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12}}}}),
        ]);
        let completion = completion.unwrap();
        assert_eq!(completion.content, "Hi there");
        assert_eq!(
            completion.tool_calls,
            vec![ToolCall::function(
                "call_1",
                "skill_view",
                r#"{"name":"x"}"#
            )]
        );
        assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(completion.reasoning[0].item["encrypted_content"], "ENC");
        let usage = completion.usage.unwrap();
        assert_eq!(
            (
                usage.prompt_tokens,
                usage.cached_tokens,
                usage.completion_tokens,
                usage.reasoning_tokens
            ),
            (100, Some(80), 20, Some(12))
        );
        assert_eq!(updates[0], StreamUpdate::ReasoningDelta("thinking".into()));
    }

    #[test]
    fn failures_and_bad_json_are_errors() {
        let (result, _) = assemble(&[
            json!({"type": "response.failed", "response": {"error": {"message": "server had an error"}}}),
        ]);
        assert!(
            result
                .unwrap_err()
                .to_string()
                .contains("server had an error")
        );
        let mut assembler = ResponsesAssembler::default();
        let err = assembler.accept("{\"type\":", &mut |_| {}).unwrap_err();
        assert!(matches!(err, ModelError::MalformedChunk { .. }) && err.is_retryable());
    }

    #[test]
    fn a_whole_response_is_accepted() {
        let mut assembler = ResponsesAssembler::default();
        assembler
            .accept_whole(
                r#"{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"done"}]}],
                   "usage":{"input_tokens":5,"output_tokens":1}}"#,
                &mut |_| {},
            )
            .unwrap();
        let completion = assembler.finish().unwrap();
        assert_eq!(
            (
                completion.content.as_str(),
                completion.finish_reason.as_deref()
            ),
            ("done", Some("stop"))
        );
    }
}
