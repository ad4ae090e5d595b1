//! What the mock model server says back to one request, and how it renders as SSE frames
//! on each wire (Chat Completions, Anthropic Messages, OpenAI Responses), broken ones included.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::server::ModelWire;

/// One scripted answer to one `/chat/completions` request.
///
/// A reply is either a status error (`status` set) or a streamed completion
/// made of optional reasoning, text and tool calls. The struct also
/// deserializes from the JSON script format of the `mock-model-server` binary,
/// so every field has a plain serde shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScriptedReply {
    /// An HTTP error status instead of a stream.
    pub status: Option<u16>,
    /// `Retry-After` header (seconds) sent with a status error.
    pub retry_after: Option<u64>,
    /// The `error.message` of a status error's JSON body.
    pub error_message: Option<String>,
    pub text: Option<String>,
    /// Streamed as `delta.reasoning_content` (a field local servers add) on
    /// the chat wire, as a thinking block signed `sig:<text>` on the
    /// Anthropic wire, and as a reasoning item whose encrypted content is
    /// `enc:<text>` on the Responses wire.
    pub reasoning: Option<String>,
    pub tool_calls: Vec<ScriptedToolCall>,
    pub usage: Option<ScriptedUsage>,
    /// Overrides the `finish_reason` (default `stop`, or `tool_calls`).
    pub finish_reason: Option<String>,
    /// Send only this many SSE frames, then close the socket without `[DONE]`.
    pub cut_after_chunks: Option<usize>,
    /// Send only this many SSE frames, then keep the connection open and
    /// silent until the server is dropped: a stall no timeout can outwait,
    /// so timeout tests do not depend on how fast the machine is.
    pub stall_after_chunks: Option<usize>,
    /// Pause before each SSE frame.
    pub chunk_delay_ms: u64,
    /// Pause before the response headers.
    pub first_byte_delay_ms: u64,
    /// Insert a frame whose data is not JSON after the first frame.
    pub invalid_json_chunk: bool,
    /// Insert a frame with `"choices": []` after the first frame.
    pub empty_choices_chunk: bool,
    /// Send exactly these `data:` payloads (then `[DONE]`) instead of rendering.
    pub raw_frames: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScriptedToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScriptedUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: Option<u64>,
    /// Prompt tokens written to the cache (reported on the Anthropic wire only).
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
}

/// How many pieces a text or an argument string is streamed in.
const PIECES: usize = 3;

impl ScriptedReply {
    /// A streamed assistant text, split into several content deltas.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// Streamed tool calls `(id, name, arguments)`, each with its own `index`
    /// and its arguments split across several chunks.
    pub fn tool_calls<I, S1, S2, S3>(calls: I) -> Self
    where
        I: IntoIterator<Item = (S1, S2, S3)>,
        S1: Into<String>,
        S2: Into<String>,
        S3: Into<String>,
    {
        Self::default().with_tool_calls(calls)
    }

    /// An HTTP error with a JSON body `{"error": {"message": ...}}`.
    pub fn status(code: u16) -> Self {
        Self {
            status: Some(code),
            ..Self::default()
        }
    }

    /// Exactly these `data:` payloads, followed by `[DONE]`.
    pub fn raw_frames<I: IntoIterator<Item = S>, S: Into<String>>(frames: I) -> Self {
        Self {
            raw_frames: Some(frames.into_iter().map(Into::into).collect()),
            ..Self::default()
        }
    }

