//! Stream chunks as servers really send them, and their assembly into one completion.
//! Every field is optional and loosely typed, because local servers bend the OpenAI shapes.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::StreamUpdate;
use super::transport::{StreamAssembler, parse_chunk, preview};
use super::types::{Completion, ToolCall, Usage};
use crate::error::{ModelError, Result};

/// One `data:` payload of a Chat Completions stream.
///
/// No enums and no `deny_unknown_fields`: a proxy that sends
/// `finish_reason: ""` or an unexpected `service_tier` must not break a turn.
#[derive(Debug, Deserialize)]
struct ChunkWire {
    #[serde(default)]
    choices: Option<Vec<ChoiceWire>>,
    #[serde(default)]
    usage: Option<UsageWire>,
    /// Some gateways report failures inside a 200 stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ChoiceWire {
    #[serde(default)]
    delta: Option<DeltaWire>,
    /// The whole message, when a server answers without streaming.
    #[serde(default)]
    message: Option<DeltaWire>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct DeltaWire {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDeltaWire>>,
    /// Fields beyond the OpenAI shape, e.g. `reasoning_content` from
    /// llama.cpp, vLLM and DeepSeek, kept so reasoning can be shown.
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDeltaWire {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDeltaWire>,
}

#[derive(Debug, Deserialize)]
struct FunctionDeltaWire {
    #[serde(default)]
    name: Option<String>,
    /// A string piece normally; a few servers send the whole object.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct UsageWire {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptTokensDetailsWire>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionTokensDetailsWire>,
}

#[derive(Debug, Deserialize)]
struct CompletionTokensDetailsWire {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct PromptTokensDetailsWire {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Debug)]
struct PartialCall {
    index: u32,
    id: Option<String>,
    name: String,
    arguments: String,
    announced: bool,
}

/// Builds one [`Completion`] from the stream of one attempt.
#[derive(Debug, Default)]
pub(crate) struct ReplyAssembler {
    content: String,
    calls: Vec<PartialCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    done: bool,
    /// Whether anything was handed to the caller (it must be told to reset on retry).
    emitted: bool,
}

impl StreamAssembler for ReplyAssembler {
    /// Takes one SSE `data` payload.
    fn accept(&mut self, data: &str, sink: &mut (dyn FnMut(StreamUpdate) + Send)) -> Result<()> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        // A chunk that is not JSON may have carried text or a tool call;
        // going on without it would give a silently wrong reply.
        let chunk: ChunkWire = parse_chunk(data)?;
        let choices = chunk.choices.unwrap_or_default();
        if let Some(error) = chunk.error
            && choices.is_empty()
        {
            return Err(ModelError::StreamReportedError {
                message: error_text(&error),
            });
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                prompt_tokens: usage.prompt_tokens.unwrap_or(0),
                completion_tokens: usage.completion_tokens.unwrap_or(0),
                cached_tokens: usage.prompt_tokens_details.and_then(|d| d.cached_tokens),
                reasoning_tokens: usage
                    .completion_tokens_details
                    .and_then(|d| d.reasoning_tokens),
                ..Usage::default()
            });
        }
        for choice in choices {
            if let Some(delta) = choice.delta {
                self.apply_delta(delta, false, sink);
            }
            if let Some(message) = choice.message {
                self.apply_delta(message, true, sink);
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    /// Takes a whole non-streamed JSON reply (servers that ignore `stream: true`).
    fn accept_whole(
        &mut self,
        body: &str,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<()> {
        if serde_json::from_str::<serde::de::IgnoredAny>(body).is_err() {
            return Err(ModelError::MalformedStream {
                detail: format!("the reply is not JSON: {}", preview(body)),
            });
        }
        self.accept(body, sink)?;
        self.done = true;
        Ok(())
    }

    /// True once `[DONE]` arrived; nothing more will follow.
    fn saw_done(&self) -> bool {
        self.done
    }

    /// True once the server said the reply is over.
    fn is_complete(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    fn emitted(&self) -> bool {
        self.emitted
    }

    fn finish(self) -> Result<Completion> {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|call| {
                let id = call.id.unwrap_or_else(|| format!("call_{}", call.index));
                // An empty argument string means "no arguments" to every server we know.
                let arguments = if call.arguments.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments
                };
                ToolCall::function(id, call.name, arguments)
            })
            .collect();
        Ok(Completion {
            content: self.content,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
            reasoning: Vec::new(),
        })
    }
}

impl ReplyAssembler {
    fn apply_delta(
        &mut self,
        delta: DeltaWire,
        whole_message: bool,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) {
        let reasoning = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|key| delta.extra.get(*key).and_then(Value::as_str));
        if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
            self.emitted = true;
            sink(StreamUpdate::ReasoningDelta(reasoning.to_owned()));
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.content.push_str(&text);
            self.emitted = true;
            sink(StreamUpdate::TextDelta(text));
        }
        for (position, call_delta) in delta.tool_calls.into_iter().flatten().enumerate() {
            // In a whole message the calls are complete and may lack an index.
            let fallback_index = whole_message.then_some(position as u32);
            self.apply_tool_call(call_delta, fallback_index, sink);
        }
    }

