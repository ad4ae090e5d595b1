//! The conversation as the model sees it: messages, tool calls, one request, one completion.
//! These serialize to the OpenAI Chat Completions shapes and are also what the session stores.

use std::sync::Arc;

use knack_config::{Prices, Wire};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Reasoning the provider asked to get back with the next request
    /// (assistant messages only); the Chat Completions wire never sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Vec<ReasoningItem>>,
}

/// A piece of reasoning that must go back to the provider unchanged: an
/// Anthropic thinking block with its signature, or a Responses reasoning item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasoningItem {
    /// The wire that produced it; the other wires leave it out.
    pub wire: Wire,
    /// The block or item exactly as the provider sent it.
    pub item: Value,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }

    /// An assistant message as the model produced it; empty text and an empty
    /// call list are left out, as servers expect.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        let content = content.into();
        Self {
            role: Role::Assistant,
            content: (!content.is_empty() || tool_calls.is_empty()).then_some(content),
            tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
            tool_call_id: None,
            reasoning: None,
        }
    }

    /// The same message carrying `reasoning` to replay (none when empty).
    pub fn with_reasoning(mut self, reasoning: Vec<ReasoningItem>) -> Self {
        self.reasoning = (!reasoning.is_empty()).then_some(reasoning);
        self
    }

    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: None,
            tool_call_id: Some(call_id.into()),
            reasoning: None,
        }
    }

    fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(content.into()),
            tool_calls: None,
            tool_call_id: None,
            reasoning: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    /// Always `"function"` in Chat Completions.
    #[serde(rename = "type")]
    pub r#type: String,
    pub function: FunctionCall,
}

impl ToolCall {
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            r#type: "function".into(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// The arguments exactly as the model wrote them (usually a JSON object).
    pub arguments: String,
}

/// Why a request is made; sent as `X-Knack-Purpose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestPurpose {
    Turn,
    Review,
    /// Summarising the history to fit the context window.
    Compact,
}

impl RequestPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Turn => "turn",
            Self::Review => "review",
            Self::Compact => "compact",
        }
    }

    /// The purpose [`Self::as_str`] names.
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Turn, Self::Review, Self::Compact]
            .into_iter()
            .find(|p| p.as_str() == name)
    }
}

/// Tool specs serialized once per session: every request carries these exact
/// bytes, which keeps the server's prompt cache warm.
pub type FrozenTools = Arc<RawValue>;

/// Serializes tool specs once; `None` when there are none, so requests omit `tools`.
pub fn freeze_tools<T: Serialize>(specs: &[T]) -> Result<Option<FrozenTools>> {
    if specs.is_empty() {
        return Ok(None);
    }
    let raw = serde_json::value::to_raw_value(specs)?;
    Ok(Some(Arc::from(raw)))
}

/// Everything one model request needs.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    pub tools: Option<FrozenTools>,
    pub purpose: RequestPurpose,
    pub session_id: String,
}

/// What one request used, the same record on every wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Every prompt token: fresh ones, those read from the cache and those
    /// written to it (Anthropic reports the three apart; they are summed here).
    pub prompt_tokens: u64,
    /// Every generated token, reasoning included.
    pub completion_tokens: u64,
    /// Prompt tokens the server served from its cache, when it says.
    pub cached_tokens: Option<u64>,
    /// Prompt tokens written to the cache (Anthropic), when it says.
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
    /// Generated tokens spent on reasoning, when the server says.
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
    /// What the request cost, when prices are configured.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Prompt tokens neither read from nor written to the cache.
    pub fn fresh_input_tokens(&self) -> u64 {
        self.prompt_tokens
            .saturating_sub(self.cached_tokens.unwrap_or(0))
            .saturating_sub(self.cache_write_tokens.unwrap_or(0))
    }

    /// The cost in USD at `prices` (per million tokens); cache reads and
    /// writes fall back to the input price when theirs is not given.
    pub fn cost(&self, prices: &Prices) -> f64 {
        let per_token = |price: f64, tokens: u64| price * tokens as f64 / 1_000_000.0;
        per_token(prices.input, self.fresh_input_tokens())
            + per_token(
                prices.cache_read.unwrap_or(prices.input),
                self.cached_tokens.unwrap_or(0),
            )
            + per_token(
                prices.cache_write.unwrap_or(prices.input),
                self.cache_write_tokens.unwrap_or(0),
            )
            + per_token(prices.output, self.completion_tokens)
    }
}

/// One finished model reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub finish_reason: Option<String>,
    /// Reasoning to send back with the next request (thinking blocks, reasoning items).
    pub reasoning: Vec<ReasoningItem>,
}

impl Completion {
    /// The reply as the assistant message to append to the conversation.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::assistant(self.content.clone(), self.tool_calls.clone())
            .with_reasoning(self.reasoning.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn messages_serialize_without_absent_fields() {
        let cases = [
            (
                ChatMessage::system("sys"),
                json!({"role": "system", "content": "sys"}),
            ),
            (
                ChatMessage::assistant("", vec![ToolCall::function("c1", "skills_list", "{}")]),
                json!({"role": "assistant", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "skills_list", "arguments": "{}"}}
                ]}),
            ),
            (
                ChatMessage::assistant("", vec![]),
                json!({"role": "assistant", "content": ""}),
            ),
            (
                ChatMessage::tool_result("c1", "{\"success\":true}"),
                json!({"role": "tool", "content": "{\"success\":true}", "tool_call_id": "c1"}),
            ),
        ];
        for (message, expected) in cases {
            let value = serde_json::to_value(&message).unwrap();
            assert_eq!(value, expected);
            let back: ChatMessage = serde_json::from_value(value).unwrap();
            assert_eq!(back, message);
        }
    }

    #[test]
    fn usage_splits_fresh_input_and_prices_each_part() {
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 100_000,
            cached_tokens: Some(600_000),
            cache_write_tokens: Some(300_000),
            ..Usage::default()
        };
        assert_eq!(usage.fresh_input_tokens(), 100_000);
        let prices = Prices {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: Some(3.75),
        };
        let cost = usage.cost(&prices);
        assert!((cost - (0.3 + 0.18 + 1.125 + 1.5)).abs() < 1e-9, "{cost}");
        let plain = Prices {
            input: 1.0,
            output: 2.0,
            ..Prices::default()
        };
        assert!((usage.cost(&plain) - (1.0 + 0.2)).abs() < 1e-9);
    }

    #[test]
    fn reasoning_is_kept_on_assistant_messages_only_when_present() {
        let item = ReasoningItem {
            wire: Wire::Anthropic,
            item: json!({"type": "thinking", "thinking": "t", "signature": "s"}),
        };
        let message = ChatMessage::assistant("a", vec![]).with_reasoning(vec![item.clone()]);
        assert_eq!(message.reasoning, Some(vec![item]));
        assert_eq!(
            ChatMessage::assistant("a", vec![])
                .with_reasoning(vec![])
                .reasoning,
            None
        );
    }

    #[test]
    fn frozen_tools_keep_their_bytes_and_vanish_when_empty() {
        let specs = vec![json!({"type": "function", "function": {"name": "b", "parameters": {}}})];
        let frozen = freeze_tools(&specs).unwrap().unwrap();
        assert_eq!(frozen.get(), serde_json::to_string(&specs).unwrap());
        assert!(freeze_tools::<serde_json::Value>(&[]).unwrap().is_none());
    }
}