    pub fn with_tool_calls<I, S1, S2, S3>(mut self, calls: I) -> Self
    where
        I: IntoIterator<Item = (S1, S2, S3)>,
        S1: Into<String>,
        S2: Into<String>,
        S3: Into<String>,
    {
        self.tool_calls.extend(
            calls
                .into_iter()
                .map(|(id, name, arguments)| ScriptedToolCall {
                    id: id.into(),
                    name: name.into(),
                    arguments: arguments.into(),
                }),
        );
        self
    }

    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// A final chunk with `choices: []` and usage, as `include_usage` asks for.
    pub fn with_usage(mut self, prompt: u64, completion: u64, cached: u64) -> Self {
        self.usage = Some(ScriptedUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: Some(cached),
            cache_write_tokens: None,
        });
        self
    }

    /// Usage with prompt tokens written to the cache too (Anthropic reports them).
    pub fn with_cache_usage(mut self, prompt: u64, completion: u64, read: u64, write: u64) -> Self {
        self.usage = Some(ScriptedUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: Some(read),
            cache_write_tokens: Some(write),
        });
        self
    }

    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    pub fn with_error_message(mut self, message: impl Into<String>) -> Self {
        self.error_message = Some(message.into());
        self
    }

    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    pub fn cut_after_chunks(mut self, frames: usize) -> Self {
        self.cut_after_chunks = Some(frames);
        self
    }

    pub fn stall_after_chunks(mut self, frames: usize) -> Self {
        self.stall_after_chunks = Some(frames);
        self
    }

    pub fn chunk_delay_ms(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    pub fn first_byte_delay_ms(mut self, ms: u64) -> Self {
        self.first_byte_delay_ms = ms;
        self
    }

    pub fn with_invalid_json_chunk(mut self) -> Self {
        self.invalid_json_chunk = true;
        self
    }

    pub fn with_empty_choices_chunk(mut self) -> Self {
        self.empty_choices_chunk = true;
        self
    }

    /// The `data:` payloads of the stream, in order, ending with `[DONE]`.
    pub fn frames(&self) -> Vec<String> {
        let mut frames = match &self.raw_frames {
            Some(raw) => raw.clone(),
            None => self.rendered_frames(),
        };
        frames.push("[DONE]".to_owned());
        frames
    }

    /// The `data:` payloads of the stream on `wire`, in order.
    pub fn frames_for(&self, wire: ModelWire) -> Vec<String> {
        match wire {
            ModelWire::Chat => return self.frames(),
            _ if self.raw_frames.is_some() => return self.raw_frames.clone().unwrap_or_default(),
            ModelWire::Anthropic => {}
            ModelWire::Responses => {
                return self.broken(self.responses_frames(), "response.in_progress");
            }
        }
        self.broken(self.anthropic_frames(), "ping")
    }

    /// Inserts the scripted broken frames after the first one; `harmless` is
    /// an event the wire allows anywhere (the counterpart of empty choices).
    fn broken(&self, mut frames: Vec<String>, harmless: &str) -> Vec<String> {
        if self.empty_choices_chunk {
            frames.insert(1.min(frames.len()), json!({ "type": harmless }).to_string());
        }
        if self.invalid_json_chunk {
            frames.insert(
                1.min(frames.len()),
                r#"{"type":"content_block_delta","index":"#.to_owned(),
            );
        }
        frames
    }

    fn anthropic_frames(&self) -> Vec<String> {
        let mut frames = Vec::new();
        let mut message = json!({"id": "msg_mock", "type": "message", "role": "assistant",
            "model": "mock-model", "content": [], "stop_reason": null});
        if let Some(usage) = self.usage {
            let read = usage.cached_tokens.unwrap_or(0);
            let write = usage.cache_write_tokens.unwrap_or(0);
            message["usage"] = json!({
                "input_tokens": usage.prompt_tokens.saturating_sub(read + write),
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write,
                "output_tokens": 1,
            });
        }
        frames.push(json!({"type": "message_start", "message": message}));
        let mut index = 0;
        if let Some(reasoning) = &self.reasoning {
            frames.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}}));
            for piece in split_pieces(reasoning) {
                frames.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "thinking_delta", "thinking": piece}}));
            }
            frames.push(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "signature_delta", "signature": format!("sig:{reasoning}")}}));
            frames.push(json!({"type": "content_block_stop", "index": index}));
            index += 1;
        }
        if let Some(text) = &self.text {
            frames.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}));
            for piece in split_pieces(text) {
                frames.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": piece}}));
            }
            frames.push(json!({"type": "content_block_stop", "index": index}));
            index += 1;
        }
        for call in &self.tool_calls {
            frames.push(json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}));
            for piece in split_pieces(&call.arguments) {
                frames.push(json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}));
            }
            frames.push(json!({"type": "content_block_stop", "index": index}));
            index += 1;
        }
        let stop_reason = match self.finish_reason.as_deref() {
            Some("stop") => "end_turn".to_owned(),
            Some("tool_calls") => "tool_use".to_owned(),
            Some("length") => "max_tokens".to_owned(),
            Some(other) => other.to_owned(),
            None if self.tool_calls.is_empty() => "end_turn".to_owned(),
            None => "tool_use".to_owned(),
        };
        let mut delta = json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null}});
        if let Some(usage) = self.usage {
            delta["usage"] = json!({"output_tokens": usage.completion_tokens});
        }
        frames.push(delta);
        frames.push(json!({"type": "message_stop"}));
        frames.iter().map(Value::to_string).collect()
    }

    fn responses_frames(&self) -> Vec<String> {
        let mut frames = vec![json!({"type": "response.created",
            "response": {"id": "resp_mock", "status": "in_progress"}})];
        let mut index = 0;
        if let Some(reasoning) = &self.reasoning {
            let id = "rs_mock";
            frames.push(
                json!({"type": "response.output_item.added", "output_index": index,
                "item": {"type": "reasoning", "id": id, "summary": []}}),
            );
            for piece in split_pieces(reasoning) {
                frames.push(json!({"type": "response.reasoning_summary_text.delta",
                    "item_id": id, "output_index": index, "summary_index": 0, "delta": piece}));
            }
            frames.push(
                json!({"type": "response.output_item.done", "output_index": index,
                "item": {"type": "reasoning", "id": id,
                         "summary": [{"type": "summary_text", "text": reasoning}],
                         "encrypted_content": format!("enc:{reasoning}")}}),
            );
            index += 1;
        }
        if let Some(text) = &self.text {
            let id = "msg_mock";
            frames.push(
                json!({"type": "response.output_item.added", "output_index": index,
                "item": {"type": "message", "id": id, "role": "assistant", "content": []}}),
            );
            for piece in split_pieces(text) {
                frames.push(json!({"type": "response.output_text.delta", "item_id": id,
                    "output_index": index, "content_index": 0, "delta": piece}));
            }
            frames.push(
                json!({"type": "response.output_item.done", "output_index": index,
                "item": {"type": "message", "id": id, "role": "assistant", "status": "completed",
                         "content": [{"type": "output_text", "text": text, "annotations": []}]}}),
            );
            index += 1;
        }
        for call in &self.tool_calls {
            let id = format!("fc_{}", call.id);
            let item = |arguments: &str| {
                json!({"type": "function_call", "id": id,
                "call_id": call.id, "name": call.name, "arguments": arguments})
            };
            frames.push(json!({"type": "response.output_item.added", "output_index": index, "item": item("")}));
            for piece in split_pieces(&call.arguments) {
                frames.push(json!({"type": "response.function_call_arguments.delta",
                    "item_id": id, "output_index": index, "delta": piece}));
            }
            frames.push(json!({"type": "response.function_call_arguments.done",
                "item_id": id, "output_index": index, "arguments": call.arguments}));
            frames.push(
                json!({"type": "response.output_item.done", "output_index": index,
                "item": item(&call.arguments)}),
            );
            index += 1;
        }
        let status = if self.finish_reason.as_deref() == Some("length") {
            "incomplete"
        } else {
            "completed"
        };
        let mut response = json!({"id": "resp_mock", "status": status});
        if let Some(usage) = self.usage {
            response["usage"] = json!({
                "input_tokens": usage.prompt_tokens,
                "input_tokens_details": {"cached_tokens": usage.cached_tokens.unwrap_or(0)},
                "output_tokens": usage.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            });
        }
        let kind = if status == "completed" {
            "response.completed"
        } else {
            "response.incomplete"
        };
        frames.push(json!({"type": kind, "response": response}));
        frames.iter().map(Value::to_string).collect()
    }

    fn rendered_frames(&self) -> Vec<String> {
        let mut deltas: Vec<Value> = Vec::new();
        if let Some(reasoning) = &self.reasoning {
            deltas.extend(
                split_pieces(reasoning)
                    .into_iter()
                    .map(|piece| json!({ "reasoning_content": piece })),
            );
        }
        if let Some(text) = &self.text {
            deltas.extend(
                split_pieces(text)
                    .into_iter()
                    .map(|piece| json!({ "content": piece })),
            );
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            deltas.push(json!({ "tool_calls": [{
                "index": index,
                "id": call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": "" },
            }]}));
            deltas.extend(split_pieces(&call.arguments).into_iter().map(|piece| {
                json!({ "tool_calls": [{ "index": index, "function": { "arguments": piece } }] })
            }));
        }
        if deltas.is_empty() {
            deltas.push(json!({ "content": "" }));
        }
        if let Some(Value::Object(first)) = deltas.first_mut() {
            first.insert("role".into(), json!("assistant"));
        }

        let mut frames: Vec<String> = deltas
            .into_iter()
            .map(|delta| chunk(json!([{ "index": 0, "delta": delta, "finish_reason": null }])))
            .collect();
        let finish = self.finish_reason.clone().unwrap_or_else(|| {
            if self.tool_calls.is_empty() {
                "stop".into()
            } else {
                "tool_calls".into()
            }
        });
        frames.push(chunk(
            json!([{ "index": 0, "delta": {}, "finish_reason": finish }]),
        ));
        if let Some(usage) = self.usage {
            let mut usage_chunk = chunk_value(json!([]));
            usage_chunk["usage"] = json!({
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                "prompt_tokens_details": { "cached_tokens": usage.cached_tokens },
            });
            frames.push(usage_chunk.to_string());
        }
        if self.empty_choices_chunk {
            frames.insert(1, chunk(json!([])));
        }
        if self.invalid_json_chunk {
            frames.insert(
                1,
                r#"{"id":"chatcmpl-mock","choices":[{"delta":"#.to_owned(),
            );
        }
        frames
    }
}