    fn apply_tool_call(
        &mut self,
        delta: ToolCallDeltaWire,
        fallback_index: Option<u32>,
        sink: &mut (dyn FnMut(StreamUpdate) + Send),
    ) {
        let slot = self.slot_for(delta.index.or(fallback_index), delta.id.as_deref());
        let call = &mut self.calls[slot];
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = Some(id);
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name {
                call.name.push_str(&name);
            }
            match function.arguments {
                Some(Value::String(piece)) => call.arguments.push_str(&piece),
                Some(Value::Null) | None => {}
                Some(whole) => call.arguments.push_str(&whole.to_string()),
            }
        }
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            self.emitted = true;
            sink(StreamUpdate::ToolCallStarted {
                id: call.id.clone().unwrap_or_default(),
                name: call.name.clone(),
            });
        }
    }

    /// Where a tool-call delta belongs: by `index`; without one, a new id opens
    /// a new call and anything else continues the latest call.
    fn slot_for(&mut self, index: Option<u32>, id: Option<&str>) -> usize {
        let existing = match (index, id) {
            (Some(index), _) => self.calls.iter().position(|c| c.index == index),
            (None, Some(id)) if !id.is_empty() => {
                self.calls.iter().position(|c| c.id.as_deref() == Some(id))
            }
            (None, _) => self.calls.len().checked_sub(1),
        };
        if let Some(slot) = existing {
            return slot;
        }
        let index =
            index.unwrap_or_else(|| self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0));
        self.calls.push(PartialCall {
            index,
            id: None,
            name: String::new(),
            arguments: String::new(),
            announced: false,
        });
        self.calls.sort_by_key(|c| c.index);
        self.calls
            .iter()
            .position(|c| c.index == index)
            .unwrap_or(0)
    }
}

fn error_text(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| error.as_str().map(str::to_owned))
        .unwrap_or_else(|| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn assemble(frames: &[&str]) -> (Result<Completion>, Vec<StreamUpdate>) {
        let mut updates = Vec::new();
        let mut assembler = ReplyAssembler::default();
        for frame in frames {
            if let Err(err) = assembler.accept(frame, &mut |u| updates.push(u)) {
                return (Err(err), updates);
            }
        }
        (assembler.finish(), updates)
    }

    #[test]
    fn interleaved_tool_calls_are_rebuilt_by_index() {
        let (completion, updates) = assemble(&[
            r#"{"choices":[{"delta":{"role":"assistant","tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"skill_view","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"skills_list","arguments":"{\"ca"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"name\":\"x\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"t\":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        let completion = completion.unwrap();
        assert_eq!(
            completion.tool_calls,
            vec![
                ToolCall::function("a", "skills_list", r#"{"cat":1}"#),
                ToolCall::function("b", "skill_view", r#"{"name":"x"}"#),
            ]
        );
        let started: Vec<_> = updates
            .iter()
            .filter(|u| matches!(u, StreamUpdate::ToolCallStarted { .. }))
            .collect();
        assert_eq!(started.len(), 2);
    }

    #[test]
    fn calls_without_index_or_id_still_assemble() {
        let (completion, _) = assemble(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"memory","arguments":{"action":"add"}}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"second","function":{"name":"skills_list"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        let completion = completion.unwrap();
        assert_eq!(
            completion.tool_calls,
            vec![
                ToolCall::function("call_0", "memory", r#"{"action":"add"}"#),
                ToolCall::function("second", "skills_list", "{}"),
            ]
        );
    }

    #[test]
    fn usage_reasoning_and_lenient_fields() {
        let (completion, updates) = assemble(&[
            r#"{"choices":[{"delta":{"reasoning_content":"hmm"},"finish_reason":null}],"service_tier":"on_demand"}"#,
            r#"{"choices":[{"delta":{"content":"hi"},"finish_reason":""}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":8}}}"#,
        ]);
        let completion = completion.unwrap();
        assert_eq!(completion.content, "hi");
        assert_eq!(completion.finish_reason, None);
        assert_eq!(
            completion.usage,
            Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 2,
                cached_tokens: Some(8),
                ..Usage::default()
            })
        );
        assert_eq!(updates[0], StreamUpdate::ReasoningDelta("hmm".into()));
    }

    #[test]
    fn a_chunk_that_is_not_json_is_a_retryable_error_never_skipped() {
        let (completion, _) = assemble(&[
            r#"{"choices":[{"delta":{"content":"ok"}}]}"#,
            "{not json",
            r#"{"choices":[{"delta":{"content":"!"}}]}"#,
        ]);
        let err = completion.unwrap_err();
        assert!(matches!(err, ModelError::MalformedChunk { .. }), "{err}");
        assert!(err.to_string().contains("{not json"), "{err}");
        assert!(err.is_retryable());
    }

    #[test]
    fn an_error_object_in_the_stream_is_an_error() {
        let (completion, _) = assemble(&[r#"{"error":{"message":"upstream overloaded"}}"#]);
        let err = completion.unwrap_err();
        assert!(err.to_string().contains("upstream overloaded"), "{err}");
        assert!(err.is_retryable());
    }

    #[test]
    fn a_whole_json_reply_is_accepted() {
        let mut assembler = ReplyAssembler::default();
        let mut updates = Vec::new();
        assembler
            .accept_whole(
                r#"{"choices":[{"message":{"role":"assistant","content":"full","tool_calls":[
                    {"id":"x","type":"function","function":{"name":"a","arguments":"{}"}},
                    {"id":"y","type":"function","function":{"name":"b","arguments":"{}"}}]},
                   "finish_reason":"tool_calls"}]}"#,
                &mut |u| updates.push(u),
            )
            .unwrap();
        assert!(assembler.is_complete());
        let completion = assembler.finish().unwrap();
        assert_eq!(completion.content, "full");
        assert_eq!(completion.tool_calls.len(), 2);
        assert_eq!(updates[0], StreamUpdate::TextDelta("full".into()));
    }
}
