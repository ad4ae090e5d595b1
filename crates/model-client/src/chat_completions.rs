//! The OpenAI-compatible Chat Completions client: one reqwest client, our own SSE parsing.
//! Owns timeouts and retries so every retry is visible to the user as it happens.
//!
//! Why not `async-openai`: its typed chunks use strict enums that some
//! OpenAI-compatible servers break (`finish_reason: ""`, unknown
//! `service_tier`), and its typed structs drop fields such as
//! `reasoning_content`. Its `byot` mode would let us pass our own structs, but
//! then it only adds an SSE layer and a retry layer we must not use (retries
//! here are reported as events and must reset partial output). What is left is
//! about a hundred lines of SSE decoding, far less than the crate's build
//! cost, and a single `reqwest::Client` that we configure ourselves.

use knack_config::CacheTtl;
use reqwest::Url;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::anthropic::MAX_BREAKPOINTS;
use super::chunk::ReplyAssembler;
use super::transport::{ClientSettings, Transport};
use super::types::{ChatMessage, ChatRequest, Completion, Role, ToolCall};
use super::{ModelClient, ModelFuture, UpdateSink};
use crate::error::Result;

/// A streaming Chat Completions client for OpenAI, OpenRouter, vLLM,
/// llama.cpp, Ollama and anything else that speaks the same protocol.
#[derive(Debug, Clone)]
pub struct ChatCompletionsClient {
    transport: Transport,
    prompt_cache_key: bool,
    max_output_tokens: u32,
    /// The `cache_control` marker to pass through to Anthropic models behind
    /// a router, when the profile asks for it (`providers.<name>.cache_control`).
    cache_control: Option<Value>,
    /// `reasoning_effort` for reasoning models (OpenAI's o-series and gpt-5,
    /// and servers that copy the field); absent unless the profile sets it.
    reasoning_effort: Option<String>,
}

/// The request body; field order is fixed so the bytes repeat request after request.
#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    stream: bool,
    stream_options: StreamOptions,
    /// `max_tokens`, not OpenAI's newer `max_completion_tokens`: it is the
    /// field llama.cpp, vLLM, Ollama and the routers all read.
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
}

/// A stored message as this wire sends it: everything but the reasoning
/// other wires must replay, which Chat Completions servers do not accept.
#[derive(Serialize)]
struct WireMessage<'a> {
    role: Role,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<WireContent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<&'a [ToolCall]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

impl<'a> From<&'a ChatMessage> for WireMessage<'a> {
    fn from(message: &'a ChatMessage) -> Self {
        Self {
            role: message.role,
            content: message.content.as_deref().map(WireContent::Text),
            tool_calls: message.tool_calls.as_deref(),
            tool_call_id: message.tool_call_id.as_deref(),
        }
    }
}