fn chunk_value(choices: Value) -> Value {
    json!({
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "mock-model",
        // A field no client asked for: parsers must tolerate it.
        "system_fingerprint": "fp_mock",
        "choices": choices,
    })
}

fn chunk(choices: Value) -> String {
    chunk_value(choices).to_string()
}

/// Splits into up to [`PIECES`] non-empty pieces on char boundaries; an empty
/// string stays one empty piece so the field still appears on the wire.
fn split_pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = chars.len().div_ceil(PIECES);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(frames: &[String]) -> Vec<Value> {
        frames
            .iter()
            .filter(|f| f.as_str() != "[DONE]")
            .map(|f| serde_json::from_str(f).unwrap())
            .collect()
    }

    #[test]
    fn text_streams_in_several_pieces_that_join_back() {
        let frames = ScriptedReply::text("Hello there, world").frames();
        assert_eq!(frames.last().map(String::as_str), Some("[DONE]"));
        let chunks = parsed(&frames);
        let pieces: Vec<&str> = chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert!(pieces.len() >= 3, "{pieces:?}");
        assert_eq!(pieces.concat(), "Hello there, world");
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        let last = &chunks[chunks.len() - 1];
        assert_eq!(last["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn tool_call_arguments_are_split_and_keyed_by_index() {
        let reply = ScriptedReply::tool_calls([
            ("call_1", "skills_list", r#"{"category":"devops"}"#),
            ("call_2", "skill_view", r#"{"name":"k8s"}"#),
        ])
        .with_usage(10, 5, 4);
        let chunks = parsed(&reply.frames());
        let mut args = [String::new(), String::new()];
        let mut argument_chunks = 0;
        for c in &chunks {
            for tc in c["choices"][0]["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let index = tc["index"].as_u64().unwrap() as usize;
                let piece = tc["function"]["arguments"].as_str().unwrap();
                if !piece.is_empty() {
                    argument_chunks += 1;
                }
                args[index].push_str(piece);
            }
        }
        assert_eq!(args[0], r#"{"category":"devops"}"#);
        assert_eq!(args[1], r#"{"name":"k8s"}"#);
        assert!(argument_chunks >= 4);
        let usage = chunks.last().unwrap();
        assert_eq!(usage["choices"], json!([]));
        assert_eq!(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
        assert_eq!(
            chunks[chunks.len() - 2]["choices"][0]["finish_reason"],
            "tool_calls"
        );
    }

    #[test]
    fn broken_frames_are_inserted_early() {
        let frames = ScriptedReply::text("abc")
            .with_invalid_json_chunk()
            .with_empty_choices_chunk()
            .frames();
        assert!(serde_json::from_str::<Value>(&frames[1]).is_err());
        let empty: Value = serde_json::from_str(&frames[2]).unwrap();
        assert_eq!(empty["choices"], json!([]));
    }

    #[test]
    fn anthropic_frames_carry_signed_thinking_tool_use_and_cache_usage() {
        let reply = ScriptedReply::tool_calls([("t1", "skills_list", "{}")])
            .with_reasoning("hmm")
            .with_cache_usage(100, 5, 60, 30);
        let frames = parsed(&reply.frames_for(ModelWire::Anthropic));
        assert_eq!(frames[0]["message"]["usage"]["input_tokens"], 10);
        assert!(frames.iter().any(|f| f["delta"]["signature"] == "sig:hmm"));
        assert!(
            frames
                .iter()
                .any(|f| f["content_block"]["type"] == "tool_use")
        );
        let delta = &frames[frames.len() - 2];
        assert_eq!(delta["delta"]["stop_reason"], "tool_use");
        assert_eq!(frames.last().unwrap()["type"], "message_stop");
    }

    #[test]
    fn responses_frames_end_with_completed_usage() {
        let reply = ScriptedReply::text("hi")
            .with_reasoning("r")
            .with_usage(50, 2, 40);
        let frames = parsed(&reply.frames_for(ModelWire::Responses));
        let last = frames.last().unwrap();
        assert_eq!(last["type"], "response.completed");
        assert_eq!(
            last["response"]["usage"]["input_tokens_details"]["cached_tokens"],
            40
        );
        assert!(
            frames
                .iter()
                .any(|f| f["item"]["encrypted_content"] == "enc:r")
        );
    }

    #[test]
    fn script_entries_deserialize_from_plain_json() {
        let reply: ScriptedReply =
            serde_json::from_str(r#"{"status": 429, "retry_after": 2}"#).unwrap();
        assert_eq!(reply, ScriptedReply::status(429).retry_after(2));
        let bad = serde_json::from_str::<ScriptedReply>(r#"{"txt": "typo"}"#);
        assert!(bad.is_err());
    }
}