/// A message's content: plain text, or one text part carrying a cache
/// marker (the only shape routers pass on to Anthropic with its marker).
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Marked([MarkedText<'a>; 1]),
}

#[derive(Serialize)]
struct MarkedText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: &'a Value,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl ChatCompletionsClient {
    pub fn new(settings: ClientSettings) -> Result<Self> {
        Self::build(settings, None)
    }

    /// Uses a client built elsewhere (shared connection pool); its own connect
    /// timeout applies instead of `settings.timeouts.connect`.
    pub fn with_http_client(settings: ClientSettings, http: reqwest::Client) -> Result<Self> {
        Self::build(settings, Some(http))
    }

    fn build(settings: ClientSettings, http: Option<reqwest::Client>) -> Result<Self> {
        let transport = Transport::new(
            &settings,
            "chat/completions",
            |key| vec![("authorization".into(), format!("Bearer {key}"))],
            &[],
            http,
        )?;
        let cache_control = settings.cache_control.then(|| match settings.cache_ttl {
            CacheTtl::FiveMinutes => json!({"type": "ephemeral"}),
            CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
        });
        Ok(Self {
            transport,
            prompt_cache_key: settings.prompt_cache_key.unwrap_or(false),
            max_output_tokens: settings.output_cap(),
            cache_control,
            reasoning_effort: settings.reasoning_effort,
        })
    }

    /// `{base_url}/chat/completions`
    pub fn endpoint(&self) -> &Url {
        self.transport.endpoint()
    }

    async fn send(&self, request: &ChatRequest, on_update: UpdateSink<'_>) -> Result<Completion> {
        let body = self.encode(request)?;
        self.transport
            .stream::<ReplyAssembler>(&body, request, on_update)
            .await
    }

    /// The body bytes, built once per call and resent unchanged on retry.
    pub(crate) fn encode(&self, request: &ChatRequest) -> Result<Vec<u8>> {
        let tools = request
            .tools
            .as_deref()
            .filter(|raw| raw.get().trim() != "[]");
        let mut messages: Vec<WireMessage<'_>> =
            request.messages.iter().map(WireMessage::from).collect();
        if let Some(marker) = &self.cache_control {
            mark_breakpoints(&mut messages, marker);
        }
        let wire = WireRequest {
            model: &request.model,
            messages,
            tools,
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            max_tokens: self.max_output_tokens,
            prompt_cache_key: self.prompt_cache_key.then_some(request.session_id.as_str()),
            reasoning_effort: self.reasoning_effort.as_deref(),
        };
        Ok(serde_json::to_vec(&wire)?)
    }
}

/// Puts the markers where the Anthropic wire puts them: one on the system
/// prompt (caching tools and system), the others on the last messages that
/// have text, so each request still carries the previous request's marked
/// end. Never more than four; messages without text cannot carry one.
fn mark_breakpoints<'a>(messages: &mut [WireMessage<'a>], marker: &'a Value) {
    let mut left = MAX_BREAKPOINTS;
    let mark = |message: &mut WireMessage<'a>| {
        if let Some(WireContent::Text(text)) = message.content
            && !text.is_empty()
        {
            message.content = Some(WireContent::Marked([MarkedText {
                kind: "text",
                text,
                cache_control: marker,
            }]));
            return true;
        }
        false
    };
    let (first, rest) = match messages.split_first_mut() {
        Some((first, rest)) if first.role == Role::System => (Some(first), rest),
        _ => (None, &mut messages[..]),
    };
    if let Some(system) = first
        && mark(system)
    {
        left -= 1;
    }
    for message in rest.iter_mut().rev() {
        if left == 0 {
            break;
        }
        if mark(message) {
            left -= 1;
        }
    }
}

impl ModelClient for ChatCompletionsClient {
    fn stream_chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_update: UpdateSink<'a>,
    ) -> ModelFuture<'a> {
        Box::pin(self.send(request, on_update))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RequestPurpose, freeze_tools};
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    fn client() -> ChatCompletionsClient {
        ChatCompletionsClient::new(ClientSettings::new("http://127.0.0.1:1/v1")).unwrap()
    }

    fn request(tools: Option<super::super::FrozenTools>) -> ChatRequest {
        ChatRequest {
            model: "m".into(),
            messages: vec![ChatMessage::system("s"), ChatMessage::user("u")],
            tools,
            purpose: RequestPurpose::Turn,
            session_id: "sess".into(),
        }
    }

    #[test]
    fn the_body_streams_with_usage_and_embeds_the_frozen_tools_verbatim() {
        let tools = freeze_tools(&[
            json!({"type": "function", "function": {"name": "z", "parameters": {"b": 1, "a": 2}}}),
        ])
        .unwrap();
        let body = String::from_utf8(client().encode(&request(tools.clone())).unwrap()).unwrap();
        assert!(body.contains(tools.unwrap().get()), "{body}");
        let value: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(value["stream"], true);
        assert_eq!(value["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            value["max_tokens"],
            json!(super::super::transport::DEFAULT_MAX_OUTPUT_TOKENS),
            "a cap is sent even when the provider sets none"
        );
        assert_eq!(
            value["messages"][1],
            json!({"role": "user", "content": "u"})
        );
    }

    #[test]
    fn empty_or_missing_tools_are_omitted() {
        let empty: super::super::FrozenTools =
            std::sync::Arc::from(serde_json::value::to_raw_value(&json!([])).unwrap());
        for tools in [None, Some(empty)] {
            let value: Value =
                serde_json::from_slice(&client().encode(&request(tools)).unwrap()).unwrap();
            assert!(value.get("tools").is_none(), "{value}");
        }
    }

    #[test]
    fn base_urls_are_checked_and_named_by_host_and_port() {
        let client =
            ChatCompletionsClient::new(ClientSettings::new("http://127.0.0.1:8080/v1/")).unwrap();
        assert_eq!(
            client.endpoint().as_str(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(client.transport.target, "127.0.0.1:8080");
        let https =
            ChatCompletionsClient::new(ClientSettings::new("https://api.example.org/v1")).unwrap();
        assert_eq!(https.transport.target, "api.example.org:443");
        for bad in ["127.0.0.1:8080/v1", "ftp://host/v1", "not a url"] {
            let err = ChatCompletionsClient::new(ClientSettings::new(bad)).unwrap_err();
            assert!(
                matches!(err, crate::ModelError::InvalidBaseUrl { .. }),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn reasoning_stays_out_and_the_cache_key_is_opt_in() {
        let mut settings = ClientSettings::new("http://127.0.0.1:1/v1");
        let plain = ChatCompletionsClient::new(settings.clone()).unwrap();
        let mut req = request(None);
        req.messages
            .push(ChatMessage::assistant("a", vec![]).with_reasoning(vec![
                super::super::ReasoningItem {
                    wire: knack_config::Wire::Anthropic,
                    item: json!({"type": "thinking"}),
                },
            ]));
        let body = String::from_utf8(plain.encode(&req).unwrap()).unwrap();
        assert!(
            !body.contains("thinking")
                && !body.contains("prompt_cache_key")
                && !body.contains("reasoning_effort"),
            "{body}"
        );
        settings.prompt_cache_key = Some(true);
        settings.max_output_tokens = Some(64);
        settings.reasoning_effort = Some("low".into());
        let keyed = ChatCompletionsClient::new(settings).unwrap();
        let value: Value = serde_json::from_slice(&keyed.encode(&req).unwrap()).unwrap();
        assert_eq!(value["prompt_cache_key"], "sess");
        assert_eq!(value["max_tokens"], 64);
        assert_eq!(value["reasoning_effort"], "low");
    }

    #[test]
    fn cache_control_markers_are_opt_in_and_at_most_four() {
        let mut req = request(None);
        for i in 0..3 {
            req.messages.push(ChatMessage::assistant(
                "",
                vec![ToolCall::function(format!("c{i}"), "skills_list", "{}")],
            ));
            req.messages
                .push(ChatMessage::tool_result(format!("c{i}"), "{\"ok\":1}"));
        }
        let plain = String::from_utf8(client().encode(&req).unwrap()).unwrap();
        assert!(!plain.contains("cache_control"), "{plain}");

        let mut settings = ClientSettings::new("http://127.0.0.1:1/v1");
        settings.cache_control = true;
        settings.cache_ttl = CacheTtl::OneHour;
        let marked = ChatCompletionsClient::new(settings).unwrap();
        let value: Value = serde_json::from_slice(&marked.encode(&req).unwrap()).unwrap();
        let marker = json!({"type": "ephemeral", "ttl": "1h"});
        assert_eq!(
            value["messages"][0],
            json!({"role": "system", "content": [{"type": "text", "text": "s", "cache_control": marker}]})
        );
        let marked_at: Vec<usize> = value["messages"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, m)| m["content"][0].get("cache_control").is_some())
            .map(|(i, _)| i)
            .collect();
        // System, then the last three messages with text (calls have none).
        assert_eq!(marked_at, [0, 3, 5, 7]);
        assert_eq!(value["messages"][2]["content"], Value::Null);
        assert_eq!(
            value["messages"][1],
            json!({"role": "user", "content": "u"})
        );
    }
}
